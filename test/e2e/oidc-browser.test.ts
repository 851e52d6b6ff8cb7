// The OpenID Provider in Chromium (product spec §21): a small relying party (openid-client
// behind a Bun server of its own) sends the browser to authd, the user signs in on authd's
// pages (with and without a second factor), allows a third-party client once, and the
// application greets them with the claims of the ID token. The pages' CSP lets the sign-in's
// redirects lead back to the client (form-action), which only a real browser enforces.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { addMembers, createGroup } from '../../src/core/groups/groups'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { runBrowserTests, seriousViolations, sharedBrowser } from '../browser'
import { PASSWORD } from '../helpers'
import { startBrowserRelyingParty, startOidcWorld, type OidcWorld } from '../oidc-journey'

let world: OidcWorld
let checker: BrowserContext

/** A relying party (test/oidc-journey.ts): /start begins a sign-in, /callback finishes it and greets the user. */
const startRelyingParty = (firstParty: boolean, allowedGroups?: string[]) => startBrowserRelyingParty(world, { name: firstParty ? 'Intranet' : 'Wiki', firstParty, allowedGroups })

beforeAll(async () => {
  if (!runBrowserTests) return
  world = await startOidcWorld()
  await world.ctx.addUser({ email: 'ada@example.com' })
  checker = await (await sharedBrowser()).newContext({ bypassCSP: true })
}, 60_000)
afterAll(async () => {
  if (!runBrowserTests) return
  await checker.close()
  await world.close()
})

const heading = (page: Page) => page.locator('h1').textContent()

async function signIn(page: Page, email: string) {
  await page.getByLabel('E-mail address').fill(email)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

describe('OpenID Connect sign-in in Chromium', () => {
  it.skipIf(!runBrowserTests)('signs in through the login page, asks a third-party client’s consent once, and the application greets the user', async () => {
    const app = await startRelyingParty(false)
    const context = await (await sharedBrowser()).newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${app.base}/start`)
      expect(await heading(page)).toStartWith('Sign in')
      await signIn(page, 'ada@example.com')
      await page.waitForURL('**/authorize?**')
      expect(await heading(page)).toBe('Allow Wiki?')
      expect(await page.locator('main li').allTextContents()).toEqual(['know who you are', 'see your name', 'see your e-mail address'])
      expect(await seriousViolations(checker, page)).toEqual([])
      await page.getByRole('button', { name: 'Allow' }).click()
      await page.waitForURL(`${app.base}/callback?**`)
      expect(await heading(page)).toBe('Hello Ada Lovelace (ada@example.com)')
      expect(await page.locator('#amr').textContent()).toBe('pwd')

      // Signed in, and allowed before: straight back to the application, no page between.
      await page.goto(`${app.base}/start`)
      await page.waitForURL(`${app.base}/callback?**`)
      expect(await heading(page)).toBe('Hello Ada Lovelace (ada@example.com)')

      // The account page lists the application; withdrawing the consent means it asks again.
      await page.goto(`${world.issuer}/account`)
      await page.getByRole('link', { name: 'Applications' }).click()
      expect(await page.locator('main li strong').allTextContents()).toEqual(['Wiki'])
      expect(await seriousViolations(checker, page)).toEqual([])
      await page.getByRole('button', { name: 'Withdraw: Wiki' }).click()
      await page.waitForURL('**/account/apps?done=withdrawn')
      expect(await page.locator('main li').count()).toBe(0)
      await page.goto(`${app.base}/start`)
      expect(await heading(page)).toBe('Allow Wiki?')
    } finally {
      await context.close()
      app.stop()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('with a second factor: the code after the password, then back to a first-party application without consent', async () => {
    const { email } = await world.ctx.addUser({ email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' })
    const login = await world.ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })
    const bearer = { authorization: `Bearer ${login.json.data.response.accessToken}` }
    const { secret } = (await world.ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer })).json.data
    expect((await world.ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: totpCode(secret, totpStep(world.ctx.clock.now())) } })).status).toBe(200)
    world.ctx.clock.advance(30)

    const app = await startRelyingParty(true)
    const context = await (await sharedBrowser()).newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${app.base}/start`)
      await signIn(page, email)
      await page.waitForURL('**/login')
      expect(await heading(page)).toBe('Two-step verification')
      await page.getByLabel('Code', { exact: true }).fill(totpCode(secret, totpStep(world.ctx.clock.now())))
      await page.getByRole('button', { name: 'Verify' }).click()
      await page.waitForURL(`${app.base}/callback?**`)
      expect(await heading(page)).toBe('Hello Grace Hopper (grace@example.com)')
      expect(await page.locator('#amr').textContent()).toBe('pwd otp')
    } finally {
      await context.close()
      app.stop()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('a client for one group only: anyone else sees that they have no access, signs out there and comes back as a member', async () => {
    const group = await createGroup(world.ctx.runtime, { tenantId: world.ctx.tenantId, name: 'intranet-users' })
    const { userId, email } = await world.ctx.addUser({ email: 'linus@example.com', firstName: 'Linus', lastName: 'Pauling' })
    await addMembers(world.ctx.runtime, group.id, [userId])
    const outsider = await world.ctx.addUser({ email: 'eve@example.com' })
    const app = await startRelyingParty(true, ['intranet-users'])
    const context = await (await sharedBrowser()).newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${app.base}/start`)
      await signIn(page, outsider.email)
      await page.waitForURL('**/authorize?**')
      expect(await heading(page)).toBe('You do not have access to Intranet')
      expect(await seriousViolations(checker, page)).toEqual([])
      await page.getByRole('button', { name: 'Sign out and use another account' }).click()
      await page.waitForURL('**/login?**')
      expect(await heading(page)).toStartWith('Sign in')
      await signIn(page, email)
      await page.waitForURL(`${app.base}/callback?**`)
      expect(await heading(page)).toBe('Hello Linus Pauling (linus@example.com)')
    } finally {
      await context.close()
      app.stop()
    }
  }, 60_000)
})
