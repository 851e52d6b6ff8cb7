import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createTestContext, loginFor, PASSWORD, type TestContext } from '../helpers'
import { otpIn, sentTo, startSmtp, type TestSmtp } from '../smtp'

const NEW_PASSWORD = 'a brand new passphrase of mine'
const invalidOtp = { statusCode: 400, message: 'Invalid or expired OTP', data: null }
let ctx: TestContext
let smtp: TestSmtp
let email: string
beforeEach(async () => {
  smtp = await startSmtp()
  ctx = await createTestContext({ AUTHD_SMTP_URL: smtp.url })
  email = (await ctx.addUser({ email: 'ada@example.com' })).email
})
afterEach(async () => {
  ctx.close()
  await smtp.close()
})

/** Requests an OTP and reads it from the mail the SMTP server received. */
async function requestOtp(): Promise<string> {
  ctx.clock.advance(61) // one reset mail per address per minute
  const before = smtp.messages.length
  await ctx.call('GET', `/api/v1/auth/forgot-password/${email}`)
  await ctx.deliverMail()
  await smtp.waitFor((m) => smtp.messages.indexOf(m) >= before && sentTo(email)(m))
  return otpIn(smtp.messages.at(-1)!)
}

const change = (otp: string, newPassword = NEW_PASSWORD, who = email) =>
  ctx.call('POST', '/api/v1/auth/change-password', { body: { email: who, newPassword, otp } })
const login = (password: string) => ctx.call('POST', '/api/v1/auth/login', { body: { email, password } })

describe('POST /change-password', () => {
  it('sets the new password, answers 200 with the User, ends every session and sends a notice', async () => {
    const cookie = (await loginFor(ctx, email)).refreshCookie!
    const res = await change(await requestOtp())
    expect(res.status).toBe(200)
    expect(res.json).toEqual({
      statusCode: 200,
      message: 'Password changed successfully',
      data: { userId: expect.any(String), email, firstName: 'Ada', lastName: 'Lovelace', type: 'user', tenant: { tenantId: ctx.tenantId, name: 'Acme' } },
    })
    expect((await login(NEW_PASSWORD)).status).toBe(201)
    expect((await login(PASSWORD)).status).toBe(401)
    expect((await ctx.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${cookie}` })).status).toBe(401)
    await ctx.deliverMail()
    const notice = await smtp.waitFor((m) => m.subject === 'Acme: your password was changed')
    expect(notice.text).toContain('every session was signed out')
  })

  it('uses an OTP once', async () => {
    const otp = await requestOtp()
    expect((await change(otp)).status).toBe(200)
    expect((await change(otp, 'yet another new passphrase')).json).toEqual(invalidOtp)
  })

  it('refuses an OTP after 10 minutes', async () => {
    const otp = await requestOtp()
    ctx.clock.advance(10 * 60 + 1)
    expect((await change(otp)).json).toEqual(invalidOtp)
  })

  it('accepts the right code after 4 wrong ones, but not after 5', async () => {
    let otp = await requestOtp()
    const wrong = otp === '000000' ? '000001' : '000000'
    for (let i = 0; i < 4; i++) expect((await change(wrong)).json).toEqual(invalidOtp)
    expect((await change(otp)).status).toBe(200)

    otp = await requestOtp()
    for (let i = 0; i < 5; i++) await change(wrong, 'yet another new passphrase')
    expect((await change(otp, 'yet another new passphrase')).json).toEqual(invalidOtp)
  })

  it('replaces an older OTP with a newer one', async () => {
    const first = await requestOtp()
    const second = await requestOtp()
    if (first !== second) expect((await change(first)).json).toEqual(invalidOtp)
    expect((await change(second)).status).toBe(200)
  })

  it.each([
    ['an unknown address', (otp: string) => change(otp, NEW_PASSWORD, 'nobody@example.com')],
    ['a code that is not 6 digits', () => change('12345')],
    ['letters', () => change('abcdef')],
    ['an address with no OTP requested', async () => {
      await ctx.addUser({ email: 'grace@example.com' })
      return change('123456', NEW_PASSWORD, 'grace@example.com')
    }],
  ])('gives the same 400 for %s, never echoing the code', async (_, attempt) => {
    const otp = await requestOtp()
    const res = await attempt(otp)
    expect(res.json).toEqual(invalidOtp)
    expect(res.text).not.toContain(NEW_PASSWORD)
  })

  it('refuses a weak password (400 naming the rule) without spending the OTP', async () => {
    const otp = await requestOtp()
    expect((await change(otp, 'short')).json).toEqual({ statusCode: 400, message: 'Password must be at least 15 characters long', data: null })
    expect((await change(otp, 'passwordpassword')).json).toEqual({ statusCode: 400, message: 'Password is too common: it appears in lists of breached passwords', data: null })
    expect((await change(otp, 'lovelace forever and ever')).json).toEqual({ statusCode: 400, message: 'Password must not contain your name', data: null })
    expect((await change(otp)).status).toBe(200)
  })

  it('answers 400 for a malformed body and 401 without an API key', async () => {
    expect((await ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp: '123456' } })).json).toEqual({
      statusCode: 400,
      message: 'newPassword is required and must be a string',
      data: null,
    })
    expect((await ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp: '123456', newPassword: NEW_PASSWORD }, apiKey: null })).status).toBe(401)
  })
})
