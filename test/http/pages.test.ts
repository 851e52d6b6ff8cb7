// authd's pages (product spec §20) through app.handle, as a browser without JavaScript uses
// them (test/pages.ts): every form's bad input drawn again with the message on its field, the
// page session (listed and ended like any session), and the guards: forms from another site,
// the CSP, return_to, and the forgot page that answers alike for every address.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { addMembers, createGroup } from '../../src/core/groups/groups'
import { inviteUser } from '../../src/core/accounts/setup-password'
import { setTenantSignup } from '../../src/core/signup/signup'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { setTenantReturnToOrigins, updateTenantPages } from '../../src/core/tenants/tenant-pages'
import { createTenant } from '../../src/core/tenants/tenants'
import { createUser } from '../../src/core/accounts/users'
import { createTestContext, loginFor, PASSWORD, queryDatabase, recordStoreCalls, requestOtp, type TestContext } from '../helpers'
import { fieldError, formOn, noticeText, PageBrowser, problemText, type PageAnswer } from '../pages'

const NEW_PASSWORD = 'a brand new passphrase of mine'
let ctx: TestContext
let email: string
let browser: PageBrowser
let base: string
beforeEach(async () => {
  ctx = await createTestContext()
  email = (await ctx.addUser({ email: 'ada@example.com' })).email
  browser = new PageBrowser(ctx)
  base = `/t/${ctx.tenantId}`
})
afterEach(() => ctx.close())

async function signIn(password = PASSWORD): Promise<PageAnswer> {
  return browser.submit(await browser.get(`${base}/login`), '/login', { email, password })
}

