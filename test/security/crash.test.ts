// kill -9 in the middle of refresh rotations: after a restart, every rotation the server
// acknowledged is there (its successor works), and no token it reported spent came back.
import { describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { sha256 } from '../../src/core/secrets'
import { BINARY, serveBinary, setUpAccount, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD, toResult } from '../helpers'

const testDir = useBinaryAndTempDir()

describe('a crash during refresh rotations', () => {
  it('loses no acknowledged rotation and brings back no spent token', async () => {
    const dir = testDir()
    const authd = cliRunner([BINARY], dir)
    const { key } = await setUpAccount(authd, 'ada@example.com', PASSWORD)

    let { proc, url } = await serveBinary(dir)
    const chains = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const login = await fetch(`${url}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD }),
        }).then(toResult)
        return { acknowledged: [login.refreshCookie!] }
      }),
    )
    // Four clients rotate as fast as they can; the server is killed under them.
    let running = true
    const rotations = chains.map(async (chain) => {
      while (running) {
        try {
          const res = await fetch(`${url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${chain.acknowledged.at(-1)}` } }).then(toResult)
          if (res.status === 201) chain.acknowledged.push(res.refreshCookie!)
        } catch {
          return // the connection died with the server
        }
      }
    })
    await Bun.sleep(700)
    proc.kill('SIGKILL')
    await proc.exited
    running = false
    await Promise.all(rotations)
    const acknowledged = chains.reduce((n, c) => n + c.acknowledged.length - 1, 0)
    expect(acknowledged).toBeGreaterThan(20)

    // Every acknowledged successor exists, and every token before it is recorded as spent.
    const db = new Database(join(dir, 'authd.db'), { readonly: true })
    const spentAt = db.query('SELECT spent_at FROM refresh_tokens WHERE token_hash = ?')
    for (const chain of chains) {
      for (const [i, token] of chain.acknowledged.entries()) {
        const row = spentAt.get(sha256(token)) as { spent_at: number | null } | null
        expect(row).not.toBeNull()
        if (i < chain.acknowledged.length - 1) expect(row!.spent_at).not.toBeNull()
      }
    }
    db.close()

    // After a restart, each client's last acknowledged cookie still works.
    ;({ proc, url } = await serveBinary(dir))
    try {
      for (const chain of chains) {
        const res = await fetch(`${url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${chain.acknowledged.at(-1)}` } })
        expect(res.status).toBe(201)
      }
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
    }
  }, 60_000)
})
