// authd backup while the server runs and a write is in progress: the copy holds what was
// committed before it and nothing of the write still open; restored into a fresh data dir,
// it serves and logs in. Every step is an event the test waits for, not a race (an earlier
// version looped logins "while the backup runs", unbounded, and timed out now and then).
import { Database } from 'bun:sqlite'
import { describe, expect, it } from 'bun:test'
import { copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { BINARY, serveBinary, setUpAccount, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD, toResult } from '../helpers'

const testDir = useBinaryAndTempDir()

const countLogins = (file: string) => {
  const db = new Database(file, { readonly: true })
  try {
    return db.query("SELECT type, count(*) AS n FROM audit_events WHERE type IN ('login.succeeded', 'test.uncommitted') GROUP BY type ORDER BY type").all()
  } finally {
    db.close()
  }
}

describe('authd backup', () => {
  it('copies what was committed, not a write in progress; the restored copy serves and logs in', async () => {
    const dir = testDir()
    const data = join(dir, 'data')
    const authd = cliRunner([BINARY], data)
    const { key } = await setUpAccount(authd, 'ada@example.com', PASSWORD)
    const { proc, url } = await serveBinary(data)
    const login = (base: string) =>
      fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD }) }).then(toResult)

    const backupFile = join(dir, 'authd-backup.db')
    const writer = new Database(join(data, 'authd.db'))
    try {
      // Five logins committed by the running server (each a session and an audit entry).
      for (let i = 0; i < 5; i++) expect((await login(url)).status).toBe(201)
      // A write in progress during the whole backup: another process holds the write lock.
      writer.run('BEGIN IMMEDIATE')
      writer.run("INSERT INTO audit_events (at, type) VALUES (0, 'test.uncommitted')")
      const backup = await authd(['--json', 'backup', backupFile])
      expect(backup.code).toBe(0)
      expect(backup.json).toEqual({ file: backupFile, bytes: expect.any(Number) })
      writer.run('COMMIT')
    } finally {
      writer.close()
    }
    expect((await login(url)).status).toBe(201)
    proc.kill('SIGTERM')
    await proc.exited
    expect(countLogins(backupFile)).toEqual([{ type: 'login.succeeded', n: 5 }])
    expect(countLogins(join(data, 'authd.db'))).toEqual([{ type: 'login.succeeded', n: 6 }, { type: 'test.uncommitted', n: 1 }])
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