describe('login page', () => {
  it('draws an empty field, a malformed address and a wrong password again with the message on the field; the right one signs in', async () => {
    const page = await browser.get(`${base}/login`)
    expect(page.status).toBe(200)
    const empty = await browser.submit(page, '/login', { email: '', password: '' })
    expect({ status: empty.status, email: fieldError(empty.html, 'email'), password: fieldError(empty.html, 'password') }).toEqual({ status: 400, email: 'Fill in this field.', password: 'Fill in this field.' })
    expect(empty.html).toContain('aria-describedby="f-email-error" aria-invalid="true"')
    const malformed = await browser.submit(page, '/login', { email: 'not an address', password: PASSWORD })
    expect({ status: malformed.status, email: fieldError(malformed.html, 'email') }).toEqual({ status: 400, email: 'Enter an e-mail address such as name@example.com.' })
    const wrong = await browser.submit(page, '/login', { email, password: 'not the password at all' })
    expect({ status: wrong.status, password: fieldError(wrong.html, 'password') }).toEqual({ status: 401, password: 'The e-mail address or the password is wrong.' })
    // The address is kept; the password never comes back.
    expect(wrong.html).toContain('value="ada@example.com"')
    expect(wrong.html).not.toContain('not the password at all')
    const signedIn = await signIn()
    expect({ status: signedIn.status, location: signedIn.location }).toEqual({ status: 303, location: `${base}/account` })
    expect(browser.cookies.has('authd_session')).toBe(true)
    const account = await browser.get(`${base}/account`)
    expect(account.html).toContain('<dd>ada@example.com</dd>')
  })

  it('is a session like any other: listed by GET /sessions, ended by logout-all; logout ends it', async () => {
    await signIn()
    const api = (await loginFor(ctx, email)).json.data.response.accessToken
    const sessions = await ctx.call('GET', '/api/v1/auth/sessions', { headers: { authorization: `Bearer ${api}` } })
    expect(sessions.json.data).toHaveLength(2)
    expect((await browser.get(`${base}/account`)).status).toBe(200)
    expect((await ctx.call('POST', '/api/v1/auth/logout-all', { headers: { authorization: `Bearer ${api}` } })).status).toBe(200)
    expect((await browser.get(`${base}/account`)).location).toBe(`${base}/login`)

    await signIn()
    const account = await browser.get(`${base}/account`)
    const loggedOut = await browser.submit(await browser.get(`${base}/logout`), '/logout', {})
    expect(loggedOut.location).toBe(`${base}/login?done=logout`)
    expect(noticeText((await browser.get(loggedOut.location!)).html)).toBe('You are signed out.')
    expect(browser.cookies.has('authd_session')).toBe(false)
    const [row] = await queryDatabase<{ n: number }>(ctx, 'SELECT COUNT(*) AS n FROM refresh_families WHERE revoked_at IS NULL')
    expect(Number(row!.n)).toBe(0)
    expect(account.status).toBe(200)
  })

  it('keeps the sign-in past the browser closing only with "keep me signed in" (30 days); without, the cookie ends with the browser', async () => {
    const sessionCookie = (answer: PageAnswer) => answer.headers.getSetCookie().find((c) => c.startsWith('authd_session='))!
    const once = await signIn()
    expect(sessionCookie(once)).not.toMatch(/max-age|expires/i)
    const other = new PageBrowser(ctx)
    const kept = await other.submit(await other.get(`${base}/login`), '/login', { email, password: PASSWORD, rememberMe: 'on' })
    expect(sessionCookie(kept)).toMatch(/Max-Age=2592000/)
  })

  it('keeps one session per browser: signing in again, here or at another tenant, ends the session the cookie held', async () => {
    const live = async () => Number((await queryDatabase<{ n: number }>(ctx, 'SELECT COUNT(*) AS n FROM refresh_families WHERE revoked_at IS NULL'))[0]!.n)
    await signIn()
    // (signed in, the login page sends the browser on; a second sign-in is a fresh form post)
    const again = await browser.post(`${base}/login`, { _form: formOn((await browser.get(`${base}/logout`)).html, '/logout').hidden._form!, email, password: PASSWORD })
    expect(again.location).toBe(`${base}/account`)
    expect(await live()).toBe(1)

    const beta = await createTenant(ctx.runtime, { name: 'Beta' })
    await createUser(ctx.runtime, { tenantId: beta.id, email, firstName: 'Ada', lastName: 'B', password: PASSWORD })
    const betaLogin = await browser.get(`/t/${beta.id}/login`)
    expect((await browser.submit(betaLogin, '/login', { email, password: PASSWORD })).location).toBe(`/t/${beta.id}/account`)
    expect(await live()).toBe(1)
    expect((await browser.get(`${base}/account`)).location).toBe(`${base}/login`)
    expect((await browser.get(`/t/${beta.id}/account`)).status).toBe(200)
  })

  it("keeps the page session and an app's refresh token apart: neither opens the other's door, and an app's refresh does not sign the page out", async () => {
    await signIn()
    const pageCookie = browser.cookies.get('authd_session')!
    const asRefresh = await ctx.call('GET', '/api/v1/auth/refresh-token', { apiKey: null, cookie: `refreshToken=${pageCookie}` })
    expect(asRefresh.status).toBe(401)
    expect((await browser.get(`${base}/account`)).status).toBe(200)

    const appToken = (await loginFor(ctx, email)).refreshCookie!
    const stranger = new PageBrowser(ctx)
    stranger.cookies.set('authd_session', appToken)
    expect((await stranger.get(`${base}/account`)).location).toBe(`${base}/login`)
    expect((await ctx.call('GET', '/api/v1/auth/refresh-token', { apiKey: null, cookie: `refreshToken=${appToken}` })).status).toBe(201)
  })

  it('says how long a backed-off login waits, in words that count ("in 1 second", then "in 2 seconds")', async () => {
    const page = await browser.get(`${base}/login`)
    for (let i = 0; i < 5; i++) await browser.submit(page, '/login', { email, password: 'not the password at all' })
    const held = await browser.submit(page, '/login', { email, password: PASSWORD })
    expect({ status: held.status, problem: problemText(held.html) }).toEqual({ status: 429, problem: 'There is a problem Too many attempts. Try again in 1 second.' })
    ctx.clock.advance(1)
    await browser.submit(page, '/login', { email, password: 'not the password at all' })
    const german = await browser.submit(page, '/login', { email, password: PASSWORD }, { origin: 'http://localhost', 'accept-language': 'de' })
    expect(problemText(german.html)).toContain('Zu viele Versuche. Versuchen Sie es in 2 Sekunden erneut.')
  })

  it('asks a user with TOTP for the second factor: a wrong code on its field, the right one signs in', async () => {
    const token = (await loginFor(ctx, email)).json.data.response.accessToken
    const bearer = { authorization: `Bearer ${token}` }
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer })).json.data
    expect((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: totpCode(secret, totpStep(ctx.clock.now())) } })).status).toBe(200)
    ctx.clock.advance(30)
    const challenge = await signIn()
    expect({ status: challenge.status, cookie: browser.cookies.has('authd_session') }).toEqual({ status: 200, cookie: false })
    expect(challenge.html).toContain('<h1>Two-step verification</h1>')
    const wrong = await browser.submit(challenge, '/login/second-factor', { code: '000000' === totpCode(secret, totpStep(ctx.clock.now())) ? '111111' : '000000' })
    expect({ status: wrong.status, code: fieldError(wrong.html, 'code') }).toEqual({ status: 400, code: 'The code is wrong, or this sign-in has expired. Enter a new code, or sign in again.' })
    const passed = await browser.submit(wrong, '/login/second-factor', { code: totpCode(secret, totpStep(ctx.clock.now())) })
    expect({ status: passed.status, location: passed.location, cookie: browser.cookies.has('authd_session') }).toEqual({ status: 303, location: `${base}/account`, cookie: true })
  })
})

