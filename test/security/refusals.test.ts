// Refused requests cost what they must: a flood of 429s writes nothing per request (the
// refusals are tallied and written as one audit row per subject and window), and tables do
// not grow forever (retention prunes in small batches).
import { afterEach, describe, expect, it } from 'bun:test'
import { pruneExpiredData } from '../../src/core/retention/retention'
import { silentLogger } from '../../src/log'
import { startServer } from '../../src/server/serve'
import { createTestContext, loginFor, PASSWORD, queryDatabase, requestOtp, type TestContext } from '../helpers'

// Refusals leave at once here: these tests count what a refusal writes, by the thousand, and
// the hold before a refusal is sent (server/errors.ts) is tested in http/app and http/login.
const AT_ONCE = { AUTHD_REFUSAL_HOLD_MS: '0' }

let ctx: TestContext
afterEach(() => ctx?.close())

/** Row counts and the newest write of the tables a refused request could touch. */
async function footprint() {
  const [row] = await queryDatabase<Record<string, unknown>>(
    ctx,
    'SELECT (SELECT count(*) FROM audit_events) AS audit, (SELECT count(*) FROM limit_counters) AS counters, (SELECT max(updated_at) FROM limit_counters) AS "lastCounterWrite"',
  )
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, v === null ? null : Number(v)]))
}
const count = async (table: string) => Number((await queryDatabase<{ n: number }>(ctx, `SELECT count(*) AS n FROM ${table}`))[0]!.n)

describe('refused requests', () => {
  it('1,000 refused logins write nothing per request, then one audit row with their count', async () => {
    ctx = await createTestContext(AT_ONCE)
    // 1,000 requests must fall inside the first back-off (1 s), on a slow machine too.
    ctx.clock.freeze()
    const { email } = await ctx.addUser()
    const attempt = (password: string) => ctx.call('POST', '/api/v1/auth/login', { body: { email, password }, peer: '203.0.113.7' })
    for (let i = 0; i < 5; i++) expect((await attempt('wrong password guess')).status).toBe(401)
    const before = await footprint()
    for (let i = 0; i < 1000; i++) expect((await attempt(PASSWORD)).status).toBe(429)
    expect(await footprint()).toEqual(before)
    expect(await ctx.runtime.refusals.flush(ctx.runtime.store)).toBe(1)
    const events = await ctx.runtime.store.audit.query({ type: 'login.limited' })
    expect(events).toEqual([
      expect.objectContaining({ ip: '203.0.113.7', tenantId: ctx.tenantId, detail: { email: 'u***@example.com', limits: ['login:account-ip'], count: 1000, firstAt: expect.any(String) } }),
    ])
  })

  it('a request over a per-IP budget is refused before the counter is written', async () => {
    ctx = await createTestContext({ ...AT_ONCE, AUTHD_FORGOT_IP_PER_HOUR: '3' })
    for (let i = 0; i < 3; i++) expect((await ctx.call('GET', `/api/v1/auth/forgot-password/u${i}@example.com`)).status).toBe(200)
    const before = await footprint()
    for (let i = 0; i < 50; i++) expect((await ctx.call('GET', `/api/v1/auth/forgot-password/v${i}@example.com`)).status).toBe(429)
    expect(await footprint()).toEqual(before)
  })

  it('are written when the server stops, so none is lost to a clean shutdown', async () => {
    ctx = await createTestContext({ ...AT_ONCE, AUTHD_PORT: '0', AUTHD_FORGOT_IP_PER_HOUR: '1' })
    const server = await startServer(ctx.runtime, silentLogger)
    const forgot = () => fetch(`${server.url}/api/v1/auth/forgot-password/a@example.com`, { headers: { 'x-api-key': ctx.apiKey } })
    await forgot()
    for (let i = 0; i < 3; i++) expect((await forgot()).status).toBe(429)
    await server.stop()
    const rows = await queryDatabase<{ detail: string }>(ctx, "SELECT detail FROM audit_events WHERE type = 'password_reset.limited'")
    expect(rows.map((r) => JSON.parse(r.detail).count)).toEqual([3])
  })
})

describe('retention', () => {
  it('prunes, in small batches, only what is past its time', async () => {
    ctx = await createTestContext({ AUTHD_RETAIN_AUDIT: '30d', AUTHD_RETAIN_SESSIONS: '7d', AUTHD_RETAIN_MAIL: '7d', AUTHD_RETAIN_RESET_DATA: '1d' })
    const { email } = await ctx.addUser()
    const ended = await loginFor(ctx, email)
    await ctx.call('POST', '/api/v1/auth/logout', { cookie: `refreshToken=${ended.refreshCookie}` })
    await requestOtp(ctx, email)
    expect(await ctx.deliverMail()).toBe(1)
    for (let i = 0; i < 5; i++) await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: 'a wrong guess here' }, peer: `198.51.100.${i}` })

    ctx.clock.advance(31 * 86400)
    // Still live: a session whose refresh token was spent (reuse must stay detectable).
    const live = await loginFor(ctx, email, true)
    const rotated = await ctx.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${live.refreshCookie}` })
    expect(rotated.status).toBe(201)
    const auditBefore = await count('audit_events')

    const deleted = await pruneExpiredData(ctx.runtime, { batchSize: 2, pauseMs: 0 })
    expect(deleted).toMatchObject({ refreshFamilies: 1, refreshTokens: 1, sentMail: 1, resetRequests: 1, otps: 1 })
    expect(deleted.auditEvents).toBeGreaterThan(8)
    expect(await count('audit_events')).toBe(auditBefore - deleted.auditEvents)
    expect(await count('refresh_families')).toBe(1)
    expect(await count('refresh_tokens')).toBe(2)
    expect(await count('mail_outbox')).toBe(0)
    // The live session's spent token is still known: presenting it later is reuse.
    ctx.clock.advance(60)
    expect((await ctx.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${live.refreshCookie}` })).status).toBe(401)
    expect((await ctx.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${rotated.refreshCookie}` })).status).toBe(401)
  })
  it('keeps a limit counter as long as it still blocks, however long an operator made the lock-out', async () => {
    ctx = await createTestContext({ AUTHD_OTP_LOCKOUT: '4d', AUTHD_OTP_FAILURES_BEFORE_LOCKOUT: '5' })
    const { email } = await ctx.addUser()
    const change = (otp: string) => ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp, newPassword: 'a fresh passphrase here' } })
    const right = await requestOtp(ctx, email)
    for (let i = 0; i < 5; i++) expect((await change(right === '000000' ? '000001' : '000000')).status).toBe(400)
    ctx.clock.advance(3 * 86400)
    await pruneExpiredData(ctx.runtime, { pauseMs: 0 })
    const locked = await change(await requestOtp(ctx, email))
    expect(locked.status).toBe(429)
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(86400 - 120)
  })
})
