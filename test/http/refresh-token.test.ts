import { afterEach, describe, expect, it } from 'bun:test'
import { hmacSha256, randomToken, sha256 } from '../../src/core/secrets'
import { setTenantDisabled } from '../../src/core/tenants/tenants'
import { setUserDisabled } from '../../src/core/accounts/users'
import { createTestContext, loginFor, type TestContext } from '../helpers'

const REFRESH = '/api/v1/auth/refresh-token'
const unauthorized = { statusCode: 401, message: 'Unauthorized', data: null }
let ctx: TestContext
afterEach(() => ctx.close())

async function loggedIn(env: Record<string, string> = {}, rememberMe = false) {
  ctx = await createTestContext(env)
  const user = await ctx.addUser()
  const login = await loginFor(ctx, user.email, rememberMe)
  return { ...user, cookie: login.refreshCookie! }
}

const refreshWith = (cookie: string, headers: Record<string, string> = {}) =>
  ctx.call('GET', REFRESH, { cookie: `refreshToken=${cookie}`, headers, apiKey: null })

describe('GET /refresh-token', () => {
  it('answers 201 with a new access token and the user, and rotates the cookie (no API key needed)', async () => {
    const { userId, cookie } = await loggedIn()
    const res = await refreshWith(cookie)
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject({
      statusCode: 201,
      message: 'Token refreshed',
      data: { response: { accessToken: expect.any(String), user: { userId, tenant: { tenantId: ctx.tenantId, name: 'Acme' } } } },
    })
    expect(res.refreshCookie).toMatch(/^[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/)
    expect(res.refreshCookie).not.toBe(cookie)
    expect(res.setCookie).toContain('HttpOnly')
    expect(res.setCookie).toContain('Secure')
    expect(res.setCookie).toContain('SameSite=None')
    expect(res.setCookie).toContain('Path=/api/v1/auth')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect((await refreshWith(res.refreshCookie!)).status).toBe(201)
  })

  it.each([
    [false, 86400],
    [true, 30 * 86400],
  ])("keeps the family's rememberMe choice (%p: Max-Age %p)", async (rememberMe, maxAge) => {
    const { cookie } = await loggedIn({}, rememberMe)
    const res = await refreshWith(cookie)
    expect(res.setCookie).toContain(`Max-Age=${maxAge}`)
  })

  it('gives the same successor to a spent token within the grace period', async () => {
    const { cookie } = await loggedIn()
    const first = await refreshWith(cookie)
    ctx.clock.advance(9)
    const again = await refreshWith(cookie)
    expect(again.status).toBe(201)
    expect(again.refreshCookie).toBe(first.refreshCookie)
  })

  // Sessions an older authd started (tokens of the earlier format, 43 characters, stored under
  // their hash alone) are rotated as that version rotates them, so during a rolling upgrade
  // either version serves them: an upgrade signs nobody out.
  it('rotates a session of the earlier token format as an older authd does: same successor, same key', async () => {
    const { userId } = await loggedIn()
    const now = ctx.clock.now()
    const legacy = randomToken(32)
    const family = { id: Bun.randomUUIDv7(), userId, tenantId: ctx.tenantId, rememberMe: false, createdAt: now, expiresAt: now + 86_400_000, revokedAt: null, revokedReason: null, amr: 'pwd', authAt: now }
    const token = { id: Bun.randomUUIDv7(), familyId: family.id, tokenHash: sha256(legacy), createdAt: now, expiresAt: now + 86_400_000, spentAt: null, accessKid: null, ip: null, userAgent: null }
    expect(await ctx.runtime.store.sessions.createFamily(family, token, 0)).toBe(true)
    const res = await refreshWith(legacy)
    expect(res.status).toBe(201)
    expect(res.refreshCookie).toBe(hmacSha256(ctx.runtime.serverKeys.refreshSuccessor, legacy))
    expect((await ctx.runtime.store.sessions.findToken(sha256(res.refreshCookie!)))?.token.spentAt).toBeNull()
    expect((await refreshWith(legacy)).refreshCookie).toBe(res.refreshCookie)
    expect((await refreshWith(res.refreshCookie!)).status).toBe(201)
    ctx.clock.advance(11)
    expect((await refreshWith(legacy)).json).toEqual(unauthorized)
  })

  it('starts sessions in the earlier token format with AUTHD_REFRESH_TOKEN_FORMAT=hash (for a rolling upgrade)', async () => {
    const { cookie } = await loggedIn({ AUTHD_REFRESH_TOKEN_FORMAT: 'hash' })
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(await ctx.runtime.store.sessions.findToken(sha256(cookie))).not.toBeNull()
    const res = await refreshWith(cookie)
    expect(res.refreshCookie).toBe(hmacSha256(ctx.runtime.serverKeys.refreshSuccessor, cookie))
    expect((await refreshWith(res.refreshCookie!)).status).toBe(201)
  })

  it('revokes the whole family when a spent token comes back after the grace period', async () => {
    const { cookie } = await loggedIn()
    const successor = (await refreshWith(cookie)).refreshCookie!
    ctx.clock.advance(11)
    const reuse = await refreshWith(cookie)
    expect(reuse.status).toBe(401)
    expect(reuse.json).toEqual(unauthorized)
    // The thief's use ended the legitimate holder's session too: the family is gone.
    expect((await refreshWith(successor)).json).toEqual(unauthorized)
  })

  it.each([
    ['no cookie', undefined],
    ['an unknown token', 'A'.repeat(43)],
    ['an empty cookie', ''],
    ['an absurdly long cookie', 'A'.repeat(5000)],
    ['a cookie that looks like JSON', '{"a":1}'],
    ['a cookie that looks like a number', '1234'],
    ['a cookie with broken percent-encoding', '%E0%A4%A'],
  ])('answers 401 for %s', async (_, cookie) => {
    await loggedIn()
    const res = await ctx.call('GET', REFRESH, { cookie: cookie === undefined ? undefined : `refreshToken=${cookie}`, apiKey: null })
    expect(res.status).toBe(401)
    expect(res.json).toEqual(unauthorized)
    expect(res.setCookie).toBeNull()
  })

  it('answers 401 once the refresh token has expired (1 day without rememberMe)', async () => {
    const { cookie } = await loggedIn()
    ctx.clock.advance(86400 + 1)
    expect((await refreshWith(cookie)).json).toEqual(unauthorized)
  })

  it('ends the family at its absolute limit, however often it is refreshed', async () => {
    let { cookie } = await loggedIn({ AUTHD_SESSION_MAX_AGE: '100s' }, true)
    const res = await refreshWith(cookie)
    expect(res.setCookie).toMatch(/Max-Age=(100|99);/)
    cookie = res.refreshCookie!
    ctx.clock.advance(60)
    cookie = (await refreshWith(cookie)).refreshCookie!
    ctx.clock.advance(41)
    expect((await refreshWith(cookie)).json).toEqual(unauthorized)
  })

  it('answers 401 after the user is disabled (their sessions are revoked)', async () => {
    const { userId, cookie } = await loggedIn()
    await setUserDisabled(ctx.runtime, userId, true)
    expect((await refreshWith(cookie)).json).toEqual(unauthorized)
  })

  it("answers 401 once the user's tenant is disabled: its sessions end, and enabling it revives none", async () => {
    const { cookie } = await loggedIn()
    await setTenantDisabled(ctx.runtime, ctx.tenantId, true)
    expect((await refreshWith(cookie)).json).toEqual({ statusCode: 401, message: 'Unauthorized', data: null })
    await setTenantDisabled(ctx.runtime, ctx.tenantId, false)
    expect((await refreshWith(cookie)).status).toBe(401)
  })

  describe('refuses cross-site use of the cookie', () => {
    const env = { AUTHD_CORS_ORIGINS: 'https://app.example.com', AUTHD_PUBLIC_URL: 'https://auth.example.com' }

    it.each([
      ['an Origin that is not allowed', { origin: 'https://evil.example' }],
      ['the string Origin "null" (sandboxed frames, file:)', { origin: 'null' }],
      ['Sec-Fetch-Site: cross-site without an Origin', { 'sec-fetch-site': 'cross-site' }],
      ['Sec-Fetch-Site: cross-site from a disallowed Origin', { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }],
      ['Sec-Fetch-Site: same-site without an Origin (an <img> on a sibling subdomain)', { 'sec-fetch-site': 'same-site' }],
    ])('403 for %s, and the token stays unspent', async (_, headers) => {
      const { cookie } = await loggedIn(env)
      const res = await refreshWith(cookie, headers)
      expect(res.status).toBe(403)
      expect(res.json).toEqual({ statusCode: 403, message: 'Cross-site request refused', data: null })
      expect(res.setCookie).toBeNull()
      expect((await refreshWith(cookie)).refreshCookie).toBeDefined()
    })

    it.each([
      ['an allowed CORS origin', { origin: 'https://app.example.com', 'sec-fetch-site': 'cross-site' }],
      ["authd's own public origin", { origin: 'https://auth.example.com', 'sec-fetch-site': 'same-origin' }],
      ['a same-origin request without Origin', { 'sec-fetch-site': 'same-origin' }],
      ['a navigation typed by the user', { 'sec-fetch-site': 'none' }],
    ])('201 for %s', async (_, headers) => {
      const { cookie } = await loggedIn(env)
      const res = await refreshWith(cookie, headers)
      expect(res.status).toBe(201)
    })

    it('answers an allowed origin with CORS credentials', async () => {
      const { cookie } = await loggedIn(env)
      const res = await refreshWith(cookie, { origin: 'https://app.example.com' })
      expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
      expect(res.headers.get('access-control-allow-credentials')).toBe('true')
    })
  })
})