describe('forms from another site', () => {
  it.each([
    ['an Origin of another site', { origin: 'https://evil.example' }, true],
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }, true],
    ['Origin: null without Sec-Fetch-Site', { origin: 'null' }, true],
    ['no anti-forgery token', { origin: 'http://localhost' }, false],
  ])('are refused (403, no session): %s', async (_, headers, withToken) => {
    const page = await browser.get(`${base}/login`)
    const token = withToken ? formOn(page.html, '/login').hidden : {}
    const refused = await browser.post(`${base}/login`, { ...token, email, password: PASSWORD }, headers as Record<string, string>)
    expect({ status: refused.status, type: refused.headers.get('content-type') }).toEqual({ status: 403, type: 'text/html; charset=utf-8' })
    expect(refused.html).toContain('This form was sent from another site, or it is too old.')
    expect(browser.cookies.has('authd_session')).toBe(false)
  })

  it.each([
    ['with its own Origin', { origin: 'http://rebound.example:3000', 'sec-fetch-site': 'same-origin' }],
    ['with Origin: null (a page of no-referrer)', { origin: 'null', 'sec-fetch-site': 'same-origin' }],
  ])('are refused from a name rebound to authd (DNS rebinding), %s: only AUTHD_PUBLIC_URL or a loopback name is authd', async (_, headers) => {
    const rebound = new PageBrowser(ctx, {}, 'http://rebound.example:3000')
    const page = await rebound.get(`${base}/login`)
    expect(page.status).toBe(200)
    const refused = await rebound.submit(page, '/login', { email, password: PASSWORD }, headers)
    expect(refused.status).toBe(403)
    expect(rebound.cookies.has('authd_session')).toBe(false)
    // the same form from authd's own name goes through
    const own = await browser.submit(await browser.get(`${base}/login`), '/login', { email, password: PASSWORD }, headers.origin === 'null' ? headers : { origin: 'http://localhost' })
    expect(own.location).toBe(`${base}/account`)
  })

  it("refuses a signed-out browser's token once signed in (the token is bound to the session)", async () => {
    const loginPage = await browser.get(`${base}/login`)
    await signIn()
    const stale = await browser.post(`${base}/account/logout-all`, formOn(loginPage.html, '/login').hidden)
    expect(stale.status).toBe(403)
  })
})

