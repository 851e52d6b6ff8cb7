// The compiled binary on PostgreSQL (AUTHD_DATABASE_URL=postgres://…): migrations embedded for
// both engines, the CLI, then the server, over a real socket; backup refuses and names pg_dump.
import { expect, it } from 'bun:test'
import { adminJourney } from '../admin-journey'
import { mfaJourney } from '../mfa-journey'
import { passkeyJourney } from '../passkey-journey'
import { signupJourney } from '../signup-journey'
import { startSmtp } from '../smtp'
import { BINARY, serveBinary, setUpAccount, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD, toResult } from '../helpers'
import { describePostgres, useTestDatabase } from '../pg'
import { journal } from '../../src/db/pg/migrations'

const dir = useBinaryAndTempDir()

describePostgres('dist/authd on PostgreSQL', () => {
  const databaseUrl = useTestDatabase()

  it('migrates, sets up through the CLI, serves login, refresh, the signed-in user, the admin API, sign-up and TOTP, and names pg_dump for backups', async () => {
    const env = { AUTHD_DATABASE_URL: databaseUrl() }
    const authd = cliRunner([BINARY], dir(), env)
    const migrated = await authd(['--json', 'migrate'])
    expect(migrated.json).toEqual({ applied: journal.entries.map((e) => e.tag), pending: [] })
    const { key, tenantId } = await setUpAccount(authd, 'ada@example.com', PASSWORD)
    const smtp = await startSmtp()
    const { proc, url, listening } = await serveBinary(dir(), { ...env, AUTHD_SMTP_URL: smtp.url })
    try {
      expect(listening.database).toStartWith('postgres://')
      expect((await fetch(`${url}/readyz`)).status).toBe(200)
      const login = await fetch(`${url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD }),
      }).then(toResult)
      expect(login.status).toBe(201)
      const refreshed = await fetch(`${url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${login.refreshCookie}` } }).then(toResult)
      expect(refreshed.status).toBe(201)
      const bearer = { authorization: `Bearer ${refreshed.json.data.response.accessToken}` }
      const sessions = await fetch(`${url}/api/v1/auth/sessions`, { headers: bearer }).then(toResult)
      expect(sessions.json.data.map((s: any) => [s.current, s.ip])).toEqual([[true, '127.0.0.1']])
      expect((await fetch(`${url}/api/v1/auth/logout-all`, { method: 'POST', headers: bearer }).then(toResult)).json.data).toEqual({ ended: 1 })
      expect((await fetch(`${url}/api/v1/auth/me`, { headers: bearer })).status).toBe(401)
      await adminJourney(authd, url, tenantId)
      await signupJourney(authd, url, tenantId, key, smtp)
      await mfaJourney(authd, url, tenantId, key, smtp, 'ada@example.com', PASSWORD)
      await passkeyJourney(authd, url, tenantId, key, smtp, 'ada@example.com', PASSWORD)
    } finally {
      proc.kill('SIGTERM')
      await smtp.close()
    }
    const backup = await authd(['backup', `${dir()}/x.db`])
    expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('on PostgreSQL use pg_dump') })
    const doctor = await authd(['--json', 'doctor'])
    expect(Object.fromEntries(doctor.json.map((f: any) => [f.check, f.status]))).toMatchObject({ database: 'ok', 'database TLS': 'ok', migrations: 'ok' })
  }, 60_000)
})
