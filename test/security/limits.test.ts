// Abuse limits (product spec §9, §9a): each promise, named after it.
import { afterEach, describe, expect, it } from 'bun:test'
import { openRuntime } from '../../src/runtime'
import { createApp } from '../../src/server/app'
import { silentLogger } from '../../src/log'
import { loadConfig } from '../../src/config'
import { createTestContext, PASSWORD, queryDatabase, requestOtp as requestOtpFor, type CallResult, type TestContext } from '../helpers'
import { formOn, PageBrowser } from '../pages'

let ctx: TestContext
afterEach(() => ctx?.close())

const tooMany = { statusCode: 429, message: 'Too many requests', data: null }
const attempt = (email: string, password: string, peer = '203.0.113.7') =>
  ctx.call('POST', '/api/v1/auth/login', { body: { email, password }, peer })
const shape = (r: CallResult) => ({ status: r.status, body: r.text, retryAfter: r.headers.get('retry-after') })

describe('login back-off per (account, client IP)', () => {
  it('backs off after 5 consecutive failures, 1 s doubling, and a success resets it', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    for (let i = 0; i < 5; i++) expect((await attempt(email, 'wrong password guess')).status).toBe(401)
    const limited = await attempt(email, PASSWORD)
    expect(limited.json).toEqual(tooMany)
    expect(limited.headers.get('retry-after')).toBe('1')
    ctx.clock.advance(1)
    expect((await attempt(email, 'wrong password guess')).status).toBe(401) // 6th failure: 2 s
    expect((await attempt(email, PASSWORD)).headers.get('retry-after')).toBe('2')
    ctx.clock.advance(2)
    expect((await attempt(email, PASSWORD)).status).toBe(201)
    // The run starts over: four failures are under the threshold again (without the reset,
    // the 7th failure in a row would hold the next attempt back 4 s).
    for (let i = 0; i < 4; i++) expect((await attempt(email, 'wrong password guess')).status).toBe(401)
    expect((await attempt(email, PASSWORD)).status).toBe(201)
  })

  it('caps the back-off at 15 minutes', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    for (let i = 0; i < 20; i++) {
      await attempt(email, 'wrong password guess')
      ctx.clock.advance(15 * 60)
    }
    expect((await attempt(email, 'x')).status).toBe(401)
    expect((await attempt(email, PASSWORD)).headers.get('retry-after')).toBe(String(15 * 60))
  })

  it('does not lock the real user out from another IP', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    for (let i = 0; i < 8; i++) await attempt(email, 'attacker guess number', '198.51.100.66')
    expect((await attempt(email, PASSWORD, '198.51.100.66')).status).toBe(429)
    expect((await attempt(email, PASSWORD, '203.0.113.7')).status).toBe(201)
  })

  it('walks an unknown e-mail through exactly the same answers as a registered one', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    const walk = async (address: string) => {
      const seen = []
      for (let i = 0; i < 7; i++) seen.push(shape(await attempt(address, 'wrong password guess')))
      ctx.clock.advance(1)
      seen.push(shape(await attempt(address, 'wrong password guess')))
      seen.push(shape(await attempt(address, 'wrong password guess')))
      return seen
    }
    const registered = await walk(email)
    expect(registered.map((s) => s.status)).toEqual([401, 401, 401, 401, 401, 429, 429, 401, 429])
    expect(await walk('nobody@example.com')).toEqual(registered)
  })

  it('survives a restart (the counters are in the database)', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    for (let i = 0; i < 5; i++) await attempt(email, 'wrong password guess')
    const restarted = await openRuntime(ctx.runtime.config, { clock: ctx.clock })
    try {
      const res = await createApp(restarted, silentLogger).handle(
        new Request('http://localhost/api/v1/auth/login', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': ctx.apiKey },
          body: JSON.stringify({ email, password: PASSWORD }),
        }),
      )
      // (no socket peer here: the restarted app sees 'unknown', so only the per-account run applies)
      expect(res.status).toBe(201)
      expect((await attempt(email, PASSWORD)).status).toBe(429)
    } finally {
      restarted.close()
    }
  })
})

describe('login back-off per account across IPs (NIST: at most 100 consecutive failures)', () => {
  it('backs off after 100 consecutive failures from 100 different IPs', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    for (let i = 0; i < 100; i++) expect((await attempt(email, 'distributed guess', `10.1.${i >> 8}.${i & 255}`)).status).toBe(401)
    const fresh = await attempt(email, PASSWORD, '192.0.2.200')
    expect(fresh.json).toEqual(tooMany)
    expect(fresh.headers.get('retry-after')).toBe('1')
  })
})

