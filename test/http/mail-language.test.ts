// The mails speak the language of the request that caused them (product spec §20): a German
// browser's forgot page brings a German mail, received over real SMTP, an English one an
// English mail; the API does the same from its Accept-Language; a retried mail keeps its
// language (it is composed when queued); and a request that names no language we have gets English.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { updateTenantPages } from '../../src/core/tenants/tenant-pages'
import { createTestContext, type TestContext } from '../helpers'
import { noticeText, PageBrowser } from '../pages'
import { otpIn, sentTo, startSmtp, type TestSmtp } from '../smtp'

const GERMAN = 'de-DE,de;q=0.9,en;q=0.5'
let ctx: TestContext
let smtp: TestSmtp
let base: string
beforeEach(async () => {
  smtp = await startSmtp()
  ctx = await createTestContext({ AUTHD_SMTP_URL: smtp.url })
  base = `/t/${ctx.tenantId}`
})
afterEach(async () => {
  await ctx.close()
  await smtp.close()
})

/** Asks for a reset code on the forgot page, as a browser sending `acceptLanguage`, and returns the mail it receives. */
async function forgotOnPage(email: string, acceptLanguage: string) {
  const browser = new PageBrowser(ctx, { 'accept-language': acceptLanguage })
  const answered = await browser.submit(await browser.get(`${base}/forgot`), '/forgot', { email })
  expect(answered.status).toBe(200)
  await ctx.deliverMail()
  return { browser, answered, mail: await smtp.waitFor(sentTo(email)) }
}

describe('a mail caused on the pages', () => {
  it("is German for a German browser's forgot page, and so is the notice after the reset on the reset page", async () => {
    const { email } = await ctx.addUser({ email: 'jorg@example.com', firstName: 'Jörg' })
    const { browser, answered, mail } = await forgotOnPage(email, GERMAN)
    expect(noticeText(answered.html)).toStartWith('Ist die E-Mail-Adresse registriert, wurde ein Code an sie gesendet.')
    expect(mail.subject).toBe('Acme: Ihr Code zum Zurücksetzen des Passworts')
    expect(mail.text).toContain('Hallo Jörg,')
    expect(mail.text).toContain('Er ist 10 Minuten lang gültig und kann einmal verwendet werden.')
    expect(mail.html).toContain('<html lang="de">')

    const reset = await browser.submit(await browser.get(`${base}/reset`), '/reset', { email, code: otpIn(mail), newPassword: 'ein ganz neues Passwort von mir' })
    expect(reset.location).toBe(`${base}/login?done=reset`)
    await ctx.deliverMail()
    const changed = await smtp.waitFor((m) => sentTo(email)(m) && m !== mail)
    expect(changed.subject).toBe('Acme: Ihr Passwort wurde geändert')
    expect(changed.text).toContain('alle Sitzungen wurden abgemeldet')
  })

  it("is English for an English browser's forgot page, and for one whose languages authd has no catalogue of", async () => {
    const { email } = await ctx.addUser({ email: 'ada@example.com' })
    const { mail } = await forgotOnPage(email, 'en-GB,en;q=0.9')
    expect(mail.subject).toBe('Acme: your password reset code')
    expect(mail.text).toContain('Hello Ada,')
    expect(mail.text).toContain('It is valid for 10 minutes and can be used once.')
    const { email: other } = await ctx.addUser({ email: 'amelie@example.com' })
    ctx.clock.advance(61)
    expect((await forgotOnPage(other, 'fr-FR,fr;q=0.9')).mail.subject).toBe('Acme: your password reset code')
  })
})

describe('a mail caused through the API', () => {
  it('is written in the language of its Accept-Language, and a retry after SMTP refused it keeps that language', async () => {
    const { email } = await ctx.addUser({ email: 'jorg@example.com', firstName: 'Jörg' })
    smtp.refusing = true
    const asked = await ctx.call('GET', `/api/v1/auth/forgot-password/${email}`, { headers: { 'accept-language': 'de' } })
    expect(asked.status).toBe(200)
    expect(await ctx.deliverMail()).toBe(1)
    expect(smtp.messages).toHaveLength(0)
    smtp.refusing = false
    ctx.clock.advance(60)
    expect(await ctx.deliverMail()).toBe(1)
    const mail = await smtp.waitFor(sentTo(email))
    expect(mail.subject).toBe('Acme: Ihr Code zum Zurücksetzen des Passworts')
  })

  it('is English without Accept-Language', async () => {
    const { email } = await ctx.addUser({ email: 'ada@example.com' })
    await ctx.call('GET', `/api/v1/auth/forgot-password/${email}`)
    await ctx.deliverMail()
    expect((await smtp.waitFor(sentTo(email))).subject).toBe('Acme: your password reset code')
  })

  it("writes an invitation made through the admin API in the admin request's language, its link to the invite page", async () => {
    const { key } = await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })
    const body = { email: 'jorg@example.com', firstName: 'Jörg', lastName: 'Schmidt', invite: true }
    const created = await ctx.call('POST', '/api/v1/admin/users', { apiKey: key, headers: { 'accept-language': 'de-AT' }, body })
    expect(created.status).toBe(201)
    await ctx.deliverMail()
    const mail = await smtp.waitFor(sentTo(body.email))
    expect(mail.subject).toBe('Acme: Legen Sie Ihr Passwort fest')
    expect(mail.text).toMatch(new RegExp(`^Legen Sie Ihr Passwort hier fest: \\S+/t/${ctx.tenantId}/invite#token=`, 'm'))
    expect(mail.html).toContain('>Passwort festlegen</a>')
  })
})

describe('a tenant with a display name (branding)', () => {
  it('is called by it in every mail, as on its pages: the reset code and the password-changed notice', async () => {
    await updateTenantPages(ctx.runtime, ctx.tenantId, { displayName: 'Acme Corporation' })
    const { email } = await ctx.addUser({ email: 'grace@example.com', firstName: 'Grace' })
    const { browser, mail } = await forgotOnPage(email, 'en')
    expect(mail.subject).toBe('Acme Corporation: your password reset code')
    await browser.submit(await browser.get(`${base}/reset`), '/reset', { email, code: otpIn(mail), newPassword: 'a brand new passphrase of mine' })
    await ctx.deliverMail()
    const changed = await smtp.waitFor((m) => sentTo(email)(m) && m !== mail)
    expect(changed.subject).toBe('Acme Corporation: your password was changed')
  })
})
