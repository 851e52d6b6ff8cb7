// Passkeys on authd's pages in Chromium, with JavaScript and the DevTools virtual authenticator
// (ctap2, internal transport, resident keys, user verification): signed in with the password,
// add a passkey on the account page, rename it, sign out; sign in with it by the e-mail field's
// autofill and by the button; pass the second factor with it once TOTP is on; remove it. The account page with a passkey is checked with
// axe-core (no serious or critical finding).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { setTenantRelyingParty } from '../../src/core/tenants/relying-party'
import { silentLogger } from '../../src/log'
import { startServer, type RunningServer } from '../../src/server/serve'
import { loaded, pageWithAuthenticator, runBrowserTests, seriousViolations, sharedBrowser } from '../browser'
import { createTestContext, PASSWORD, type TestContext } from '../helpers'

let ctx: TestContext
let server: RunningServer
let context: BrowserContext
let checker: BrowserContext
let base: string

beforeAll(async () => {
  if (!runBrowserTests) return
  ctx = await createTestContext({ AUTHD_PORT: '0' })
  server = await startServer(ctx.runtime, silentLogger)
  // WebAuthn refuses an IP address as the RP ID: the pages are opened at localhost.
  const origin = server.url.replace('127.0.0.1', 'localhost')
  await setTenantRelyingParty(ctx.runtime, ctx.tenantId, { rpId: 'localhost', origins: [origin] })
  await ctx.addUser({ email: 'ada@example.com' })
  base = `${origin}/t/${ctx.tenantId}`
  const browser = await sharedBrowser()
  context = await browser.newContext()
  checker = await browser.newContext({ bypassCSP: true })
}, 60_000)

afterAll(async () => {
  if (!runBrowserTests) return
  await context?.close()
  await checker?.close()
  await server?.stop()
  await ctx?.close()
})

const withAuthenticator = () => pageWithAuthenticator(context)

async function expectAccessible(page: Page, state: string) {
  const violations = await seriousViolations(checker, page)
  expect({ state, violations }).toEqual({ state, violations: [] })
}

const notice = (page: Page) => page.locator('.notice').textContent()
const signOut = async (page: Page) => {
  await loaded(page, () => page.getByRole('link', { name: 'Sign out' }).click())
  await loaded(page, () => page.getByRole('button', { name: 'Sign out' }).click())
  await page.waitForURL('**/login?done=logout')
}

describe('passkeys on the pages (Chromium, virtual authenticator)', () => {
  it.skipIf(!runBrowserTests)('add a passkey and rename it, sign in with it by autofill and by the button, pass the second factor with it, remove it', async () => {
    const page = await withAuthenticator()
    await page.goto(`${base}/login`)
    await page.getByLabel('E-mail address').fill('ada@example.com')
    await page.getByLabel('Password').fill(PASSWORD)
    await loaded(page, () => page.getByRole('button', { name: 'Sign in', exact: true }).click())
    await page.waitForURL('**/account')
    // The script found WebAuthn: the button shows, the note for other browsers does not.
    await expect(page.getByText('To add a passkey, use a browser that has them').isVisible()).resolves.toBe(false)
    await loaded(page, () => page.getByRole('button', { name: 'Add a passkey' }).click())
    await page.waitForURL('**/account?done=passkey-added')
    expect(await notice(page)).toBe('The passkey was added.')
    await page.getByLabel(/^Name of the passkey/).fill('My laptop')
    await loaded(page, () => page.getByRole('button', { name: /^Rename the passkey/ }).click())
    expect(await notice(page)).toBe('The passkey was renamed.')
    expect(await page.locator('.sessions li', { hasText: 'My laptop' }).count()).toBe(1)
    await expectAccessible(page, 'account with a passkey')
    // Autofill: the login page offers the passkey on the e-mail field as it loads (this
    // authenticator picks it at once, as a user choosing it would): signed in.
    await loaded(page, () => page.getByRole('link', { name: 'Sign out' }).click())
    await loaded(page, () => page.getByRole('button', { name: 'Sign out' }).click())
    await page.waitForURL('**/account')
    expect(await page.locator('h1').textContent()).toBe('Your account')

    // The button, in a browser without autofill for passkeys.
    await page.addInitScript(() => {
      ;(globalThis as any).PublicKeyCredential.isConditionalMediationAvailable = async () => false
    })
    await signOut(page)
    await loaded(page, () => page.getByRole('button', { name: 'Sign in with a passkey' }).click())
    await page.waitForURL('**/account')
    expect(await page.locator('h1').textContent()).toBe('Your account')

    // As the second factor, once two-step verification is on.
    await loaded(page, () => page.getByRole('button', { name: 'Turn on two-step verification' }).click())
    const secret = (await page.locator('p code').textContent())!.replaceAll(' ', '')
    await page.getByLabel('Code', { exact: true }).fill(totpCode(secret, totpStep(ctx.clock.now())))
    await loaded(page, () => page.getByRole('button', { name: 'Turn on' }).click())
    await loaded(page, () => page.getByRole('link', { name: 'Continue to your account' }).click())
    await signOut(page)
    await page.getByLabel('E-mail address').fill('ada@example.com')
    await page.getByLabel('Password').fill(PASSWORD)
    await loaded(page, () => page.getByRole('button', { name: 'Sign in', exact: true }).click())
    await loaded(page, () => page.getByRole('button', { name: 'Use a passkey instead' }).click())
    await page.waitForURL('**/account')
    expect(await page.locator('h1').textContent()).toBe('Your account')

    await loaded(page, () => page.getByRole('button', { name: 'Remove the passkey My laptop' }).click())
    expect(await notice(page)).toBe('The passkey was removed.')
    expect(await page.getByText('You have no passkey yet.').isVisible()).toBe(true)
  }, 60_000)
})
