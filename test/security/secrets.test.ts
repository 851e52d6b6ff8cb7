// Secrets at rest and in logs: API keys, refresh and setup tokens, OTPs, recovery codes and
// login challenges are stored only as hashes, passwords only as argon2id, TOTP secrets only
// sealed; none of them, nor a submitted password or TOTP code, ever reaches a log line or the
// audit log. Canary values are pushed through every flow over a real socket.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTenantSignup } from '../../src/core/signup/signup'
import { base32Decode, totpCode, totpStep } from '../../src/core/mfa/totp'
import { createUser } from '../../src/core/accounts/users'
import { jsonLogger } from '../../src/log'
import { startServer, type RunningServer } from '../../src/server/serve'
import { createTestContext, queryDatabase, TEST_ENGINE, toResult, type TestContext } from '../helpers'

const CANARY = {
  password: 'canary-password-1-correct-horse',
  wrongPassword: 'canary-password-2-wrong-guess',
  newPassword: 'canary-password-3-after-reset',
  setupPassword: 'canary-password-4-first-setup',
  signupPassword: 'canary-password-5-at-sign-up',
  email: 'canary.person@example.com',
}
let ctx: TestContext
let server: RunningServer
const logLines: string[] = []
/** Every secret the flows below handled in plaintext. */
const secrets: Record<string, string> = {}
let otp = ''
let signupOtp = ''
/** Short secrets, checked apart from the long ones: the TOTP codes typed, and a recovery code. */
const totpCodes: string[] = []
let recoveryCode = ''
let recoveryUsed = 0