describe('every page', () => {
  it('carries a CSP of its own nonce, refuses framing and loads nothing from elsewhere', async () => {
    for (const path of ['/login', '/forgot', '/reset', '/invite']) {
      const page = await browser.get(`${base}${path}`)
      const csp = page.headers.get('content-security-policy')!
      const nonce = /style-src 'nonce-([^']+)'/.exec(csp)![1]
      expect(csp).toStartWith("default-src 'none'; ")
      expect(csp).toContain("frame-ancestors 'none'")
      expect(page.html).toContain(`<style nonce="${nonce}">`)
      expect(page.headers.get('x-frame-options')).toBe('DENY')
      expect(page.headers.get('cache-control')).toBe('no-store')
      expect(page.html).not.toMatch(/(src|href)="(https?:)?\/\//)
    }
    expect((await browser.get(`${base}/invite`)).headers.get('referrer-policy')).toBe('no-referrer')
  })

  it('is found by the slug the admin gives the tenant; an unknown tenant is an HTML 404', async () => {
    await updateTenantPages(ctx.runtime, ctx.tenantId, { slug: 'Acme', displayName: 'Acme Corp', accentColor: '#FFD700' })
    const page = await browser.get('/t/acme/login')
    expect(page.html).toContain('<h1>Sign in to Acme Corp</h1>')
    // A light accent gets dark text on its buttons.
    expect(page.html).toContain('--accent: #ffd700; --on-accent: #000000;')
    const unknown = await browser.get('/t/nobody/login')
    expect({ status: unknown.status, type: unknown.headers.get('content-type') }).toEqual({ status: 404, type: 'text/html; charset=utf-8' })
    expect(unknown.html).toContain('There is no such page.')
  })

  it('speaks German to a browser that asks for it', async () => {
    const german = new PageBrowser(ctx, { 'accept-language': 'fr;q=0.9, de-CH;q=0.8, en;q=0.5' })
    const page = await german.get(`${base}/login`)
    expect(page.html).toContain('<html lang="de">')
    const wrong = await german.submit(page, '/login', { email, password: 'not the password at all' })
    expect(fieldError(wrong.html, 'password')).toBe('Die E-Mail-Adresse oder das Passwort ist falsch.')
    // A language that is a property of every object is no catalogue: English.
    expect((await new PageBrowser(ctx, { 'accept-language': 'constructor, __proto__;q=0.9' }).get(`${base}/login`)).html).toContain('<html lang="en">')
  })

  it('ignores a ?done= it does not know, also the name of a property every object has (never a 500)', async () => {
    for (const done of ['constructor', '__proto__', 'toString', 'nothing']) {
      const page = await browser.get(`${base}/login?done=${done}`)
      expect({ done, status: page.status }).toEqual({ done, status: 200 })
      expect(page.html).toContain('<h1>Sign in to')
    }
    expect(noticeText((await browser.get(`${base}/login?done=logout`)).html)).toBe('You are signed out.')
    expect(noticeText((await browser.get(`${base}/login?done=constructor`)).html)).toBeNull()
  })

  it('answers a request no form sends (a NUL in a field) with a 4xx page that does not blame the server', async () => {
    const page = await browser.get(`${base}/login`)
    const nul = await browser.submit(page, '/login', { email: 'ada\u0000@example.com', password: PASSWORD })
    expect(nul.status).toBe(400)
    expect(/<p role="alert">([^<]*)<\/p>/.exec(nul.html)?.[1]).toBe('This request could not be read. Open the page again and send the form from there.')
  })

  it('takes forms only: the same fields as JSON change nothing and get the 4xx page', async () => {
    await signIn()
    const account = await browser.get(`${base}/account`)
    const token = /name="_form" value="([^"]+)"/.exec(account.html)![1]!
    const json = await browser.send('POST', `${base}/account/logout-all`, JSON.stringify({ _form: token }), { origin: 'http://localhost', 'content-type': 'application/json' })
    expect({ status: json.status, type: json.headers.get('content-type') }).toEqual({ status: 400, type: 'text/html; charset=utf-8' })
    expect((await browser.get(`${base}/account`)).status).toBe(200)
  })
})

