// Sign-in through an upstream identity provider (product spec §25), in Chromium, end to end:
// an application that signs in with authd (an OpenID client of §21: openid-client behind a Bun
// server of its own) sends the browser to authd; authd's login page offers "Continue with
// Upstream"; the person signs in at panva's oidc-provider (test/upstreams/oidc-provider.ts, its
// own plain form); the upstream sends the browser back to authd's callback, and authd on
// through /authorize to the application, which greets the person with the ID token's claims.
//
// Why a real browser, when test/http/federation.test.ts covers the rules over HTTP: the journey
// crosses three origins (the application, authd, the upstream: 127.0.0.1 on three ports), and
// only a browser enforces the pages' Content-Security-Policy. Its form-action applies to every
// redirect that follows a form authd drew, so a page drawn at the callback (the second factor,
// "prove your account") must allow the application's redirect URI, or the browser refuses the
// last hop: a fetch-based test would never notice. CSP is never bypassed on the journey's
// pages; only axe's copy of a page runs with bypassCSP (test/browser.ts). When a navigation
// does not arrive, the failure names the browser's console (CSP reports land there) and its
// navigations hop by hop.
//
// This test found that gap: the second factor and "prove your account" pages, drawn at the
// callback (whose URL has no return_to), left the application's origin out of form-action, and
// Chromium refused the redirect to it after the code or the password was accepted (fixed in
// src/server/pages/federation.ts; test/http/federation.test.ts checks the header).
//
// Also here: the upstream's answer opened in another browser (login CSRF) is refused there, as
// only the starting browser's cookie holds the flow's state; the upstream's "Cancel" ends on
// authd's error page in the browser's language (a de-DE context); and axe finds nothing
// serious on the login page with the provider's button, the second factor, "prove your
// account" and the error page.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { createProvider } from '../../src/core/federation/providers'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { runBrowserTests, seriousViolations, sharedBrowser } from '../browser'
import { PASSWORD, queryDatabase } from '../helpers'
import { startBrowserRelyingParty, startOidcWorld, type OidcWorld } from '../oidc-journey'
import { startOidcUpstream, type OidcUpstream } from '../upstreams/oidc-provider'

/** The upstreams here are on this machine: loopback, which authd reaches only when allowed (AUTHD_PROVIDERS_ALLOW_PRIVATE). */
const UPSTREAMS_HERE = { federation: { allowPrivate: 'all' as const } }

// authd's client at the upstream (the secret has spaces and symbols: it goes in Basic auth).
const UPSTREAM_CLIENT = { clientId: 'authd-e2e', clientSecret: 'upstream secret & symbols' }

let world: OidcWorld
let upstream: OidcUpstream
let app: Awaited<ReturnType<typeof startBrowserRelyingParty>>
let checker: BrowserContext

beforeAll(async () => {
  if (!runBrowserTests) return
  upstream = await startOidcUpstream({ client: { ...UPSTREAM_CLIENT, redirectUris: [] } })
  // startOidcWorld sets AUTHD_PUBLIC_URL to the address it listens on, which is the address the
  // browser uses: so the redirect URI authd sends the upstream is the one registered there.
  world = await startOidcWorld(UPSTREAMS_HERE)
  const { redirectUri } = await createProvider(world.ctx.runtime, world.ctx.tenantId, {
    type: 'oidc',
    name: 'Upstream',
    issuer: upstream.issuer,
    ...UPSTREAM_CLIENT,
    createUsers: 'open',
    linkByEmail: 'verified',
  })
  expect(redirectUri.startsWith(`${world.issuer}/login/`)).toBe(true)
  upstream.setClient({ ...UPSTREAM_CLIENT, redirectUris: [redirectUri] })
  // The application (test/oidc-journey.ts): first-party, so authd asks no consent and the
  // journey goes straight back once signed in; it greets the user with the ID token's amr.
  app = await startBrowserRelyingParty(world, { name: 'Intranet', firstParty: true })
  checker = await (await sharedBrowser()).newContext({ bypassCSP: true })
}, 60_000)
afterAll(async () => {
  if (!runBrowserTests) return
  await checker.close()
  app.stop()
  await world.close()
  await upstream.close()
})

