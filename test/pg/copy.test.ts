// `authd db copy`: a deployment moves from SQLite to PostgreSQL (and back) without losing
// users, sessions, keys or mail; a non-empty target is refused.
import { expect, it } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { decodeProtectedHeader } from 'jose'
import { BINARY, serveBinary, setUpAccount, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { apiCaller, PASSWORD, toResult } from '../helpers'
import { SoftwareAuthenticator } from '../software-authenticator'
import { createTestDatabase, describePostgres, useTestDatabase } from '../pg'
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { sqliteSink } from '../../bench/seed-sinks'
import { seedDatabase } from '../../bench/seed'

const dir = useBinaryAndTempDir()

describePostgres('authd db copy', () => {
  const databaseUrl = useTestDatabase()

  it('moves a SQLite deployment into an empty PostgreSQL database and back, sessions and passkeys included', async () => {
    const sqlite = cliRunner([BINARY], dir())
    const { key } = await setUpAccount(sqlite, 'ada@example.com', PASSWORD)
    const login = (url: string) =>
      fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD }) }).then(toResult)
    // One public URL for both servers: the passkeys' relying party is derived from it.
    const site = { AUTHD_PUBLIC_URL: 'https://auth.example.com' }
    const authenticator = new SoftwareAuthenticator('auth.example.com', 'https://auth.example.com')
    const before = await serveBinary(dir(), site)
    const session = await login(before.url)
    const call = apiCaller(before.url, key)
    const bearer = { authorization: `Bearer ${session.json.data.response.accessToken}` }
    const started = (await call('POST', '/passkeys/register/options', undefined, bearer)).json.data
    expect((await call('POST', '/passkeys/register', { challengeId: started.challengeId, response: authenticator.register(started.options) }, bearer)).status).toBe(201)
    before.proc.kill('SIGTERM')
    await before.proc.exited
    const kid = decodeProtectedHeader(session.json.data.response.accessToken).kid

    const copied = await sqlite(['--json', 'db', 'copy', '--to', databaseUrl()])
    expect(copied.stderr).toBe('')
    // (two signing keys: the server made its ES256 and its RSA key at start)
    expect(copied.json.tables).toMatchObject({ tenants: 1, users: 1, apiKeys: 1, signingKeys: 2, refreshFamilies: 1, refreshTokens: 1, passkeys: 1 })

    const onPostgres = { AUTHD_DATABASE_URL: databaseUrl(), ...site }
    const after = await serveBinary(dir(), onPostgres)
    try {
      // The browser's cookie from before the move still works, and the same key signs.
      const refreshed = await fetch(`${after.url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${session.refreshCookie}` } }).then(toResult)
      expect(refreshed.status).toBe(201)
      expect(decodeProtectedHeader(refreshed.json.data.response.accessToken).kid).toBe(kid)
      expect((await login(after.url)).status).toBe(201)
      // The passkey moved with its user: it signs in on PostgreSQL.
      const moved = apiCaller(after.url, key)
      const options = (await moved('POST', '/passkeys/login/options', {})).json.data
      expect((await moved('POST', '/passkeys/login', { challengeId: options.challengeId, response: authenticator.assert(options.options) })).status).toBe(201)
    } finally {
      after.proc.kill('SIGTERM')
      await after.proc.exited
    }

    const again = await sqlite(['db', 'copy', '--to', databaseUrl()])
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('is not empty (tenants has rows): copy only into an empty database') })

    const back = join(dir(), 'back', 'authd.db')
    const returned = await cliRunner([BINARY], dir(), onPostgres)(['--json', 'db', 'copy', '--to', `sqlite:${back}`])
    expect(returned.stderr).toBe('')
    // What PostgreSQL added meanwhile came back too: the refresh (a token) and the login (a session and its token).
    const { tables } = copied.json
    // (and the passkey sign-in: a session and its token, and its spent ceremony; each session its session.created event)
    expect(returned.json.tables).toEqual({ ...tables, refreshFamilies: tables.refreshFamilies + 2, refreshTokens: tables.refreshTokens + 3, webauthnChallenges: tables.webauthnChallenges + 1, webhookEvents: tables.webhookEvents + 2, limitCounters: returned.json.tables.limitCounters, auditEvents: returned.json.tables.auditEvents })
    expect(returned.json.tables.auditEvents).toBeGreaterThan(copied.json.tables.auditEvents)
  }, 60_000)

  it('copies a database of many pages per table; interrupted, it leaves the target empty and runs again', async () => {
    // 3,000 users with a history: refresh_tokens alone is several of the copy's pages.
    const data = join(dir(), 'big')
    const sink = sqliteSink(join(data, 'authd.db'))
    await seedDatabase(sink, { users: 3000, argon2: { memoryCost: 64, timeCost: 1 } })
    await sink.close()
    const source = new Database(join(data, 'authd.db'), { readonly: true })
    const count = (table: string) => source.prepare(`SELECT count(*) AS n FROM ${table}`)
    const tables = ['users', 'refresh_families', 'refresh_tokens', 'audit_events', 'mail_outbox', 'mfa_recovery_codes', 'passkeys', 'limit_counters', 'idempotency_keys', 'pending_signups']
    const sourceCounts = Object.fromEntries(
      tables.map((t) => {
        const statement = count(t)
        const { n } = statement.get() as { n: number }
        statement.finalize()
        return [t, n]
      }),
    )
    source.close(true)
    expect(sourceCounts.refresh_tokens).toBeGreaterThan(20_000)
    const target = await createTestDatabase()
    const sql = new SQL(target.url, { max: 1 })
    const targetCounts = async () => Object.fromEntries(await Promise.all(tables.map(async (t) => [t, Number(((await sql.unsafe(`SELECT count(*) AS n FROM ${t}`)) as Array<{ n: string }>)[0]!.n)])))
    try {
      // Stopped half-way: while it writes refresh tokens (users and sessions are in, uncommitted).
      const interrupted = Bun.spawn([BINARY, '--data-dir', data, 'db', 'copy', '--to', target.url], { stdout: 'pipe', stderr: 'pipe' })
      for (let n = 0; n < 100; n++) {
        const [row] = (await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'insert into "refresh_tokens"%'`) as Array<{ n: number }>
        if (row!.n > 0) break
        await Bun.sleep(50)
      }
      interrupted.kill('SIGKILL')
      await interrupted.exited
      expect(Object.values(await targetCounts()).every((n) => n === 0)).toBe(true)

      const copied = await cliRunner([BINARY], data)(['--json', 'db', 'copy', '--to', target.url])
      expect({ code: copied.code, stderr: copied.stderr }).toEqual({ code: 0, stderr: '' })
      expect(copied.json.tables.refreshTokens).toBe(sourceCounts.refresh_tokens)
      expect(await targetCounts()).toEqual(sourceCounts)
      expect(copied.json.rowsPerSecond).toBeGreaterThan(0)
    } finally {
      await sql.close()
      await target.drop()
    }
  }, 120_000)

  it('refuses to copy a source that a server has open, unless --force (then it warns)', async () => {
    const data = join(dir(), 'busy')
    const sqlite = cliRunner([BINARY], data)
    await setUpAccount(sqlite, 'ada@example.com', PASSWORD)
    const target = await createTestDatabase()
    const server = await serveBinary(data)
    try {
      const refused = await sqlite(['db', 'copy', '--to', target.url])
      expect({ code: refused.code, stdout: refused.stdout, stderr: refused.stderr }).toEqual({
        code: 1,
        stdout: '',
        stderr: `authd: the source is in use (another process has ${join(data, 'authd.db')} open): stop authd serve first, or pass --force to copy anyway and lose what is written after the copy\n`,
      })
      const forced = await sqlite(['--json', 'db', 'copy', '--to', target.url, '--force'])
      expect(forced.code).toBe(0)
      expect(forced.stderr).toStartWith('authd: warning: the source is in use')
      expect(forced.json.tables.users).toBe(1)

      // The other way: instances serving on PostgreSQL are other sessions on the source.
      mkdirSync(join(dir(), 'busy-pg'))
      const onPostgres = await serveBinary(join(dir(), 'busy-pg'), { AUTHD_DATABASE_URL: target.url })
      try {
        const back = await cliRunner([BINARY], data, { AUTHD_DATABASE_URL: target.url })(['db', 'copy', '--to', `sqlite:${join(dir(), 'busy-back.db')}`])
        expect({ code: back.code, stderr: back.stderr }).toEqual({ code: 1, stderr: expect.stringMatching(/^authd: the source is in use \(\d+ other connection\(s\) to the source database are open\)/) })
      } finally {
        onPostgres.proc.kill('SIGTERM')
        await onPostgres.proc.exited
      }
    } finally {
      server.proc.kill('SIGTERM')
      await server.proc.exited
      await target.drop()
    }
    // Stopped, the source is no longer in use: the copy runs (into another empty database).
    const empty = await createTestDatabase()
    try {
      expect((await sqlite(['db', 'copy', '--to', empty.url])).code).toBe(0)
    } finally {
      await empty.drop()
    }
  }, 60_000)
})
