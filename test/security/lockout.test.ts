// A lock an attacker can trigger never keeps the owner out, while every client's guessing
// budget stays bounded. The owner's browser carries a device cookie from an earlier login (or
// a password change) and is held to its own budget; an attacker without one shares the
// account's budget, which is stated per day in docs/security.md and measured here.
import { afterEach, describe, expect, it } from 'bun:test'
import { createTestContext, PASSWORD, requestOtp, type CallResult, type TestContext } from '../helpers'

// Refusals leave at once here: these tests walk accounts through hundreds of refused logins,
// and the hold before a refusal is sent (server/errors.ts) is tested in http/app and http/login.
const AT_ONCE = { AUTHD_REFUSAL_HOLD_MS: '0' }

let ctx: TestContext
afterEach(() => ctx?.close())

const LOGIN = '/api/v1/auth/login'
const deviceCookieOf = (r: CallResult) => /(?:^|,\s*)authdDevice=([^;]*)/.exec(r.setCookie ?? '')?.[1]
const login = (email: string, password: string, init: { peer?: string; device?: string; headers?: Record<string, string> } = {}) =>
  ctx.call('POST', LOGIN, { body: { email, password }, peer: init.peer ?? '203.0.113.7', headers: init.headers, cookie: init.device ? `authdDevice=${init.device}` : undefined })
/** 100 failed logins, each from its own IP: the account-wide back-off an attacker can set. */
async function lockFromManyIps(email: string) {
  for (let i = 0; i < 100; i++) expect((await login(email, 'attacker guess', { peer: `10.9.${i >> 8}.${i & 255}` })).status).toBe(401)
  expect((await login(email, PASSWORD, { peer: '192.0.2.77' })).status).toBe(429)
}

describe('the account-wide login back-off, set by an attacker', () => {
  it("does not keep the owner's browser out: a device cookie from an earlier login exempts it", async () => {
    ctx = await createTestContext(AT_ONCE)
    const { email } = await ctx.addUser()
    const earlier = await login(email, PASSWORD)
    const device = deviceCookieOf(earlier)!
    expect(earlier.setCookie).toMatch(/authdDevice=[^;]+; Max-Age=31536000; Path=\/api\/v1\/auth; HttpOnly; Secure; SameSite=None/)
    await lockFromManyIps(email)
    const owner = await login(email, PASSWORD, { peer: '192.0.2.77', device })
    expect(owner.status).toBe(201)
    expect(deviceCookieOf(owner)).toBe(device)
    // The cookie is good for its own account only.
    const { email: other } = await ctx.addUser()
    await lockFromManyIps(other)
    expect((await login(other, PASSWORD, { peer: '192.0.2.77', device })).status).toBe(429)
  })

  it('does not keep the owner out for good either: a password reset makes their browser a trusted device', async () => {
    ctx = await createTestContext(AT_ONCE)
    const { email } = await ctx.addUser()
    await lockFromManyIps(email)
    const otp = await requestOtp(ctx, email)
    const changed = await ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp, newPassword: 'my own fresh passphrase' }, peer: '192.0.2.77' })
    expect(changed.status).toBe(200)
    const device = deviceCookieOf(changed)!
    expect(device).toBeDefined()
    expect((await login(email, 'my own fresh passphrase', { peer: '192.0.2.77', device })).status).toBe(201)
  })

  it('cannot be set from one IPv6 /64 behind a trusted proxy: its addresses share one back-off', async () => {
    ctx = await createTestContext({ ...AT_ONCE, AUTHD_TRUSTED_PROXIES: '127.0.0.1' })
    const { email } = await ctx.addUser()
    const statuses = new Set<number>()
    for (let i = 0; i < 100; i++) {
      statuses.add((await login(email, 'attacker guess', { peer: '127.0.0.1', headers: { 'x-forwarded-for': `2001:db8:6:6::${(i + 1).toString(16)}` } })).status)
    }
    expect([...statuses].sort()).toEqual([401, 429])
    // Without any device cookie, from another network, the owner logs in.
    expect((await login(email, PASSWORD, { peer: '127.0.0.1', headers: { 'x-forwarded-for': '198.51.100.20' } })).status).toBe(201)
  })

  it("a trusted device's own guesses are bounded: 5, then its own back-off", async () => {
    ctx = await createTestContext(AT_ONCE)
    const { email } = await ctx.addUser()
    const device = deviceCookieOf(await login(email, PASSWORD))!
    for (let i = 0; i < 5; i++) expect((await login(email, 'wrong guess here', { device, peer: `10.8.0.${i}` })).status).toBe(401)
    expect((await login(email, PASSWORD, { device, peer: '10.8.0.99' })).status).toBe(429)
    // ...and a forged or foreign cookie is no device at all.
    expect((await login(email, PASSWORD, { device: `${device.split('.')[0]}.forged`, peer: '10.8.1.1' })).status).toBe(201)
  })

  it('bounds an attacker without a device cookie to 204 guesses per account per day, from any number of IPs', async () => {
    ctx = await createTestContext(AT_ONCE)
    const { email } = await ctx.addUser()
    const start = ctx.clock.now()
    let guesses = 0
    let ip = 0
    while (ctx.clock.now() - start < 86_400_000 - 1000) {
      ip++
      const r = await login(email, 'attacker guess', { peer: `10.${ip >> 16}.${(ip >> 8) & 255}.${ip & 255}` })
      if (r.status === 401) guesses++
      else ctx.clock.advance(Number(r.headers.get('retry-after')))
    }
    // 100 failures; 9 while the back-off doubles from 1 s to 512 s (17 minutes in all); then
    // one per 15-minute cap for the rest of the day: 95.
    expect(guesses).toBe(204)
  }, 60_000)
})

describe('the account-wide OTP lock', () => {
  it('does not count wrong codes sent when no code was issued: the owner can still reset', async () => {
    ctx = await createTestContext({ ...AT_ONCE, AUTHD_PASSWORD_IP_PER_10MIN: '1000' })
    const { email } = await ctx.addUser()
    for (let i = 0; i < 25; i++) {
      const r = await ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp: String(100000 + i), newPassword: 'the attacker picked this one' }, peer: `10.7.0.${i}` })
      expect(r.json).toEqual({ statusCode: 400, message: 'Invalid or expired OTP', data: null })
    }
    const otp = await requestOtp(ctx, email)
    expect((await ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp, newPassword: 'my own fresh passphrase' } })).status).toBe(200)
  })

  it("set by wrong codes against live OTPs, does not keep the owner's trusted browser from resetting", async () => {
    ctx = await createTestContext({ ...AT_ONCE, AUTHD_PASSWORD_IP_PER_10MIN: '1000' })
    const { email } = await ctx.addUser()
    const device = deviceCookieOf(await login(email, PASSWORD))!
    const change = (otp: string, cookie?: string) =>
      ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp, newPassword: 'a fresh passphrase here' }, cookie: cookie && `authdDevice=${cookie}` })
    for (let round = 0; round < 4; round++) {
      const right = await requestOtp(ctx, email)
      const wrong = right === '000000' ? '000001' : '000000'
      for (let i = 0; i < 5; i++) expect((await change(wrong)).status).toBe(400)
    }
    const right = await requestOtp(ctx, email)
    expect((await change(right)).status).toBe(429)
    expect((await change(right, device)).status).toBe(200)
  })
})