beforeAll(async () => {
  ctx = await createTestContext({ AUTHD_PORT: '0' })
  server = await startServer(ctx.runtime, jsonLogger((line) => logLines.push(line)))
  const api = `${server.url}/api/v1/auth`
  const headers = { 'content-type': 'application/json', 'x-api-key': ctx.apiKey, 'user-agent': 'canary-agent' }
  const post = (path: string, body: unknown, extra: Record<string, string> = {}) =>
    fetch(`${api}${path}`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) }).then(toResult)
  secrets.apiKey = ctx.apiKey

  await ctx.addUser({ email: CANARY.email, password: CANARY.password })
  await post('/login', { email: CANARY.email, password: CANARY.wrongPassword })
  const login = await post('/login', { email: CANARY.email, password: CANARY.password })
  secrets.accessToken = login.json.data.response.accessToken
  secrets.refreshToken = login.refreshCookie!
  const refreshed = await fetch(`${api}/refresh-token`, { headers: { cookie: `refreshToken=${secrets.refreshToken}` } }).then(toResult)
  secrets.successor = refreshed.refreshCookie!
  await fetch(`${api}/refresh-token`, { headers: { cookie: 'refreshToken=canary-garbage-cookie-value' } })

  await fetch(`${api}/forgot-password/${CANARY.email}`, { headers })
  // The worker writes the mail to an .eml file (no SMTP in this test): read the code there.
  for (let i = 0; i < 100 && !otp; i++) {
    await Bun.sleep(50)
    const dir = join(ctx.dir, 'mail')
    const files = (() => { try { return readdirSync(dir) } catch { return [] } })()
    const eml = files.map((f) => readFileSync(join(dir, f), 'utf8')).find((text) => text.includes('reset code'))
    if (eml) otp = /\b(\d{6})\b/.exec(eml.split('text/plain')[1]!)![1]!
  }
  await post('/change-password', { email: CANARY.email, otp: otp === '000000' ? '000001' : '000000', newPassword: CANARY.newPassword })
  await post('/change-password', { email: CANARY.email, otp, newPassword: CANARY.newPassword })

  const { setupToken } = await createUser(ctx.runtime, { tenantId: ctx.tenantId, email: 'newcomer@example.com', firstName: 'New', lastName: 'Comer' })
  secrets.setupToken = setupToken!.token
  await post('/setup-password', { password: CANARY.setupPassword }, { authorization: `Bearer ${secrets.setupToken}` })
  await setTenantSignup(ctx.runtime, ctx.tenantId, 'open')
  await post('/signup', { email: 'canary.joiner@example.com', password: CANARY.signupPassword, firstName: 'Joan', lastName: 'Clarke' })
  for (let i = 0; i < 100 && !signupOtp; i++) {
    await Bun.sleep(50)
    const dir = join(ctx.dir, 'mail')
    const eml = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')).find((text) => text.includes('sign-up code'))
    if (eml) signupOtp = /\b(\d{6})\b/.exec(eml.split('text/plain')[1]!)![1]!
  }
  await post('/verify-email', { email: 'canary.joiner@example.com', otp: signupOtp === '000000' ? '000001' : '000000' })
  const joined = await post('/verify-email', { email: 'canary.joiner@example.com', otp: signupOtp })
  secrets.signupRefreshToken = joined.refreshCookie!

  // Two-factor authentication: enrol, a wrong code, a right one, then a recovery code.
  const signedIn = await post('/login', { email: CANARY.email, password: CANARY.newPassword })
  const bearer = { authorization: `Bearer ${signedIn.json.data.response.accessToken}` }
  const totpSecret: string = (await post('/mfa/totp', {}, bearer)).json.data.secret
  secrets.totpSecret = totpSecret
  const step = totpStep(ctx.clock.now())
  totpCodes.push(totpCode(totpSecret, step), totpCode(totpSecret, step + 1))
  recoveryCode = (await post('/mfa/totp/confirm', { code: totpCodes[0] }, bearer)).json.data.recoveryCodes[0]
  secrets.challengeToken = (await post('/login', { email: CANARY.email, password: CANARY.newPassword })).json.data.response.challengeToken
  totpCodes.push(totpCodes[1] === '999999' ? '999998' : '999999')
  await post('/mfa/verify', { challengeToken: secrets.challengeToken, code: totpCodes[2] })
  secrets.mfaRefreshToken = (await post('/mfa/verify', { challengeToken: secrets.challengeToken, code: totpCodes[1] })).refreshCookie!
  const recoveryChallenge = (await post('/login', { email: CANARY.email, password: CANARY.newPassword })).json.data.response.challengeToken
  recoveryUsed = (await post('/mfa/verify', { challengeToken: recoveryChallenge, code: recoveryCode })).status

  await post('/logout', {}, { cookie: `refreshToken=${secrets.successor}` })
  await Bun.sleep(200) // let the worker deliver the notice mails
  await server.stop()
}, 30_000)
afterAll(() => ctx.close())

/** Every value of every row of every table, as text, on either engine. */
async function dumpDatabase(): Promise<string> {
  const tables = await queryDatabase<{ name: string }>(
    ctx,
    TEST_ENGINE === 'postgres'
      ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
      : "SELECT name FROM sqlite_master WHERE type = 'table'",
  )
  expect(tables.map((t) => t.name)).toContain('refresh_tokens')
  const rows = await Promise.all(tables.map(({ name }) => queryDatabase(ctx, `SELECT * FROM "${name}"`)))
  return rows.map((r) => JSON.stringify(r)).join('\n')
}

/** SQLite's own files (PostgreSQL's live on its server). */
function rawDatabaseFiles(): string {
  if (TEST_ENGINE === 'postgres') return ''
  return ['authd.db', 'authd.db-wal']
    .map((f) => {
      try {
        return readFileSync(join(ctx.dir, f)).toString('latin1')
      } catch {
        return ''
      }
    })
    .join('')
}

const allSecrets = () => ({ ...secrets, ...CANARY, otp, signupOtp, recoveryCode, ...Object.fromEntries(totpCodes.map((c, i) => [`totpCode${i}`, c])) })

