// The whole of issue 34 as one person lives it, in Chromium (playwright-core) against a real
// server, with mail over real SMTP and the DevTools virtual authenticator: invited by the admin
// API, the password set from the invitation mail's link, signed in, TOTP turned on by typing
// the code, signed in with the challenge, a passkey added (after confirming it is them with a
// code), signed in with the passkey, another session ended on the account page (and its
// refresh refused), the password reset through the mailed code. Then the step-up with a
// passkey; and sign-up with JavaScript off. Every page state met is checked with axe-core (no
// serious or critical finding).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { setTenantRelyingParty } from '../../src/core/tenants/relying-party'
import { setTenantSignup } from '../../src/core/signup/signup'
import { silentLogger } from '../../src/log'
import { startServer, type RunningServer } from '../../src/server/serve'
import { loaded, pageWithAuthenticator, runBrowserTests, seriousViolations, sharedBrowser } from '../browser'
import { apiCaller, createTestContext, PASSWORD, toResult, type TestContext } from '../helpers'
import { otpIn, sentTo, startSmtp, type TestSmtp } from '../smtp'

const CHOSEN_PASSWORD = 'my own invited passphrase'
const NEW_PASSWORD = 'a brand new passphrase of mine'

let ctx: TestContext
let smtp: TestSmtp
let server: RunningServer
let checker: BrowserContext
let origin: string
let base: string

beforeAll(async () => {
  if (!runBrowserTests) return
  smtp = await startSmtp()
  ctx = await createTestContext({ AUTHD_PORT: '0', AUTHD_SMTP_URL: smtp.url })
  server = await startServer(ctx.runtime, silentLogger)
  // WebAuthn refuses an IP address as the RP ID: the pages are opened at localhost.
  origin = server.url.replace('127.0.0.1', 'localhost')
  await setTenantRelyingParty(ctx.runtime, ctx.tenantId, { rpId: 'localhost', origins: [origin] })
  await setTenantSignup(ctx.runtime, ctx.tenantId, 'open')
  base = `${origin}/t/${ctx.tenantId}`
  checker = await (await sharedBrowser()).newContext({ bypassCSP: true })
}, 60_000)

afterAll(async () => {
  if (!runBrowserTests) return
  await checker?.close()
  await server?.stop()
  await smtp?.close()
  await ctx?.close()
})

async function expectAccessible(page: Page, state: string) {
  const violations = await seriousViolations(checker, page)
  expect({ state, violations }).toEqual({ state, violations: [] })
}

const heading = (page: Page) => page.locator('h1').textContent()
const notice = (page: Page) => page.locator('.notice').textContent()
const fieldError = (page: Page, name: string) => page.locator(`#f-${name}-error`).textContent()
const currentCode = (secret: string) => totpCode(secret, totpStep(ctx.clock.now()))
/** The next mail to `email` whose subject matches, delivered by the outbox over SMTP. */
async function mailTo(email: string, subject: RegExp) {
  await ctx.deliverMail()
  return smtp.waitFor((m) => sentTo(email)(m) && subject.test(m.subject ?? ''))
}

async function signInWithPassword(page: Page, email: string, password: string) {
  await page.getByLabel('E-mail address').fill(email)
  await page.getByLabel('Password').fill(password)
  await loaded(page, () => page.getByRole('button', { name: 'Sign in', exact: true }).click())
}

/** Types the current TOTP code on the challenge page (a later step than the last one used). */
async function passChallenge(page: Page, secret: string) {
  expect(await heading(page)).toBe('Two-step verification')
  ctx.clock.advance(30)
  await page.getByLabel('Code').fill(currentCode(secret))
  await loaded(page, () => page.getByRole('button', { name: 'Verify' }).click())
  await page.waitForURL('**/account')
}

async function signOut(page: Page) {
  await loaded(page, () => page.getByRole('link', { name: 'Sign out' }).click())
  await loaded(page, () => page.getByRole('button', { name: 'Sign out' }).click())
  await page.waitForURL('**/login?done=logout')
  expect(await notice(page)).toBe('You are signed out.')
}