describe('return_to', () => {
  it("follows a path of authd's or a registered origin, and refuses any other site", async () => {
    const to = (returnTo: string) => browser.get(`${base}/login?return_to=${encodeURIComponent(returnTo)}`)
    for (const evil of ['https://evil.example/x', '//evil.example/x', '/\\evil.example/x', '/\t/evil.example/x', 'javascript:alert(1)']) {
      const refused = await to(evil)
      expect({ evil, status: refused.status, problem: problemText(refused.html) }).toEqual({
        evil,
        status: 400,
        problem: 'There is a problem This sign-in link leads to a site that is not registered for Acme. Sign in here instead.',
      })
      expect(refused.html).not.toContain('name="return_to"')
    }
    // Sent in the form itself, it is refused too.
    const forged = await browser.submit(await browser.get(`${base}/login`), '/login', { email, password: PASSWORD, return_to: 'https://evil.example/' })
    expect({ status: forged.status, location: forged.location }).toEqual({ status: 400, location: null })
    const allowed = await browser.submit(await to('http://127.0.0.1:3000/after?x=1'), '/login', { email, password: PASSWORD })
    expect(allowed.location).toBe('http://127.0.0.1:3000/after?x=1')
  })

  it("never leads to a site a tenant's admin key names: not its passkey origins, not its OpenID clients' redirect URIs", async () => {
    const adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })).key
    const admin = (method: string, path: string, body?: unknown) => ctx.call(method, `/api/v1/admin${path}`, { apiKey: adminKey, body })
    // Passkey origins are the tenant admin's to set (its apps run ceremonies there)...
    expect((await admin('PATCH', '/tenant', { passkeyRpId: 'evil.example', passkeyOrigins: ['https://evil.example'] })).status).toBe(200)
    // ...the origins return_to may lead to are not: the field is refused, and nothing changes.
    const named = await admin('PATCH', '/tenant', { returnToOrigins: ['https://evil.example'] })
    expect({ status: named.status, message: named.json.message }).toEqual({ status: 400, message: expect.stringContaining('returnToOrigins') })
    expect((await admin('GET', '/tenant')).json.data.returnToOrigins).toEqual([])
    // A client's redirect URI is where its authorize answer goes, never a return_to target,
    // even on a sign-in whose URL says it resumes that client's request.
    const { client } = (await admin('POST', '/clients', { name: 'Lure', redirectUris: ['https://evil.example/cb'], firstParty: true })).json.data
    const resume = `${base}/authorize?client_id=${client.clientId}&redirect_uri=https://evil.example/cb`
    const form = formOn((await browser.get(`${base}/login`)).html, '/login')
    const mixed = await browser.post(`${base}/login?return_to=${encodeURIComponent(resume)}`, { ...form.hidden, email, password: PASSWORD, return_to: 'https://evil.example/x' })
    expect({ status: mixed.status, location: mixed.location }).toEqual({ status: 400, location: null })
    // A browser signed in already is not sent there either.
    await signIn()
    const lured = await browser.get(`${base}/login?return_to=${encodeURIComponent('https://evil.example/x')}`)
    expect({ status: lured.status, location: lured.location, problem: problemText(lured.html) }).toEqual({
      status: 400,
      location: null,
      problem: 'There is a problem This sign-in link leads to a site that is not registered for Acme. Sign in here instead.',
    })
    expect(lured.headers.get('content-security-policy')).not.toContain('evil.example')
  })

  it('leads to an origin the operator registered (authd tenants update --return-to-origin), and to no other once cleared', async () => {
    await setTenantReturnToOrigins(ctx.runtime, ctx.tenantId, ['https://app.example.com'])
    const to = `${base}/login?return_to=${encodeURIComponent('https://app.example.com/after?x=1')}`
    const page = await browser.get(to)
    // (the redirect after the form is a form-action target: its CSP allows the origin)
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:3000 https://app.example.com;")
    expect((await browser.submit(page, '/login', { email, password: PASSWORD })).location).toBe('https://app.example.com/after?x=1')
    expect((await browser.get(to)).location).toBe('https://app.example.com/after?x=1')
    await setTenantReturnToOrigins(ctx.runtime, ctx.tenantId, [])
    expect((await browser.get(to)).status).toBe(400)
  })
})

