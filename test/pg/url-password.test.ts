// The password in AUTHD_DATABASE_URL never reaches what authd prints: not the start-up line,
// not a log line, not doctor (healthy or failing). The project's server trusts every local
// connection, so a URL with a password still connects: the canary travels the whole way.
import { expect, it } from 'bun:test'
import { BINARY, readRest, serveBinary, useBinaryAndTempDir } from '../binary'
import { cliRunner, type CliResult } from '../cli-runner'
import { PASSWORD } from '../helpers'
import { createTestDatabase, describePostgres, useTestDatabase } from '../pg'

const dir = useBinaryAndTempDir()
const CANARY = 'canary'

/** The URL with a password (trust authentication ignores it). */
const withPassword = (url: string, port?: number) => {
  const parsed = new URL(url)
  parsed.password = CANARY
  if (port !== undefined) parsed.port = String(port)
  return parsed.toString()
}

describePostgres('the database password in what authd prints', () => {
  const databaseUrl = useTestDatabase()

  it('is in no line of migrate, init, serve (start-up, requests, shutdown) or doctor', async () => {
    const env = { AUTHD_DATABASE_URL: withPassword(databaseUrl()) }
    expect(env.AUTHD_DATABASE_URL).toContain(`:${CANARY}@`)
    const authd = cliRunner([BINARY], dir(), env)
    const printed: string[] = []
    const keep = (r: { code: number; stdout: string; stderr: string }) => {
      printed.push(r.stdout, r.stderr)
      return r
    }
    expect(keep(await authd(['migrate'])).code).toBe(0)
    expect(keep(await authd(['init', '--yes', '--admin-email', 'ops@acme.example', '--admin-password-stdin'], { stdin: PASSWORD })).code).toBe(0)

    const { proc, url, listening } = await serveBinary(dir(), env)
    expect(listening.database).toStartWith('postgres://')
    expect((await fetch(`${url}/readyz`)).status).toBe(200)
    expect((await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ops@acme.example', password: PASSWORD }) })).status).toBe(401)
    proc.kill('SIGTERM')
    printed.push(JSON.stringify(listening), await readRest(proc.stdout), await new Response(proc.stderr).text())
    expect(await proc.exited).toBe(0)

    const doctor = keep(await authd(['doctor']))
    expect(doctor.stdout).toContain('✓ database')
    keep(await authd(['--json', 'doctor']))
    // A database that does not answer: the failure names the URL, without its password.
    const down = keep(await cliRunner([BINARY], dir(), { AUTHD_DATABASE_URL: withPassword(databaseUrl(), 1) })(['doctor']))
    expect(down.stdout).toContain('✗ database: cannot use postgres://')

    expect(printed.join('\n')).not.toContain(CANARY)
  }, 60_000)

  it("is in none of init's messages (the serve command for a --database-url, already initialised) nor in db copy's (text, --json, a refused non-empty target)", async () => {
    const databases = [await createTestDatabase(), await createTestDatabase()]
    try {
      const [source, target] = databases.map((database) => withPassword(database.url)) as [string, string]
      const printed: string[] = []
      const keep = (r: CliResult) => {
        printed.push(r.stdout, r.stderr)
        return r
      }
      // init on PostgreSQL named by the flag: its closing serve command repeats the URL.
      const onSource = cliRunner([BINARY], dir())
      const init = ['--database-url', source, 'init', '--yes', '--admin-email', 'ops@acme.example']
      expect(keep(await onSource(init)).stdout).toMatch(/^Start the server: authd --database-url '?postgres:\/\/\S+ /m)
      for (const json of [[], ['--json']]) {
        const again = keep(await onSource([...json, ...init]))
        expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 1, stderr: expect.stringMatching(/^authd: postgres:\/\/\S+ is already initialised; /) })
      }

      // db copy from it (into SQLite), then from SQLite into PostgreSQL, then again: refused.
      const fromSource = keep(await onSource(['--json', '--database-url', source, 'db', 'copy', '--to', `sqlite:${dir()}/copy.db`]))
      expect(fromSource.json.from).toStartWith('postgres://')
      const fromSqlite = cliRunner([BINARY], dir(), { AUTHD_DATABASE_URL: `sqlite:${dir()}/copy.db` })
      expect(keep(await fromSqlite(['db', 'copy', '--to', target])).stdout).toMatch(/^copied \d+ rows in \d+ tables from \S+ to postgres:\/\/\S+ in /)
      for (const json of [[], ['--json']]) {
        const refused = keep(await fromSqlite([...json, 'db', 'copy', '--to', target]))
        expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 1, stderr: expect.stringMatching(/^authd: postgres:\/\/\S+ is not empty \(/) })
      }

      expect(printed.join('\n')).not.toContain(CANARY)
    } finally {
      for (const database of databases) await database.drop()
    }
  }, 60_000)

  it('is in no line either when it stands in a password= parameter or holds an unencoded @, and a mistyped scheme is refused', async () => {
    const base = new URL(databaseUrl())
    const variants = [`${databaseUrl()}?password=${CANARY}`, `postgres://${base.username}:can@ry@${base.host}${base.pathname}`]
    const printed: string[] = []
    for (const variant of variants) {
      const authd = cliRunner([BINARY], dir(), { AUTHD_DATABASE_URL: variant })
      for (const r of [await authd(['doctor']), await authd(['--json', 'doctor'])]) printed.push(r.stdout, r.stderr)
    }
    expect(printed.join('\n')).toContain('postgres://')
    expect(printed.join('\n')).not.toContain(CANARY)
    expect(printed.join('\n')).not.toContain('ry@')
    // A scheme authd does not know is no SQLite file name: it was one, holding the password in its path.
    for (const typo of [`postgress://${base.username}:${CANARY}@${base.host}${base.pathname}`, `mysql://u:${CANARY}@localhost/db`]) {
      const r = await cliRunner([BINARY], dir(), { AUTHD_DATABASE_URL: typo })(['migrate'])
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: 'authd: AUTHD_DATABASE_URL must be postgres://user:password@host:5432/authd, or a SQLite file (a path, sqlite:PATH or file:PATH)\n' })
    }
    const badEscape = await cliRunner([BINARY], dir(), { AUTHD_DATABASE_URL: `postgres://u:c%ZZ${CANARY}@localhost/db` })(['migrate'])
    expect({ code: badEscape.code, stderr: badEscape.stderr }).toEqual({ code: 2, stderr: 'authd: AUTHD_DATABASE_URL must be a URL such as postgres://user:password@host:5432/authd?sslmode=require\n' })
  }, 60_000)
})
