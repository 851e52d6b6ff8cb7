// What the admin console's HTTP scenarios share (test/http/console*.test.ts): an admin who turns
// TOTP on through the API and signs in on the login page with it, so the console's door opens,
// and a form sent with its fields in order (repeated names, as checkboxes send them).
import { expect } from 'bun:test'
import { totpCode, totpStep } from '../src/core/mfa/totp'
import { createTestContext, loginFor, PASSWORD, type TestContext } from './helpers'
import { formOn, PageBrowser, type PageAnswer } from './pages'

export const CONSOLE_ORIGIN = 'https://auth.example.com'
export const FROM_AUTHD = { origin: CONSOLE_ORIGIN }

/** A tenant at CONSOLE_ORIGIN with an admin (root@example.com, no second factor yet) and a browser without JavaScript at its pages. */
export async function consoleWorld(env: Record<string, string> = {}) {
  const ctx = await createTestContext({ AUTHD_PUBLIC_URL: CONSOLE_ORIGIN, AUTHD_REFUSAL_HOLD_MS: '0', ...env })
  const admin = await ctx.addUser({ email: 'root@example.com', type: 'admin' })
  return { ctx, admin, browser: new PageBrowser(ctx), base: `/t/${ctx.tenantId}` }
}

/** The code of this TOTP secret at the context's time. */
export const currentCode = (ctx: TestContext, secret: string) => totpCode(secret, totpStep(ctx.clock.now()))

/** Turns TOTP on for the user through the API; its secret (the clock then moves past the code used). */
export async function enrolTotp(ctx: TestContext, email: string): Promise<string> {
  const bearer = { authorization: `Bearer ${(await loginFor(ctx, email)).json.data.response.accessToken as string}` }
  const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer })).json.data
  expect((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: currentCode(ctx, secret) } })).status).toBe(200)
  ctx.clock.advance(30)
  return secret
}

/** The admin signed in on the login page with TOTP: the console open (its home answers 200). The TOTP secret. */
export async function signInAdmin(ctx: TestContext, browser: PageBrowser, base: string, email: string): Promise<string> {
  const secret = await enrolTotp(ctx, email)
  const password = await browser.submit(await browser.get(`${base}/login`), '/login', { email, password: PASSWORD }, FROM_AUTHD)
  await browser.submit(password, '/login/second-factor', { code: currentCode(ctx, secret) }, FROM_AUTHD)
  expect((await browser.get(`${base}/admin`)).status).toBe(200)
  return secret
}

/** Sends the form on `page` whose action ends with `action`: its hidden fields, then these pairs in order. */
export function submitPairs(browser: PageBrowser, page: PageAnswer, action: string, pairs: Array<[string, string]>): Promise<PageAnswer> {
  const form = formOn(page.html, action)
  return browser.send('POST', form.action, new URLSearchParams([...Object.entries(form.hidden), ...pairs]).toString(), FROM_AUTHD)
}