describe('forgot and reset pages', () => {
  it('answer a registered and an unknown address with the same page after the same store calls; only the registered one gets a code', async () => {
    const calls = recordStoreCalls(ctx.runtime.store)
    const answer = async (address: string) => {
      calls.length = 0
      const page = await browser.submit(await browser.get(`${base}/forgot`), '/forgot', { email: address })
      ctx.clock.advance(61)
      return { status: page.status, html: page.html.replace(/nonce="[^"]*"/g, 'nonce').replaceAll(address, 'ADDRESS'), calls: calls.map((c) => c.name) }
    }
    const registered = await answer(email)
    const unknown = await answer('nobody@example.com')
    expect(unknown).toEqual(registered)
    expect(noticeText(registered.html)).toBe('If the e-mail address is registered, a code was sent to it. It is valid for 10 minutes.')
    const mails = await queryDatabase<{ recipient: string }>(ctx, "SELECT recipient FROM mail_outbox WHERE kind = 'password-reset-otp'")
    expect(mails.map((m) => m.recipient)).toEqual([email])
  })

  it('puts a wrong code and a weak password on their fields; the right code sets the password', async () => {
    const code = await requestOtp(ctx, email)
    const page = await browser.get(`${base}/reset`)
    const wrong = await browser.submit(page, '/reset', { email, code: code === '000000' ? '111111' : '000000', newPassword: NEW_PASSWORD })
    expect({ status: wrong.status, code: fieldError(wrong.html, 'code') }).toEqual({ status: 400, code: 'The code is wrong or has expired. Ask for a new one if this keeps happening.' })
    const weak = await browser.submit(page, '/reset', { email, code, newPassword: 'short' })
    expect({ status: weak.status, newPassword: fieldError(weak.html, 'newPassword') }).toEqual({ status: 400, newPassword: 'The password must be at least 15 characters long.' })
    const done = await browser.submit(page, '/reset', { email, code: code.replace(/(\d{3})/, '$1 '), newPassword: NEW_PASSWORD })
    expect(done.location).toBe(`${base}/login?done=reset`)
    expect((await signIn(NEW_PASSWORD)).location).toBe(`${base}/account`)
  })
})

describe('account page', () => {
  it('changes the password after the step-up form once the login is older than 5 minutes; ends another session', async () => {
    await signIn()
    await loginFor(ctx, email)
    ctx.clock.advance(6 * 60)
    const account = await browser.get(`${base}/account`)
    expect(account.html).toContain('Confirm it is you')
    expect(() => formOn(account.html, '/account/password')).toThrow()
    // A password change sent anyway (the page was open for long) is refused by the domain.
    const early = await browser.post(`${base}/account/password`, { ...formOn(account.html, '/account/reauthenticate').hidden, newPassword: NEW_PASSWORD })
    expect({ status: early.status, problem: problemText(early.html) }).toEqual({ status: 403, problem: 'There is a problem Before you change your password or your two-step verification, enter your current password.' })
    const wrong = await browser.submit(account, '/account/reauthenticate', { password: 'not the password at all' })
    expect({ status: wrong.status, password: fieldError(wrong.html, 'password') }).toEqual({ status: 400, password: 'The password is wrong.' })
    const proved = await browser.submit(account, '/account/reauthenticate', { password: PASSWORD })
    expect(proved.location).toBe(`${base}/account?done=reauth`)
    const fresh = await browser.get(proved.location!)
    const weak = await browser.submit(fresh, '/account/password', { newPassword: 'ada@example.com and more' })
    expect(fieldError(weak.html, 'newPassword')).toBe('The password must not contain your e-mail address.')
    // The other session (the API login) is listed with an End button.
    const other = formOn(fresh.html, '/account/sessions/end')
    const ended = await browser.submit(fresh, '/account/sessions/end', {})
    expect(ended.location).toBe(`${base}/account?done=session`)
    const again = await browser.post(`${base}/account/sessions/end`, other.hidden)
    expect({ status: again.status, problem: problemText(again.html) }).toEqual({ status: 404, problem: 'There is a problem That session was already ended.' })
    const changed = await browser.submit(fresh, '/account/password', { newPassword: NEW_PASSWORD })
    expect(changed.location).toBe(`${base}/account?done=password`)
    expect(noticeText((await browser.get(changed.location!)).html)).toBe('Your password was changed. Your other sessions were ended.')
  })

  it("lists the user's groups under \"Your groups\" (English and German), escaped, and nothing while they are in none", async () => {
    await signIn()
    const none = await browser.get(`${base}/account`)
    expect(none.html).not.toContain('class="groups"')
    expect(none.html).not.toContain('Your groups')

    const [ada] = await queryDatabase<{ id: string }>(ctx, 'SELECT id FROM users WHERE email = $1', [email])
    const { userId: grace } = await ctx.addUser({ email: 'grace@example.com' })
    const admins = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins', description: 'People who run <the place>' })
    const ops = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'ops' })
    const other = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'finance' })
    await addMembers(ctx.runtime, admins.id, [ada!.id])
    await addMembers(ctx.runtime, ops.id, [ada!.id, grace])
    await addMembers(ctx.runtime, other.id, [grace])

    const groupsOn = (page: PageAnswer) => {
      const list = /<h2>([^<]+)<\/h2>\s*<ul class="groups">([\s\S]*?)<\/ul>/.exec(page.html)
      return list && { heading: list[1], items: [...list[2]!.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => m[1]) }
    }
    expect(groupsOn(await browser.get(`${base}/account`))).toEqual({ heading: 'Your groups', items: ['admins<span class="meta">People who run &lt;the place&gt;</span>', 'ops'] })
    expect(groupsOn(await browser.get(`${base}/account`, { 'accept-language': 'de' }))?.heading).toBe('Ihre Gruppen')
  })
})