describe('the journey of issue 34 in Chromium', () => {
  it.skipIf(!runBrowserTests)(
    'invited, password set, TOTP on, challenge, passkey added and used, another session ended, password reset by the mailed code',
    async () => {
      const email = 'grace@example.com'
      const context = await (await sharedBrowser()).newContext()
      try {
        const page = await pageWithAuthenticator(context, { autofill: false })

        // Invited by the admin API: the mail comes over SMTP and links to the invite page.
        const { key: adminKey } = await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })
        const created = await fetch(`${server.url}/api/v1/admin/users`, {
          method: 'POST',
          headers: { 'x-api-key': adminKey, 'content-type': 'application/json' },
          body: JSON.stringify({ email, firstName: 'Grace', lastName: 'Hopper', invite: true }),
        }).then(toResult)
        expect(created.status).toBe(201)
        const invitation = await mailTo(email, /set up your password/)
        const link = /Set your password here: (\S+)/.exec(invitation.text ?? '')![1]!
        const { pathname, hash } = new URL(link)
        expect({ pathname, hash: hash.slice(0, 7) }).toEqual({ pathname: `/t/${ctx.tenantId}/invite`, hash: '#token=' })
        // (passkeys need the localhost origin: WebAuthn refuses an IP address)
        await page.goto(`${origin}${pathname}${hash}`)
        expect(await heading(page)).toBe('Set up your password')
        await expectAccessible(page, 'invite, token from the link')
        await page.getByLabel('New password').fill(CHOSEN_PASSWORD)
        await loaded(page, () => page.getByRole('button', { name: 'Set password' }).click())
        expect(await notice(page)).toBe('Your password is set. You can sign in with it now.')
        // The spent token stays in neither the address bar nor the history of the login page.
        expect(new URL(page.url()).hash).toBe('')
        await expectAccessible(page, 'login after the invitation')

        await signInWithPassword(page, email, CHOSEN_PASSWORD)
        expect(await heading(page)).toBe('Your account')
        expect(await page.locator('dd').first().textContent()).toBe('Grace Hopper')

        // TOTP on, by typing the code the "app" shows for the key on the page.
        await loaded(page, () => page.getByRole('button', { name: 'Turn on two-step verification' }).click())
        expect(await heading(page)).toBe('Set up two-step verification')
        await expectAccessible(page, 'TOTP set-up')
        const secret = (await page.locator('p code').textContent())!.replaceAll(' ', '')
        await page.getByLabel('Code', { exact: true }).fill(currentCode(secret))
        await loaded(page, () => page.getByRole('button', { name: 'Turn on' }).click())
        expect(await heading(page)).toBe('Your recovery codes')
        await expectAccessible(page, 'recovery codes')
        expect((await mailTo(email, /two-factor authentication was turned on/)).text).toContain('From now on, logging in asks for a code')
        await loaded(page, () => page.getByRole('link', { name: 'Continue to your account' }).click())
        expect(await page.getByText('Two-step verification is on.').isVisible()).toBe(true)

        await signOut(page)
        await signInWithPassword(page, email, CHOSEN_PASSWORD)
        await expectAccessible(page, 'second-factor challenge')
        await passChallenge(page, secret)

        // Later (the sign-in is older than 5 minutes): confirm it is you with a code, add a passkey.
        ctx.clock.advance(6 * 60)
        await loaded(page, () => page.reload())
        expect(await page.getByRole('heading', { name: 'Confirm it is you' }).isVisible()).toBe(true)
        expect(await page.getByRole('button', { name: 'Add a passkey' }).count()).toBe(0)
        await expectAccessible(page, 'step-up with a code field')
        await page.getByLabel('Code from your authenticator app').fill(currentCode(secret))
        await loaded(page, () => page.getByRole('button', { name: 'Confirm with the code' }).click())
        expect(await notice(page)).toBe('Thank you. You can change your password in the next 5 minutes.')
        await loaded(page, () => page.getByRole('button', { name: 'Add a passkey' }).click())
        expect(await notice(page)).toBe('The passkey was added.')
        await expectAccessible(page, 'account with a passkey')

        await signOut(page)
        await loaded(page, () => page.getByRole('button', { name: 'Sign in with a passkey' }).click())
        await page.waitForURL('**/account')
        expect(await heading(page)).toBe('Your account')

        // Another session (an app's, through the API), ended on the account page: gone, its refresh refused.
        const api = apiCaller(server.url, ctx.apiKey)
        const agent = { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1' }
        const challenged = await api('POST', '/login', { email, password: CHOSEN_PASSWORD }, agent)
        ctx.clock.advance(30)
        const other = await api('POST', '/mfa/verify', { challengeToken: challenged.json.data.response.challengeToken, code: currentCode(secret) }, agent)
        expect(other.status).toBe(201)
        await loaded(page, () => page.reload())
        const endOther = page.getByRole('button', { name: /^End the session of Safari on iPhone/ })
        expect(await endOther.count()).toBe(1)
        await loaded(page, () => endOther.click())
        expect(await notice(page)).toBe('The session was ended.')
        expect(await page.getByText('Safari on iPhone').count()).toBe(0)
        await expectAccessible(page, 'account after ending a session')
        expect((await api('GET', '/refresh-token', undefined, { cookie: `refreshToken=${other.refreshCookie}` })).status).toBe(401)

        // The password reset through the mailed code, then a sign-in with the new one.
        await signOut(page)
        await loaded(page, () => page.getByRole('link', { name: 'Forgot your password?' }).click())
        expect(await heading(page)).toBe('Forgot your password')
        await page.getByLabel('E-mail address').fill(email)
        await loaded(page, () => page.getByRole('button', { name: 'Send code' }).click())
        expect(await notice(page)).toBe('If the e-mail address is registered, a code was sent to it. It is valid for 10 minutes.')
        await expectAccessible(page, 'reset, code sent')
        const code = otpIn(await mailTo(email, /password reset code/))
        await page.getByLabel('Code from the e-mail').fill(code)
        await page.getByLabel('New password').fill(NEW_PASSWORD)
        await loaded(page, () => page.getByRole('button', { name: 'Set new password' }).click())
        expect(await notice(page)).toBe('Your password was changed. You can sign in with it now.')
        expect((await mailTo(email, /your password was changed/)).text).toContain('every session was signed out')
        await signInWithPassword(page, email, CHOSEN_PASSWORD)
        expect(await fieldError(page, 'password')).toBe('The e-mail address or the password is wrong.')
        await signInWithPassword(page, email, NEW_PASSWORD)
        await passChallenge(page, secret)
        expect(await heading(page)).toBe('Your account')
      } finally {
        await context.close()
      }
    },
    120_000,
  )

  it.skipIf(!runBrowserTests)('confirms it is you with a passkey when the sign-in is older than 5 minutes', async () => {
    const { email } = await ctx.addUser({ email: 'linus@example.com' })
    const context = await (await sharedBrowser()).newContext()
    try {
      const page = await pageWithAuthenticator(context, { autofill: false })
      await page.goto(`${base}/login`)
      await signInWithPassword(page, email, PASSWORD)
      await loaded(page, () => page.getByRole('button', { name: 'Add a passkey' }).click())
      expect(await notice(page)).toBe('The passkey was added.')
      ctx.clock.advance(6 * 60)
      await loaded(page, () => page.reload())
      const byPasskey = page.getByRole('button', { name: 'Confirm with a passkey' })
      expect(await byPasskey.isVisible()).toBe(true)
      // (no TOTP: no code to offer)
      expect(await page.getByLabel('Code from your authenticator app').count()).toBe(0)
      await expectAccessible(page, 'step-up with a passkey button')
      await loaded(page, () => byPasskey.click())
      await page.waitForURL('**/account?done=reauth')
      expect(await notice(page)).toBe('Thank you. You can change your password in the next 5 minutes.')
      expect(await page.getByRole('button', { name: /^Remove the passkey/ }).count()).toBe(1)
    } finally {
      await context.close()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('signs up with JavaScript off: the form, the mailed code, verified, signed in', async () => {
    const email = 'barbara@example.com'
    const context = await (await sharedBrowser()).newContext({ javaScriptEnabled: false })
    try {
      const page = await context.newPage()
      await page.goto(`${base}/login`)
      await loaded(page, () => page.getByRole('link', { name: 'Create an account' }).click())
      expect(await heading(page)).toBe('Create an account')
      await expectAccessible(page, 'sign-up')
      await page.getByLabel('First name').fill('Barbara')
      await page.getByLabel('Last name').fill('Liskov')
      await page.getByLabel('E-mail address').fill(email)
      await page.getByLabel('New password').fill('short')
      await loaded(page, () => page.getByRole('button', { name: 'Create account' }).click())
      expect(await fieldError(page, 'newPassword')).toBe('The password must be at least 15 characters long.')
      await expectAccessible(page, 'sign-up: weak password')
      await page.getByLabel('New password').fill(NEW_PASSWORD)
      await loaded(page, () => page.getByRole('button', { name: 'Create account' }).click())
      expect(await heading(page)).toBe('Confirm your e-mail address')
      expect(await notice(page)).toBe('If the address can be registered, a code was sent to it. It is valid for 10 minutes.')
      await expectAccessible(page, 'verify, code sent')
      const code = otpIn(await mailTo(email, /sign-up code/))
      await page.getByLabel('Code from the e-mail').fill(code === '000000' ? '111111' : '000000')
      await loaded(page, () => page.getByRole('button', { name: 'Confirm' }).click())
      expect(await fieldError(page, 'code')).toBe('The code is wrong or has expired.')
      await expectAccessible(page, 'verify: wrong code')
      await page.getByLabel('Code from the e-mail').fill(code)
      await loaded(page, () => page.getByRole('button', { name: 'Confirm' }).click())
      await page.waitForURL('**/account')
      expect(await heading(page)).toBe('Your account')
      expect(await page.locator('dd').first().textContent()).toBe('Barbara Liskov')
    } finally {
      await context.close()
    }
  }, 60_000)
})
