// The account page's step-up (product spec §18 on the pages of §20): a sign-in older than five
// minutes is confirmed with the password, with a code of the user's authenticator app when
// they have TOTP, or with one of their passkeys: the same proofs as POST /reauthenticate, each
// refusal on its own field, a form no user could send answered as a problem, not a 500.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { createTestContext, loginFor, PASSWORD, type TestContext } from '../helpers'
import { fieldError, formOn, noticeText, PageBrowser, problemText, type PageAnswer } from '../pages'
import { SoftwareAuthenticator } from '../software-authenticator'

const ORIGIN = 'https://auth.example.com'
const FROM_AUTHD = { origin: ORIGIN }
let ctx: TestContext
let email: string
let browser: PageBrowser
let base: string
beforeEach(async () => {
  ctx = await createTestContext({ AUTHD_PUBLIC_URL: ORIGIN, AUTHD_REFUSAL_HOLD_MS: '0' })
  email = (await ctx.addUser({ email: 'ada@example.com' })).email
  browser = new PageBrowser(ctx)
  base = `/t/${ctx.tenantId}`
})
afterEach(() => ctx.close())

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const accessToken = async () => (await loginFor(ctx, email)).json.data.response.accessToken as string
const currentCode = (secret: string) => totpCode(secret, totpStep(ctx.clock.now()))

/** Turns TOTP on through the API: its secret. */
async function withTotp(): Promise<string> {
  const token = await accessToken()
  const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })).json.data
  expect((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), body: { code: currentCode(secret) } })).status).toBe(200)
  ctx.clock.advance(30)
  return secret
}

/** Signs the page browser in (with the second factor when `secret` is given), then lets the sign-in age past the step-up window. */
async function signedInLongAgo(secret?: string): Promise<PageAnswer> {
  let answer = await browser.submit(await browser.get(`${base}/login`), '/login', { email, password: PASSWORD }, FROM_AUTHD)
  if (secret) answer = await browser.submit(answer, '/login/second-factor', { code: currentCode(secret) }, FROM_AUTHD)
  expect(answer.location).toBe(`${base}/account`)
  ctx.clock.advance(6 * 60)
  const account = await browser.get(`${base}/account`)
  expect(formOn(account.html, '/account/reauthenticate').action).toBe(`${base}/account/reauthenticate`)
  return account
}

const canChangePassword = async () => (await browser.get(`${base}/account`)).html.includes(`action="${base}/account/password"`)