describe('invite page', () => {
  it('is where the invitation mail links; a bad token is on its field; the setup token sets the password', async () => {
    const invited = (await ctx.addUser({ email: 'grace@example.com', password: undefined })).userId
    const { setupToken } = await inviteUser(ctx.runtime, invited)
    const [mail] = await queryDatabase<{ text_body: string }>(ctx, "SELECT text_body FROM mail_outbox WHERE kind = 'invitation' ORDER BY created_at DESC LIMIT 1")
    expect(mail!.text_body).toContain(`Set your password here: http://127.0.0.1:3000/t/${ctx.tenantId}/invite#token=${setupToken}`)
    const page = await browser.get(`${base}/invite`)
    const bad = await browser.submit(page, '/invite', { token: 'not-a-token', newPassword: NEW_PASSWORD })
    expect({ status: bad.status, token: fieldError(bad.html, 'token') }).toEqual({ status: 401, token: 'This invitation is invalid, has expired or was used already. Ask for a new one.' })
    const weak = await browser.submit(page, '/invite', { token: setupToken, newPassword: 'short' })
    expect({ status: weak.status, newPassword: fieldError(weak.html, 'newPassword') }).toEqual({ status: 400, newPassword: 'The password must be at least 15 characters long.' })
    expect(weak.html).not.toContain(setupToken)
    const done = await browser.submit(page, '/invite', { token: setupToken, newPassword: NEW_PASSWORD })
    expect(done.location).toBe(`${base}/login?done=invite#`)
    const used = await browser.submit(page, '/invite', { token: setupToken, newPassword: NEW_PASSWORD })
    expect(problemText(used.html)).toBe('There is a problem Your account has a password already. Sign in with it.')
  })
})

