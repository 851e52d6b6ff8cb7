import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createTestContext, loginFor, type TestContext } from '../helpers'

let ctx: TestContext
beforeEach(async () => {
  ctx = await createTestContext({ AUTHD_CORS_ORIGINS: 'https://app.example.com' })
})
afterEach(() => ctx.close())

const logout = (cookie?: string, headers: Record<string, string> = {}) =>
  ctx.call('POST', '/api/v1/auth/logout', { cookie: cookie && `refreshToken=${cookie}`, headers, apiKey: null })
const refresh = (cookie: string) => ctx.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${cookie}`, apiKey: null })

describe('POST /logout', () => {
  it('revokes the session, clears the cookie and answers 200 with the envelope', async () => {
    const { email } = await ctx.addUser()
    const cookie = (await loginFor(ctx, email)).refreshCookie!
    const res = await logout(cookie)
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ statusCode: 200, message: 'Logged out', data: null })
    expect(res.refreshCookie).toBe('')
    expect(res.setCookie).toContain('Max-Age=0')
    expect(res.setCookie).toContain('Path=/api/v1/auth')
    expect(res.setCookie).toContain('Secure')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect((await refresh(cookie)).status).toBe(401)
  })

  it('ends the whole family, including a successor the client already got', async () => {
    const { email } = await ctx.addUser()
    const first = (await loginFor(ctx, email)).refreshCookie!
    const second = (await refresh(first)).refreshCookie!
    await logout(first)
    expect((await refresh(second)).status).toBe(401)
  })

  it('leaves other sessions of the same user alone', async () => {
    const { email } = await ctx.addUser()
    const phone = (await loginFor(ctx, email)).refreshCookie!
    const laptop = (await loginFor(ctx, email)).refreshCookie!
    await logout(phone)
    expect((await refresh(laptop)).status).toBe(201)
  })

  it.each([
    ['no cookie', undefined],
    ['an unknown cookie', 'B'.repeat(43)],
    ['a cookie that looks like JSON', '{"a":1}'],
  ])('is idempotent: 200 and a cleared cookie for %s', async (_, cookie) => {
    const res = await logout(cookie)
    expect(res.status).toBe(200)
    expect(res.setCookie).toContain('Max-Age=0')
  })

  it('refuses (403) a cross-site request, and the session survives', async () => {
    const { email } = await ctx.addUser()
    const cookie = (await loginFor(ctx, email)).refreshCookie!
    const res = await logout(cookie, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })
    expect(res.status).toBe(403)
    expect(res.json).toEqual({ statusCode: 403, message: 'Cross-site request refused', data: null })
    expect(res.setCookie).toBeNull()
    expect((await refresh(cookie)).status).toBe(201)
  })
})