describe('failed logins per client IP across accounts (credential stuffing)', () => {
  it('refuses an IP after 100 failed logins in 10 minutes, other IPs unaffected', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    for (let i = 0; i < 100; i++) expect((await attempt(`victim${i}@example.com`, 'stuffed password')).status).toBe(401)
    const blocked = await attempt(email, PASSWORD)
    expect(blocked.json).toEqual(tooMany)
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(590)
    expect((await attempt(email, PASSWORD, '192.0.2.1')).status).toBe(201)
    ctx.clock.advance(600)
    expect((await attempt(email, PASSWORD)).status).toBe(201)
  })
})

describe('IPv6 clients', () => {
  it('are limited by their /64: fresh addresses in the same /64 share one budget', async () => {
    ctx = await createTestContext({ AUTHD_TRUSTED_PROXIES: '127.0.0.1' })
    const { email } = await ctx.addUser()
    const from = (ip: string) => ({ 'x-forwarded-for': ip })
    for (let i = 0; i < 100; i++) {
      const r = await ctx.call('POST', '/api/v1/auth/login', { body: { email: `victim${i}@example.com`, password: 'stuffed password' }, headers: from(`2001:db8:1:2::${(i + 1).toString(16)}`) })
      expect(r.status).toBe(401)
    }
    const sameNetwork = await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, headers: from('2001:db8:1:2:ffff::9') })
    expect(sameNetwork.json).toEqual(tooMany)
    const otherNetwork = await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, headers: from('2001:db8:1:3::1') })
    expect(otherNetwork.status).toBe(201)
  })
})

describe('forgot-password limits', () => {
  it('per address: one mail a minute and five an hour, with the same 200 every time', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    const forgot = () => ctx.call('GET', `/api/v1/auth/forgot-password/${email}`)
    const first = await forgot()
    for (let i = 0; i < 3; i++) expect((await forgot()).text).toBe(first.text) // within the minute: no mail
    for (let i = 0; i < 6; i++) {
      ctx.clock.advance(61)
      expect((await forgot()).text).toBe(first.text)
    }
    expect((await ctx.runtime.store.outbox.list({})).length).toBe(5)
    ctx.clock.advance(3600)
    await forgot()
    expect((await ctx.runtime.store.outbox.list({})).length).toBe(6)
  })

  it("per address: requests that sent nothing do not use up the owner's budget", async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    for (let i = 0; i < 50; i++) await ctx.call('GET', `/api/v1/auth/forgot-password/${email}`, { peer: `198.51.100.${i}` })
    ctx.clock.advance(61)
    await ctx.call('GET', `/api/v1/auth/forgot-password/${email}`)
    expect((await ctx.runtime.store.outbox.list({})).length).toBe(2)
  })

  it('per client IP: 30 an hour, then 429 with Retry-After', async () => {
    ctx = await createTestContext()
    for (let i = 0; i < 30; i++) expect((await ctx.call('GET', `/api/v1/auth/forgot-password/u${i}@example.com`)).status).toBe(200)
    const limited = await ctx.call('GET', '/api/v1/auth/forgot-password/another@example.com')
    expect(limited.json).toEqual(tooMany)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3500)
  })
})

describe('change-password and setup-password per client IP', () => {
  it.each([
    ['/api/v1/auth/change-password', (i: number) => ({ email: `a${i}@example.com`, otp: '123456', newPassword: 'some new passphrase' })],
    ['/api/v1/auth/setup-password', () => ({ password: 'some new passphrase' })],
  ])('%s: 30 per 10 minutes, then 429', async (path, bodyFor) => {
    ctx = await createTestContext()
    for (let i = 0; i < 30; i++) expect((await ctx.call('POST', path, { body: bodyFor(i) })).status).not.toBe(429)
    const body = bodyFor(99)
    const limited = await ctx.call('POST', path, { body })
    expect(limited.json).toEqual(tooMany)
    expect((await ctx.call('POST', path, { body, peer: '192.0.2.9' })).status).not.toBe(429)
  })
})

