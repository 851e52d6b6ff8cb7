// authd backup while the server keeps writing; the copy, restored into a fresh data dir,
// serves and logs in.
import { describe, expect, it } from 'bun:test'
import { copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { BINARY, serveBinary, setUpAccount, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD, toResult } from '../helpers'

const testDir = useBinaryAndTempDir()

describe('authd backup', () => {
  it('copies the database during writes; the restored copy serves and logs in', async () => {
    const dir = testDir()
    const data = join(dir, 'data')
    const authd = cliRunner([BINARY], data)
    const { key } = await setUpAccount(authd, 'ada@example.com', PASSWORD)
    const { proc, url } = await serveBinary(data)
    const login = (base: string) =>
      fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD }) }).then(toResult)

    // Writers keep logging in (each login writes a session and an audit entry) during the backup.
    let writing = true
    const writers = Array.from({ length: 3 }, async () => {
      while (writing) await login(url)
    })
    await Bun.sleep(100)
    const backupFile = join(dir, 'authd-backup.db')
    const backup = await authd(['--json', 'backup', backupFile])
    writing = false
    await Promise.all(writers)
    proc.kill('SIGTERM')
    await proc.exited
    expect(backup.code).toBe(0)
    expect(backup.json).toEqual({ file: backupFile, bytes: expect.any(Number) })
    expect((await authd(['backup', backupFile])).stderr).toBe(`authd: ${backupFile} exists (use --force to overwrite it)\n`)

    // Restore: the copy becomes authd.db of an empty data dir.
    const restored = join(dir, 'restored')
    mkdirSync(restored)
    copyFileSync(backupFile, join(restored, 'authd.db'))
    expect(existsSync(join(restored, 'authd.db-wal'))).toBe(false)
    const integrity = await cliRunner([BINARY], restored)(['--json', 'migrate', '--status'])
    expect(integrity.json.pending).toEqual([])
    const again = await serveBinary(restored)
    try {
      expect((await login(again.url)).status).toBe(201)
    } finally {
      again.proc.kill('SIGTERM')
      await again.proc.exited
    }
  }, 60_000)
})