describe('secrets at rest', () => {
  it('the flows really ran (the canaries are real secrets)', () => {
    expect(otp).toMatch(/^\d{6}$/)
    expect(signupOtp).toMatch(/^\d{6}$/)
    expect(recoveryCode).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/)
    expect(totpCodes).toHaveLength(3)
    expect(recoveryUsed).toBe(201)
    for (const value of Object.values(secrets)) expect(value.length).toBeGreaterThan(20)
  })

  it('no API key, refresh token, setup token or password is stored in plaintext, in any table or in the raw database files', async () => {
    const dump = await dumpDatabase()
    const raw = rawDatabaseFiles()
    expect(dump).toContain(CANARY.email) // (the dump does see the rows: addresses are stored as typed)
    for (const [name, value] of Object.entries(allSecrets())) {
      if (name === 'otp' || name === 'signupOtp' || name.startsWith('totpCode') || name === 'email') continue
      expect({ name, inTables: dump.includes(value), inFiles: raw.includes(value) }).toEqual({ name, inTables: false, inFiles: false })
    }
  })

  it('a TOTP secret is stored only sealed: neither its base32 text nor its key bytes are in any table or the raw database files', async () => {
    const key = base32Decode(secrets.totpSecret!)
    const [factor] = await queryDatabase<{ sealed_secret: string; confirmed_at: unknown }>(ctx, 'SELECT sealed_secret, confirmed_at FROM mfa_totp')
    expect(factor!.confirmed_at).not.toBeNull() // (the factor is on: the row searched is the real one)
    const raw = rawDatabaseFiles()
    const dump = await dumpDatabase()
    expect({
      text: dump.includes(secrets.totpSecret!) || raw.includes(secrets.totpSecret!),
      lowercase: dump.includes(secrets.totpSecret!.toLowerCase()) || raw.includes(secrets.totpSecret!.toLowerCase()),
      bytes: raw.includes(key.toString('latin1')),
      hex: dump.includes(key.toString('hex')) || raw.includes(key.toString('hex')),
      base64: dump.includes(key.toString('base64').replace(/=+$/, '')) || raw.includes(key.toString('base64').replace(/=+$/, '')),
    }).toEqual({ text: false, lowercase: false, bytes: false, hex: false, base64: false })
  })

  it('an OTP is stored only as a keyed hash, and its mail body is erased once delivered', async () => {
    const cells = (await queryDatabase<Record<string, unknown>>(ctx, 'SELECT * FROM password_reset_otps')).flatMap(Object.values)
    const bodies = await queryDatabase(ctx, "SELECT status, text_body, html_body FROM mail_outbox WHERE kind = 'password-reset-otp'")
    expect(cells.map(String)).not.toContain(otp)
    expect(cells.some((c) => String(c).includes(otp))).toBe(false)
    expect(bodies).toEqual([{ status: 'sent', text_body: null, html_body: null }])
  })

  it('a sign-up code likewise: its mail body is erased once delivered, and the verified sign-up leaves no pending row', async () => {
    const bodies = await queryDatabase(ctx, "SELECT status, text_body, html_body FROM mail_outbox WHERE kind = 'signup-code'")
    expect(bodies).toEqual([{ status: 'sent', text_body: null, html_body: null }])
    expect(await queryDatabase(ctx, 'SELECT * FROM pending_signups')).toEqual([])
  })
})

describe('secrets in logs', () => {
  it('no secret, and no submitted password, appears in any log line or audit entry', async () => {
    const output = logLines.join('\n')
    const audit = JSON.stringify(await queryDatabase(ctx, 'SELECT * FROM audit_events'))
    expect(logLines.length).toBeGreaterThan(2)
    for (const [name, value] of Object.entries(allSecrets())) {
      if (name === 'email') continue
      expect({ name, inLogs: output.includes(value), inAudit: audit.includes(value) }).toEqual({ name, inLogs: false, inAudit: false })
    }
  })

  it('e-mail addresses appear in logs and audit entries only masked', async () => {
    const events = await queryDatabase(ctx, 'SELECT * FROM audit_events')
    expect(events.length).toBeGreaterThan(5)
    expect(JSON.stringify(events)).not.toContain(CANARY.email)
    expect(JSON.stringify(events)).toContain('c***@example.com')
    expect(logLines.join('\n')).not.toContain(CANARY.email)
  })
})