describe('passkey sign-in options per client IP (each stores a challenge)', () => {
  it('are 300 per 10 minutes across the API and the login page, then 429 with no challenge stored', async () => {
    ctx = await createTestContext({ AUTHD_PASSKEY_OPTIONS_IP_PER_10MIN: '3' })
    const challenges = async () => Number((await queryDatabase<{ n: number }>(ctx, 'SELECT COUNT(*) AS n FROM webauthn_challenges'))[0]!.n)
    const options = (peer = '127.0.0.1') => ctx.call('POST', '/api/v1/auth/passkeys/login/options', { body: {}, peer })
    expect((await options()).status).toBe(200)
    expect((await options()).status).toBe(200)
    const browser = new PageBrowser(ctx)
    const login = await browser.get(`/t/${ctx.tenantId}/login`)
    const fromPage = await browser.post(`/t/${ctx.tenantId}/login/passkey/options`, formOn(login.html, '/login').hidden)
    expect(fromPage.status).toBe(200)
    const limited = await options()
    expect(limited.json).toEqual(tooMany)
    expect((await browser.post(`/t/${ctx.tenantId}/login/passkey/options`, formOn(login.html, '/login').hidden)).status).toBe(429)
    expect(await challenges()).toBe(3)
    expect((await options('192.0.2.9')).status).toBe(200)
    ctx.clock.advance(10 * 60)
    expect((await options()).status).toBe(200)
  })

  it('are judged in a burst as in a row: 10 at once against a budget of 3 give 3 options and 3 challenges', async () => {
    ctx = await createTestContext({ AUTHD_PASSKEY_OPTIONS_IP_PER_10MIN: '3', AUTHD_REFUSAL_HOLD_MS: '0' })
    const answers = await Promise.all(Array.from({ length: 10 }, () => ctx.call('POST', '/api/v1/auth/passkeys/login/options', { body: {} })))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 429, 429, 429, 429, 429, 429, 429])
    expect(Number((await queryDatabase<{ n: number }>(ctx, 'SELECT COUNT(*) AS n FROM webauthn_challenges'))[0]!.n)).toBe(3)
  })

  it('default to 300 per 10 minutes', () => {
    expect(loadConfig({}, { dataDir: '/nonexistent' }).limits.passkeyOptionsIpPer10Min).toBe(300)
  })
})

describe('failed OTP tries are counted per account across OTPs (NIST)', () => {
  it('after 20 wrong codes, change-password is refused for 15 minutes, even with a new, right code', async () => {
    ctx = await createTestContext({ AUTHD_PASSWORD_IP_PER_10MIN: '1000' })
    const { email } = await ctx.addUser()
    const requestOtp = () => requestOtpFor(ctx, email)
    const change = (otp: string) => ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp, newPassword: 'a fresh passphrase here' } })
    for (let round = 0; round < 4; round++) {
      const right = await requestOtp()
      const wrong = right === '000000' ? '000001' : '000000'
      for (let i = 0; i < 5; i++) expect((await change(wrong)).status).toBe(400)
    }
    // 20 failures across four OTPs: asking for a new one does not reset the count.
    const right = await requestOtp()
    const limited = await change(right)
    expect(limited.json).toEqual(tooMany)
    expect(limited.headers.get('retry-after')).toBe(String(15 * 60 - 61))
    ctx.clock.advance(15 * 60)
    expect((await change('000000')).status).toBe(400) // the lockout is over: a plain wrong code again
    ctx.clock.advance(3600) // (this address used its five reset mails of the hour)
    expect((await change(await requestOtp())).status).toBe(200)
  })
})

describe('X-Forwarded-For', () => {
  it('is ignored from an untrusted peer: a client cannot pick a fresh IP per request', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    for (let i = 0; i < 5; i++) {
      await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: 'wrong password guess' }, headers: { 'x-forwarded-for': `198.51.100.${i}` } })
    }
    const res = await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, headers: { 'x-forwarded-for': '198.51.100.99' } })
    expect(res.status).toBe(429)
  })

  it('names the client when the peer is a trusted proxy', async () => {
    ctx = await createTestContext({ AUTHD_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' })
    const { email } = await ctx.addUser()
    for (let i = 0; i < 5; i++) {
      await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: 'wrong password guess' }, headers: { 'x-forwarded-for': '198.51.100.1, 10.2.3.4' } })
    }
    const other = await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, headers: { 'x-forwarded-for': '198.51.100.2' } })
    expect(other.status).toBe(201)
    const same = await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, headers: { 'x-forwarded-for': '198.51.100.1' } })
    expect(same.status).toBe(429)
    await ctx.runtime.refusals.flush(ctx.runtime.store)
    const [event] = await ctx.runtime.store.audit.query({ type: 'login.limited' })
    expect(event!.ip).toBe('198.51.100.1')
  })
})