describe('two-step verification on the account page', () => {
  it('turns TOTP on with the QR code drawn by authd and the first code, shows the recovery codes once; the login asks for a code; a code turns it off', async () => {
    await signIn()
    const account = await browser.get(`${base}/account`)
    expect(account.html).toContain('Two-step verification is off.')
    const setup = await browser.submit(account, '/account/totp', {})
    expect(setup.html).toContain('<div class="qr" role="img" aria-label="QR code of your two-step verification key"><svg xmlns="http://www.w3.org/2000/svg"')
    const secret = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(setup.html)![1]!.replaceAll(' ', '')
    const code = () => totpCode(secret, totpStep(ctx.clock.now()))
    const wrong = await browser.submit(setup, '/account/totp/confirm', { code: code() === '000000' ? '111111' : '000000' })
    expect({ status: wrong.status, code: fieldError(wrong.html, 'code') }).toEqual({ status: 400, code: 'The code is wrong. Check that the time of your device is right, or start again.' })
    // Drawn again, the page shows the key no more: only the way to start again.
    expect(wrong.html).not.toContain(secret.slice(0, 8))
    const on = await browser.submit(wrong, '/account/totp/confirm', { code: code() })
    expect(on.html).toContain('<h1>Your recovery codes</h1>')
    const recoveryCodes = [...on.html.matchAll(/<li><code>([^<]+)<\/code><\/li>/g)].map((m) => m[1]!)
    expect(recoveryCodes).toHaveLength(10)
    const [mail] = await queryDatabase<{ kind: string }>(ctx, "SELECT kind FROM mail_outbox WHERE kind = 'mfa-enrolled'")
    expect(mail).toBeTruthy()

    await browser.submit(await browser.get(`${base}/logout`), '/logout', {})
    const challenge = await signIn()
    const passed = await browser.submit(challenge, '/login/second-factor', { code: recoveryCodes[0]! })
    expect(passed.location).toBe(`${base}/account`)
    const signedIn = await browser.get(`${base}/account`)
    expect(signedIn.html).toContain('Two-step verification is on.')
    const used = await browser.submit(signedIn, '/account/totp/disable', { code: recoveryCodes[0]! })
    expect({ status: used.status, code: fieldError(used.html, 'code') }).toEqual({ status: 400, code: 'The code is wrong or was used already.' })
    ctx.clock.advance(30)
    const off = await browser.submit(signedIn, '/account/totp/disable', { code: code() })
    expect(off.location).toBe(`${base}/account?done=totp-off`)
    expect(noticeText((await browser.get(off.location!)).html)).toBe('Two-step verification is off.')
  })
})

describe('sign-up and verify pages', () => {
  it('are closed where the tenant does not allow sign-up', async () => {
    const page = await browser.get(`${base}/signup`)
    expect({ status: page.status, problem: problemText(page.html) }).toEqual({ status: 403, problem: 'There is a problem Accounts cannot be created here: ask for an invitation.' })
    expect((await browser.get(`${base}/login`)).html).not.toContain('/signup')
  })

  it('answer a new and a registered address with the same page; a bad name, a weak password and a wrong code on their fields; the code creates the account and signs in', async () => {
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'open')
    expect((await browser.get(`${base}/login`)).html).toContain(`<a href="${base}/signup">Create an account</a>`)
    const form = await browser.get(`${base}/signup`)
    const fields = { firstName: 'Grace', lastName: 'Hopper', newPassword: NEW_PASSWORD }
    const badName = await browser.submit(form, '/signup', { ...fields, firstName: 'Gr\u202eace', email: 'grace@example.com' })
    expect({ status: badName.status, firstName: fieldError(badName.html, 'firstName') }).toEqual({ status: 400, firstName: 'Enter a name of 1 to 100 characters on one line.' })
    const weak = await browser.submit(form, '/signup', { ...fields, email: 'grace@example.com', newPassword: 'my name is hopper indeed' })
    expect(fieldError(weak.html, 'newPassword')).toBe('The password must not contain your name.')
    const answer = async (address: string) => {
      const page = await browser.submit(form, '/signup', { ...fields, email: address })
      ctx.clock.advance(61)
      return { status: page.status, html: page.html.replace(/nonce="[^"]*"/g, 'nonce').replaceAll(address, 'ADDRESS') }
    }
    const registered = await answer(email)
    const fresh = await answer('grace@example.com')
    expect(fresh).toEqual(registered)
    expect(noticeText(fresh.html)).toBe('If the address can be registered, a code was sent to it. It is valid for 10 minutes.')
    const [mail] = await queryDatabase<{ text_body: string }>(ctx, "SELECT text_body FROM mail_outbox WHERE kind = 'signup-code' AND recipient = 'grace@example.com'")
    const code = /\b(\d{6})\b/.exec(mail!.text_body)![1]!
    const verify = await browser.get(`${base}/verify`)
    const wrong = await browser.submit(verify, '/verify', { email: 'grace@example.com', code: code === '000000' ? '111111' : '000000' })
    expect({ status: wrong.status, code: fieldError(wrong.html, 'code') }).toEqual({ status: 400, code: 'The code is wrong or has expired.' })
    const verified = await browser.submit(verify, '/verify', { email: 'grace@example.com', code })
    expect(verified.location).toBe(`${base}/account`)
    expect((await browser.get(`${base}/account`)).html).toContain('<dd>Grace Hopper</dd>')
  })
})