/** A fresh browser context (its own cookies at all three origins) whose console is kept. */
/** From the application's start to authd's login page, "Continue with Upstream", and the upstream's own sign-in as `account`. */
async function signInThroughUpstream(page: Page, arrive: (url: string | RegExp) => Promise<void>, account: string) {
  await page.goto(`${app.base}/start`)
  await arrive(`${world.issuer}/login?**`)
  await page.getByRole('link', { name: 'Continue with Upstream' }).click()
  await arrive(new RegExp(`^${upstream.issuer}/interaction/`))
  await page.getByLabel('Account').fill(account)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

async function openBrowser(options: { locale?: string } = {}) {
  const context = await (await sharedBrowser()).newContext(options)
  const page = await context.newPage()
  const messages: string[] = []
  page.on('console', (message) => void messages.push(`${message.type()}: ${message.text()}`))
  page.on('pageerror', (error) => void messages.push(`pageerror: ${error.message}`))
  // The navigations, hop by hop. A redirect that form-action refuses shows as the hop that
  // answered with it failing (net::ERR_ABORTED), and Chromium's console message names the
  // form's own URL, not the refused target: so both are kept.
  const navigations: string[] = []
  page.on('response', (response) => {
    if (response.request().isNavigationRequest()) navigations.push(`${response.status()} ${response.request().method()} ${response.url()}${response.headers().location ? ` -> ${response.headers().location}` : ''}`)
  })
  page.on('requestfailed', (request) => void navigations.push(`failed ${request.method()} ${request.url()}: ${request.failure()?.errorText}`))
  /** Waits for the page to reach `url`; if it does not, fails with where it is and what the console said. */
  async function arrive(url: string | RegExp) {
    try {
      await page.waitForURL(url, { timeout: 10_000 })
    } catch {
      throw new Error(`the browser did not reach ${url}; it is at ${page.url()}\nconsole:\n${messages.join('\n') || '(nothing)'}\nnavigations:\n${navigations.join('\n')}`)
    }
  }
  return { context, page, arrive }
}

const heading = (page: Page) => page.locator('h1').textContent()

describe('sign-in through an upstream provider in Chromium', () => {
  it.skipIf(!runBrowserTests)('from the application to authd, "Continue with Upstream", the upstream\'s own form, and back: the application greets the new user, and amr says fed', async () => {
    upstream.setAccount('grace-up', { email: 'grace@example.com', email_verified: true, given_name: 'Grace', family_name: 'Hopper' })
    const { context, page, arrive } = await openBrowser()
    try {
      await page.goto(`${app.base}/start`)
      await arrive(`${world.issuer}/login?**`)
      expect(await heading(page)).toStartWith('Sign in')
      const button = page.getByRole('link', { name: 'Continue with Upstream' })
      expect(await button.count()).toBe(1)
      expect(await seriousViolations(checker, page)).toEqual([])

      await button.click()
      await arrive(new RegExp(`^${upstream.issuer}/interaction/`))
      await page.getByLabel('Account').fill('grace-up')
      await page.getByRole('button', { name: 'Sign in' }).click()

      await arrive(`${app.base}/callback?**`)
      expect(await heading(page)).toBe('Hello Grace Hopper (grace@example.com)')
      expect((await page.locator('#amr').textContent())!.split(' ')).toContain('fed')
      // The person is authd's user now (rule 3), with the address the upstream vouched for.
      const [user] = await queryDatabase<{ email_verified_at: number | null }>(world.ctx, 'SELECT email_verified_at FROM users WHERE email = $1', ['grace@example.com'])
      expect(user?.email_verified_at).not.toBeNull()
    } finally {
      await context.close()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('a user with TOTP passes authd\'s second factor after the upstream, then continues to the application', async () => {
    // A verified local account that the upstream also vouches for: linked at once (rule 2),
    // then asked for its code: the upstream's password is no second factor.
    const { email } = await world.ctx.addUser({ email: 'ada@example.com', emailVerified: true })
    const login = await world.ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })
    const bearer = { authorization: `Bearer ${login.json.data.response.accessToken}` }
    const { secret } = (await world.ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer })).json.data
    expect((await world.ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: totpCode(secret, totpStep(world.ctx.clock.now())) } })).status).toBe(200)
    world.ctx.clock.advance(30)
    upstream.setAccount('ada-up', { email, email_verified: true })

    const { context, page, arrive } = await openBrowser()
    try {
      await signInThroughUpstream(page, arrive, 'ada-up')

      // The second factor is drawn at authd's callback URL; its form leads on to the application.
      await arrive(`${world.issuer}/login/*/callback?**`)
      expect(await heading(page)).toBe('Two-step verification')
      expect(await seriousViolations(checker, page)).toEqual([])
      await page.getByLabel('Code', { exact: true }).fill(totpCode(secret, totpStep(world.ctx.clock.now())))
      await page.getByRole('button', { name: 'Verify' }).click()
      await arrive(`${app.base}/callback?**`)
      expect(await heading(page)).toBe('Hello Ada Lovelace (ada@example.com)')
      expect(await page.locator('#amr').textContent()).toBe('fed otp')
    } finally {
      await context.close()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('an address the upstream did not vouch for: authd asks the person to prove the local account, then continues to the application', async () => {
    const { email } = await world.ctx.addUser({ email: 'linus@example.com', firstName: 'Linus', lastName: 'Pauling', emailVerified: true })
    upstream.setAccount('linus-up', { email, email_verified: false })

    const { context, page, arrive } = await openBrowser()
    try {
      await signInThroughUpstream(page, arrive, 'linus-up')

      // "Prove your account": the login page, with a notice and the address filled in.
      await arrive(`${world.issuer}/login/*/callback?**`)
      expect(await page.getByRole('status').textContent()).toContain('An account with the address linus@example.com already exists')
      expect(await page.getByLabel('E-mail address').inputValue()).toBe(email)
      expect(await seriousViolations(checker, page)).toEqual([])
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await arrive(`${app.base}/callback?**`)
      expect(await heading(page)).toBe('Hello Linus Pauling (linus@example.com)')
      // Signed in with the password; the upstream identity is now linked to the account.
      const linked = await queryDatabase(world.ctx, 'SELECT i.id FROM identities i JOIN users u ON u.id = i.user_id WHERE u.email = $1 AND i.subject = $2', [email, 'linus-up'])
      expect(linked).toHaveLength(1)
    } finally {
      await context.close()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('the upstream\'s answer opened in another browser (login CSRF) is refused there, and still signs in the browser that started', async () => {
    upstream.setAccount('katherine-up', { email: 'katherine@example.com', email_verified: true, given_name: 'Katherine', family_name: 'Johnson' })
    const starter = await openBrowser()
    const other = await openBrowser()
    try {
      // The upstream's redirect back to authd is held in the starting browser: its URL (code,
      // state, iss) is what an attacker would get a victim's browser to open. (Through the
      // DevTools protocol: playwright's route() does not see the hops of a redirect.)
      const cdp = await starter.context.newCDPSession(starter.page)
      const held = new Promise<string>((resolve) =>
        cdp.on('Fetch.requestPaused', (paused) => {
          void cdp.send('Fetch.failRequest', { requestId: paused.requestId, errorReason: 'BlockedByClient' })
          resolve(paused.request.url)
        }),
      )
      await cdp.send('Fetch.enable', { patterns: [{ urlPattern: `${world.issuer}/login/*/callback?*`, requestStage: 'Request' }] })
      await starter.page.goto(`${app.base}/start`)
      await starter.arrive(`${world.issuer}/login?**`)
      await starter.page.getByRole('link', { name: 'Continue with Upstream' }).click()
      await starter.arrive(new RegExp(`^${upstream.issuer}/interaction/`))
      await starter.page.getByLabel('Account').fill('katherine-up')
      await starter.page.getByRole('button', { name: 'Sign in' }).click()
      const answer = await held
      expect(new URL(answer).searchParams.get('code')).not.toBeNull()
      await cdp.send('Fetch.disable')

      // Another browser has no flow cookie: the answer is not its sign-in's, and no account is made.
      const refused = await other.page.goto(answer)
      expect(refused?.status()).toBe(400)
      expect(await other.page.getByRole('alert').textContent()).toContain('does not belong to a sign-in started in this browser')
      expect(await queryDatabase(world.ctx, 'SELECT id FROM users WHERE email = $1', ['katherine@example.com'])).toEqual([])

      // The browser that started it carries the same answer through to the application.
      await starter.page.goto(answer)
      await starter.arrive(`${app.base}/callback?**`)
      expect(await heading(starter.page)).toBe('Hello Katherine Johnson (katherine@example.com)')
    } finally {
      await starter.context.close()
      await other.context.close()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('the upstream\'s Cancel ends on authd\'s error page, in the browser\'s language', async () => {
    const { context, page, arrive } = await openBrowser({ locale: 'de-DE' })
    try {
      await page.goto(`${app.base}/start`)
      await arrive(`${world.issuer}/login?**`)
      expect(await page.locator('html').getAttribute('lang')).toBe('de')
      await page.getByRole('link', { name: 'Weiter mit Upstream' }).click()
      await arrive(new RegExp(`^${upstream.issuer}/interaction/`))
      const answer = page.waitForResponse((response) => response.url().startsWith(`${world.issuer}/login/`) && response.url().includes('/callback?'))
      await page.getByRole('button', { name: 'Cancel' }).click()
      expect((await answer).status()).toBe(400)
      await arrive(`${world.issuer}/login/*/callback?**`)
      expect(await heading(page)).toBe('Die Anmeldung mit Upstream hat nicht geklappt')
      expect(await page.getByRole('alert').textContent()).toBe('Upstream hat Sie nicht angemeldet. Die Antwort war: access_denied')
      expect(await seriousViolations(checker, page)).toEqual([])
      // Nobody is signed in: the way back is the login page.
      await page.getByRole('link', { name: 'Zurück zur Anmeldung' }).click()
      await arrive(`${world.issuer}/login`)
    } finally {
      await context.close()
    }
  }, 60_000)
})
