import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { setUserDisabled } from '../../src/core/accounts/users'
import { createTestContext, type TestContext } from '../helpers'
import { otpIn, sentTo, startSmtp, type TestSmtp } from '../smtp'

const MESSAGE = 'If the e-mail is registered, a password-reset OTP has been sent'
let ctx: TestContext
let smtp: TestSmtp
beforeEach(async () => {
  smtp = await startSmtp()
  ctx = await createTestContext({ AUTHD_SMTP_URL: smtp.url, AUTHD_MAIL_FROM: 'Acme Auth <auth@acme.example>' })
})
afterEach(async () => {
  ctx.close()
  await smtp.close()
})

const forgot = (email: string, init = {}) => ctx.call('GET', `/api/v1/auth/forgot-password/${encodeURIComponent(email)}`, init)

describe('GET /forgot-password/:email', () => {
  it('answers 200 with the fixed message and the normalised address, and mails a 6-digit OTP', async () => {
    const { email } = await ctx.addUser({ email: 'ada@example.com' })
    const res = await forgot(' Ada@Example.COM ')
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ statusCode: 200, message: MESSAGE, data: 'ada@example.com' })
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(smtp.messages).toHaveLength(0) // queued, not sent inline
    expect(await ctx.deliverMail()).toBe(1)
    const mail = await smtp.waitFor(sentTo(email))
    expect(mail.subject).toBe('Acme: your password reset code')
    expect(mail.from?.text).toBe('"Acme Auth" <auth@acme.example>')
    expect(mail.text).toContain('valid for 10 minutes')
    expect(otpIn(mail)).toMatch(/^\d{6}$/)
    expect(mail.html).toContain(otpIn(mail))
    expect(mail.html).toContain('Acme')
  })

  it.each([
    ['a disabled user', async () => setUserDisabled(ctx.runtime, (await ctx.addUser({ email: 'x@example.com' })).userId, true)],
    ['a tenant-type user', async () => ctx.addUser({ email: 'x@example.com', type: 'tenant', password: undefined })],
  ])('sends nothing for %s, with the same 200', async (_, arrange) => {
    await arrange()
    const res = await forgot('x@example.com')
    expect(res.json).toEqual({ statusCode: 200, message: MESSAGE, data: 'x@example.com' })
    expect(await ctx.deliverMail()).toBe(0)
  })

  it('answers 400 for an invalid address and 401 without an API key', async () => {
    expect((await forgot('not-an-address')).json).toEqual({ statusCode: 400, message: 'email must be a valid e-mail address', data: null })
    expect((await forgot('ada@example.com', { apiKey: null })).json).toEqual({ statusCode: 401, message: 'Unauthorized', data: null })
  })
})
