// Processes starting at the same moment on a new SQLite database (two `authd serve`, or the
// CLI beside the service) all come up: none dies with "database is locked".
import { describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { BINARY, serveBinary, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'

const testDir = useBinaryAndTempDir()

describe('start-up on a new database', () => {
  it('waits for a lock another process holds on the new file, instead of failing', async () => {
    const data = join(testDir(), 'held')
    mkdirSync(data)
    // Another process is half-way through its start: the new file exists and is locked.
    const other = new Database(join(data, 'authd.db'), { create: true })
    other.run('BEGIN EXCLUSIVE')
    const cli = cliRunner([BINARY], data)(['--json', 'tenants', 'create', '--name', 'Acme'])
    await Bun.sleep(700)
    other.run('COMMIT')
    other.close()
    const result = await cli
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.json.name).toBe('Acme')
  })

  it('brings up two servers and a CLI command started together on an empty data dir', async () => {
    for (let round = 0; round < 3; round++) {
      const data = join(testDir(), `race-${round}`)
      mkdirSync(data)
      const authd = cliRunner([BINARY], data)
      const [a, b, cli] = await Promise.all([serveBinary(data), serveBinary(data), authd(['--json', 'tenants', 'create', '--name', 'Acme'])])
      try {
        expect(cli.stderr).toBe('')
        for (const { url } of [a, b]) expect((await fetch(`${url}/readyz`)).status).toBe(200)
        expect((await authd(['--json', 'migrate', '--status'])).json.pending).toEqual([])
      } finally {
        a.proc.kill('SIGTERM')
        b.proc.kill('SIGTERM')
      }
    }
  })
})
