// authd's pages in a real browser (Chromium through playwright-core) with JavaScript off, as
// the password journeys must work: sign in, the account page, change the password, sign out,
// forgot and reset with the OTP mailed over real SMTP, sign in with the new password; the
// second factor; the invitation mail's link, without JavaScript (the token pasted) and with it
// (the token read from the link's fragment). Every
// page state met on the way (form, error, done) is checked with axe-core: no serious or
// critical finding. axe runs on a copy of each page in a second context with JavaScript (the
// journey's own has none), where its script is allowed past the page's CSP.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { silentLogger } from '../../src/log'
import { startServer, type RunningServer } from '../../src/server/serve'
import { loaded, runBrowserTests, seriousViolations, sharedBrowser } from '../browser'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { inviteUser } from '../../src/core/accounts/setup-password'
import { addMembers, createGroup } from '../../src/core/groups/groups'
import { createTestContext, PASSWORD, type TestContext } from '../helpers'
import { otpIn, sentTo, startSmtp, type TestSmtp } from '../smtp'

const NEW_PASSWORD = 'a brand new passphrase of mine'
const EMAIL = 'ada@example.com'

let ctx: TestContext
let smtp: TestSmtp
let server: RunningServer
let noScript: BrowserContext
let checker: BrowserContext
let base: string
let adaId: string

beforeAll(async () => {
  if (!runBrowserTests) return
  smtp = await startSmtp()
  ctx = await createTestContext({ AUTHD_PORT: '0', AUTHD_SMTP_URL: smtp.url })
  server = await startServer(ctx.runtime, silentLogger)
  adaId = (await ctx.addUser({ email: EMAIL })).userId
  await ctx.addUser({ email: 'grace@example.com' })
  base = `${server.url}/t/${ctx.tenantId}`
  const browser = await sharedBrowser()
  noScript = await browser.newContext({ javaScriptEnabled: false })
  checker = await browser.newContext({ bypassCSP: true })
}, 60_000)

afterAll(async () => {
  if (!runBrowserTests) return
  await noScript?.close()
  await checker?.close()
  await server?.stop()
  await smtp?.close()
  await ctx?.close()
})

/** The serious and critical axe findings on the page as it is now: none expected. */
const checked: string[] = []
async function expectAccessible(page: Page, state: string) {
  const violations = await seriousViolations(checker, page)
  expect({ state, violations }).toEqual({ state, violations: [] })
  checked.push(state)
}

const heading = (page: Page) => page.locator('h1').textContent()
const fieldError = (page: Page, name: string) => page.locator(`#f-${name}-error`).textContent()

