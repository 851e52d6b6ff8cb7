// kill -9 in the middle of refresh rotations: after a restart, every rotation the server
// acknowledged is there (its successor works), and no token it reported spent came back.
// And kill -9 in the middle of a batch (group commit): none of the batch was answered, and
// none of it is in the database.
import { describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { refreshTokenKey } from '../../src/core/sessions/refresh-tokens'
import { BINARY, serveBinary, setUpAccount, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD, toResult } from '../helpers'

const testDir = useBinaryAndTempDir()

describe('a crash during refresh rotations', () => {
  it('loses no acknowledged rotation and brings back no spent token', async () => {
    const dir = testDir()
    let { proc, url, sessions } = await serveWithSessions(dir, 4)
    const chains = sessions.map((cookie) => ({ acknowledged: [cookie] }))
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
        const row = spentAt.get(refreshTokenKey(token)) as { spent_at: number | null } | null
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

  it('in the middle of a batch: no rotation of the batch was answered or kept, every acknowledged one is', async () => {
    const dir = join(testDir(), 'batch')
    mkdirSync(dir)
    let { proc, url, sessions: current } = await serveWithSessions(dir, 8)
    proc.kill('SIGTERM')
    await proc.exited

    // This server holds any batch of two or more transactions before its COMMIT. Eight
    // clients rotate together, round after round, until one batch holds several rotations.
    ;({ proc, url } = await serveBinary(dir, { AUTHD_TEST_HOLD_BATCH_OF: '2' }))
    const held = lineOn(proc.stderr as ReadableStream<Uint8Array>, /batch of (\d+) held before COMMIT/)
    let isHeld = false
    void held.then(() => (isHeld = true))
    let acknowledged = 0
    const pending = new Set<number>()
    while (!isHeld) {
      const round = current.map(async (cookie, i) => {
        pending.add(i)
        try {
          const res = await fetch(`${url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } }).then(toResult)
          expect(res.status).toBe(201)
          current[i] = res.refreshCookie!
          acknowledged++
          pending.delete(i)
        } catch {
          // the connection died with the server: not answered
        }
      })
      await Promise.race([Promise.all(round), held])
    }
    const heldTransactions = Number((await held)[1])
    proc.kill('SIGKILL')
    await proc.exited
    await Bun.sleep(50)
    expect(heldTransactions).toBeGreaterThanOrEqual(2)
    // Rotations were in the held batch, unanswered (the batch may also hold another writer's
    // transaction, such as the mail worker claiming its next message).
    expect(pending.size).toBeGreaterThanOrEqual(1)

    // Nothing of the held batch is in the database: every client's last answered cookie is
    // unspent (those in the batch were presented, and their spending is gone with it), and
    // the tokens are the eight logins' plus one per answered rotation.
    const db = new Database(join(dir, 'authd.db'), { readonly: true })
    const spentAt = db.query('SELECT spent_at FROM refresh_tokens WHERE token_hash = ?')
    for (const cookie of current) expect(spentAt.get(refreshTokenKey(cookie))).toEqual({ spent_at: null })
    expect(db.query('SELECT count(*) AS n FROM refresh_tokens').get()).toEqual({ n: 8 + acknowledged })
    db.close()

    ;({ proc, url } = await serveBinary(dir))
    try {
      for (const cookie of current) expect((await fetch(`${url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } })).status).toBe(201)
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
    }
  }, 60_000)
})

/** An account set up with the CLI, the binary serving it, and `count` logged-in sessions' refresh cookies. */
async function serveWithSessions(dir: string, count: number) {
  const { key } = await setUpAccount(cliRunner([BINARY], dir), 'ada@example.com', PASSWORD)
  const { proc, url } = await serveBinary(dir)
  const login = () =>
    fetch(`${url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD }),
    }).then(toResult)
  const sessions = await Promise.all(Array.from({ length: count }, async () => (await login()).refreshCookie!))
  return { proc, url, sessions }
}

/** Resolves with the match once a line of `stream` matches `pattern`. */
async function lineOn(stream: ReadableStream<Uint8Array>, pattern: RegExp): Promise<RegExpExecArray> {
  const reader = stream.getReader()
  let text = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`stderr ended without ${pattern}: ${text}`)
    text += new TextDecoder().decode(value)
    const match = pattern.exec(text)
    if (match) return match
  }
}