describe('step-up on the account page', () => {
  it('takes a TOTP code from a user who has TOTP: empty and wrong codes on the code field, the used code refused, the current one lets the changes through', async () => {
    const secret = await withTotp()
    const account = await signedInLongAgo(secret)
    expect(account.html).toContain('<h2>Confirm it is you</h2>')
    expect(account.html).toContain('Or enter a code from your authenticator app.')
    const empty = await browser.submit(account, '/account/reauthenticate/code', { code: '' }, FROM_AUTHD)
    expect({ status: empty.status, code: fieldError(empty.html, 'code') }).toEqual({ status: 400, code: 'Fill in this field.' })
    const right = currentCode(secret)
    const wrong = await browser.submit(account, '/account/reauthenticate/code', { code: right === '000000' ? '111111' : '000000' }, FROM_AUTHD)
    expect({ status: wrong.status, code: fieldError(wrong.html, 'code'), password: fieldError(wrong.html, 'password') }).toEqual({ status: 400, code: 'The code is wrong or was used already.', password: null })
    expect(await canChangePassword()).toBe(false)
    const proved = await browser.submit(account, '/account/reauthenticate/code', { code: right }, FROM_AUTHD)
    expect(proved.location).toBe(`${base}/account?done=reauth`)
    expect(noticeText((await browser.get(proved.location!)).html)).toBe('Thank you. You can change your password in the next 5 minutes.')
    expect(await canChangePassword()).toBe(true)
    // A code proves once: the same one again (after the window) is refused.
    ctx.clock.advance(6 * 60)
    const replayed = await browser.submit(await browser.get(`${base}/account`), '/account/reauthenticate/code', { code: right }, FROM_AUTHD)
    expect(fieldError(replayed.html, 'code')).toBe('The code is wrong or was used already.')
  })

  it('offers no code to a user without TOTP, nor a passkey to one without passkeys; a code sent anyway is refused', async () => {
    const account = await signedInLongAgo()
    expect(() => formOn(account.html, '/account/reauthenticate/code')).toThrow()
    expect(() => formOn(account.html, '/account/reauthenticate/passkey')).toThrow()
    const sent = await browser.post(`${base}/account/reauthenticate/code`, { ...formOn(account.html, '/account/reauthenticate').hidden, code: '123456' }, FROM_AUTHD)
    expect({ status: sent.status, problem: problemText(sent.html) }).toEqual({ status: 400, problem: 'There is a problem The code is wrong or was used already.' })
    expect(await canChangePassword()).toBe(false)
  })

  it("takes a passkey's credential for the sign-in options: the user's own, not another's; no credential is a problem of the form", async () => {
    const mine = new SoftwareAuthenticator('auth.example.com', ORIGIN)
    const token = await accessToken()
    const started = (await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer(token) })).json.data
    expect((await ctx.call('POST', '/api/v1/auth/passkeys/register', { headers: bearer(token), body: { challengeId: started.challengeId, response: mine.register(started.options) } })).status).toBe(201)
    const account = await signedInLongAgo()
    const passkeyForm = formOn(account.html, '/account/reauthenticate/passkey')
    expect(account.html).toContain('data-options-url="' + `${base}/login/passkey/options"`)
    const options = async () => JSON.parse((await browser.post(`${base}/login/passkey/options`, passkeyForm.hidden, FROM_AUTHD)).html)

    const none = await browser.post(`${base}/account/reauthenticate/passkey`, passkeyForm.hidden, FROM_AUTHD)
    expect({ status: none.status, problem: problemText(none.html) }).toEqual({ status: 400, problem: 'There is a problem The passkey could not confirm it is you. Try again, or enter your password.' })
    const stranger = new SoftwareAuthenticator('auth.example.com', ORIGIN)
    stranger.register({ challenge: 'x', rp: { id: 'auth.example.com' }, user: { id: 'someone' } })
    const foreign = await options()
    const refused = await browser.post(`${base}/account/reauthenticate/passkey`, { ...passkeyForm.hidden, challengeId: foreign.challengeId, response: JSON.stringify(stranger.assert(foreign.options)) }, FROM_AUTHD)
    expect({ status: refused.status, problem: problemText(refused.html) }).toEqual({ status: 400, problem: 'There is a problem The passkey could not confirm it is you. Try again, or enter your password.' })
    expect(await canChangePassword()).toBe(false)

    const live = await options()
    const proved = await browser.post(`${base}/account/reauthenticate/passkey`, { ...passkeyForm.hidden, challengeId: live.challengeId, response: JSON.stringify(mine.assert(live.options)) }, FROM_AUTHD)
    expect(proved.location).toBe(`${base}/account?done=reauth`)
    expect(await canChangePassword()).toBe(true)
  })

  it('in German too', async () => {
    const secret = await withTotp()
    browser = new PageBrowser(ctx, { 'accept-language': 'de' })
    const page = await signedInLongAgo(secret)
    expect(page.html).toContain('<h2>Bestätigen Sie, dass Sie es sind</h2>')
    expect(page.html).toContain('Oder geben Sie einen Code aus Ihrer Authenticator-App ein.')
    const right = currentCode(secret)
    const wrong = await browser.submit(page, '/account/reauthenticate/code', { code: right === '000000' ? '111111' : '000000' }, FROM_AUTHD)
    expect(fieldError(wrong.html, 'code')).toBe('Der Code ist falsch oder wurde schon verwendet.')
  })
})