describe('the pages in Chromium, JavaScript off', () => {
  it.skipIf(!runBrowserTests)('sign in, change the password, sign out, reset it by the mailed OTP, sign in again: every state accessible', async () => {
    const page = await noScript.newPage()
    await page.goto(`${base}/login`)
    await expectAccessible(page, 'login')
    await page.getByLabel('E-mail address').fill(EMAIL)
    await page.getByLabel('Password').fill('not the password at all')
    await loaded(page, () => page.getByRole('button', { name: 'Sign in' }).click())
    expect(await fieldError(page, 'password')).toBe('The e-mail address or the password is wrong.')
    await expectAccessible(page, 'login: wrong password')
    await page.getByLabel('Password').fill(PASSWORD)
    await loaded(page, () => page.getByRole('button', { name: 'Sign in' }).click())
    expect(await heading(page)).toBe('Your account')
    await expectAccessible(page, 'account')

    await page.getByLabel('New password').fill('short')
    await loaded(page, () => page.getByRole('button', { name: 'Change password' }).click())
    expect(await fieldError(page, 'newPassword')).toBe('The password must be at least 15 characters long.')
    await expectAccessible(page, 'account: weak password')
    await page.getByLabel('New password').fill(NEW_PASSWORD)
    await loaded(page, () => page.getByRole('button', { name: 'Change password' }).click())
    expect(await page.locator('.notice').textContent()).toBe('Your password was changed. Your other sessions were ended.')
    await expectAccessible(page, 'account: password changed')
    const admins = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins', description: 'People who run the place' })
    await addMembers(ctx.runtime, admins.id, [adaId])
    await loaded(page, () => page.reload())
    expect(await page.locator('ul.groups li').allTextContents()).toEqual(['adminsPeople who run the place'])
    await expectAccessible(page, 'account: in a group')

    await loaded(page, () => page.getByRole('link', { name: 'Sign out' }).click())
    await expectAccessible(page, 'logout')
    await loaded(page, () => page.getByRole('button', { name: 'Sign out' }).click())
    expect(await page.locator('.notice').textContent()).toBe('You are signed out.')
    await expectAccessible(page, 'login: signed out')

    await loaded(page, () => page.getByRole('link', { name: 'Forgot your password?' }).click())
    await expectAccessible(page, 'forgot')
    await page.getByLabel('E-mail address').fill(EMAIL)
    await loaded(page, () => page.getByRole('button', { name: 'Send code' }).click())
    expect(await heading(page)).toBe('Choose a new password')
    await expectAccessible(page, 'reset: code sent')
    await ctx.deliverMail()
    const mail = await smtp.waitFor((m) => sentTo(EMAIL)(m) && /\b\d{6}\b/.test(m.text ?? ''))
    await page.getByLabel('Code from the e-mail').fill(otpIn(mail) === '000000' ? '111111' : '000000')
    await page.getByLabel('New password').fill(PASSWORD)
    await loaded(page, () => page.getByRole('button', { name: 'Set new password' }).click())
    expect(await fieldError(page, 'code')).toBe('The code is wrong or has expired. Ask for a new one if this keeps happening.')
    await expectAccessible(page, 'reset: wrong code')
    await page.getByLabel('Code from the e-mail').fill(otpIn(mail))
    await page.getByLabel('New password').fill(PASSWORD)
    await loaded(page, () => page.getByRole('button', { name: 'Set new password' }).click())
    expect(await page.locator('.notice').textContent()).toBe('Your password was changed. You can sign in with it now.')

    await page.getByLabel('E-mail address').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await loaded(page, () => page.getByRole('button', { name: 'Sign in' }).click())
    expect(await heading(page)).toBe('Your account')
    expect(checked).toHaveLength(11)
  }, 60_000)

  it.skipIf(!runBrowserTests)('turn on two-step verification by typing the code, sign out, sign in with the challenge by keyboard alone', async () => {
    await noScript.clearCookies()
    const page = await noScript.newPage()
    await page.goto(`${base}/login`)
    await page.getByLabel('E-mail address').fill('grace@example.com')
    await page.getByLabel('Password').fill(PASSWORD)
    await loaded(page, () => page.getByRole('button', { name: 'Sign in' }).click())
    await loaded(page, () => page.getByRole('button', { name: 'Turn on two-step verification' }).click())
    expect(await heading(page)).toBe('Set up two-step verification')
    await expect(page.getByRole('img', { name: 'QR code of your two-step verification key' }).isVisible()).resolves.toBe(true)
    await expectAccessible(page, 'two-step set-up')
    const secret = (await page.locator('p code').textContent())!.replaceAll(' ', '')
    await page.getByLabel('Code', { exact: true }).fill(totpCode(secret, totpStep(ctx.clock.now())))
    await loaded(page, () => page.getByRole('button', { name: 'Turn on' }).click())
    expect(await heading(page)).toBe('Your recovery codes')
    expect(await page.locator('.codes li').count()).toBe(10)
    await expectAccessible(page, 'recovery codes')
    await loaded(page, () => page.getByRole('link', { name: 'Continue to your account' }).click())
    await loaded(page, () => page.getByRole('link', { name: 'Sign out' }).click())
    await loaded(page, () => page.getByRole('button', { name: 'Sign out' }).click())
    await page.waitForURL('**/login?done=logout')

    // The keyboard alone: Tab to each field in order, type, Enter.
    ctx.clock.advance(30)
    await page.keyboard.press('Tab')
    await page.keyboard.type('grace@example.com')
    await page.keyboard.press('Tab')
    await page.keyboard.type(PASSWORD)
    await loaded(page, () => page.keyboard.press('Enter'))
    await page.waitForURL('**/login')
    expect(await heading(page)).toBe('Two-step verification')
    await expectAccessible(page, 'second factor')
    await page.keyboard.press('Tab')
    await page.keyboard.type('000000' === totpCode(secret, totpStep(ctx.clock.now())) ? '111111' : '000000')
    await loaded(page, () => page.keyboard.press('Enter'))
    await page.waitForURL('**/login/second-factor')
    expect(await fieldError(page, 'code')).toBe('The code is wrong, or this sign-in has expired. Enter a new code, or sign in again.')
    await expectAccessible(page, 'second factor: wrong code')
    // The problem summary comes first; its link leads the keyboard to the field.
    await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    await page.keyboard.type(totpCode(secret, totpStep(ctx.clock.now())))
    await loaded(page, () => page.keyboard.press('Enter'))
    await page.waitForURL('**/account')
    expect(await heading(page)).toBe('Your account')
  }, 60_000)

  it.skipIf(!runBrowserTests)('the invitation mail links to the invite page: the token pasted without JavaScript, read from the link with it; then sign in', async () => {
    const invited = async (email: string) => {
      const { userId } = await ctx.addUser({ email, password: undefined })
      await inviteUser(ctx.runtime, userId)
      await ctx.deliverMail()
      const mail = await smtp.waitFor((m) => sentTo(email)(m) && /set up your password/.test(m.subject ?? ''))
      const link = /Set your password here: (\S+)/.exec(mail.text ?? '')![1]!
      expect(link).toStartWith(`${ctx.runtime.config.publicUrl}/t/${ctx.tenantId}/invite#token=`)
      // (the server listens on another port than AUTHD_PUBLIC_URL's here)
      return { link: link.replace(ctx.runtime.config.publicUrl, server.url), token: link.split('#token=')[1]! }
    }
    await noScript.clearCookies()
    const withoutScript = await invited('linus@example.com')
    const page = await noScript.newPage()
    await page.goto(withoutScript.link)
    await expectAccessible(page, 'invite')
    expect(await page.getByLabel('Setup token from the e-mail').inputValue()).toBe('')
    await page.getByLabel('Setup token from the e-mail').fill(withoutScript.token)
    await page.getByLabel('New password').fill('short')
    await loaded(page, () => page.getByRole('button', { name: 'Set password' }).click())
    expect(await fieldError(page, 'newPassword')).toBe('The password must be at least 15 characters long.')
    await expectAccessible(page, 'invite: weak password')
    await page.getByLabel('Setup token from the e-mail').fill(withoutScript.token)
    await page.getByLabel('New password').fill(NEW_PASSWORD)
    await loaded(page, () => page.getByRole('button', { name: 'Set password' }).click())
    expect(await page.locator('.notice').textContent()).toBe('Your password is set. You can sign in with it now.')

    const withScript = await invited('margaret@example.com')
    // (a context of its own, with JavaScript and the pages' CSP in force: the script runs by its nonce)
    const withJavaScript = await (await sharedBrowser()).newContext()
    const scripted = await withJavaScript.newPage()
    await scripted.goto(withScript.link)
    expect(await scripted.getByLabel('Setup token from the e-mail').inputValue()).toBe(withScript.token)
    await scripted.getByLabel('New password').fill(NEW_PASSWORD)
    await loaded(scripted, () => scripted.getByRole('button', { name: 'Set password' }).click())
    await scripted.getByLabel('E-mail address').fill('margaret@example.com')
    await scripted.getByLabel('Password').fill(NEW_PASSWORD)
    await loaded(scripted, () => scripted.getByRole('button', { name: 'Sign in', exact: true }).click())
    expect(await heading(scripted)).toBe('Your account')
    await withJavaScript.close()
  }, 60_000)
})
