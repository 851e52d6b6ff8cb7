// The device authorization grant in Chromium (product spec §26): openid-client is the device,
// a person opens verification_uri_complete, signs in, sees the code filled in, continues and
// clicks Approve; the device's poll then gets the tokens. axe checks each device page. A person
// the client's groups do not admit signs out from the refusal and comes back as someone else.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import * as oidc from 'openid-client'
import { addMembers, createGroup } from '../../src/core/groups/groups'
import { createClient } from '../../src/core/oidc/clients'
import { runBrowserTests, seriousViolations, sharedBrowser } from '../browser'
import { PASSWORD } from '../helpers'
import { startOidcWorld, type OidcWorld } from '../oidc-journey'

let world: OidcWorld
let checker: BrowserContext
let grace: { userId: string }

beforeAll(async () => {
  if (!runBrowserTests) return
  world = await startOidcWorld()
  await world.ctx.addUser({ email: 'ada@example.com' })
  grace = await world.ctx.addUser({ email: 'grace@example.com' })
  const ops = await createGroup(world.ctx.runtime, { tenantId: world.ctx.tenantId, name: 'ops' })
  await addMembers(world.ctx.runtime, ops.id, [grace.userId])
  checker = await (await sharedBrowser()).newContext({ bypassCSP: true })
}, 60_000)
afterAll(async () => {
  if (!runBrowserTests) return
  await checker.close()
  await world.close()
})

const heading = (page: Page) => page.locator('h1').textContent()

describe('the device page in Chromium', () => {
  it.skipIf(!runBrowserTests)('signs a device in: the complete URI, the sign-in, the code filled in, Continue, Approve; the device polls the tokens', async () => {
    const { client } = await createClient(world.ctx.runtime, world.ctx.tenantId, { name: 'Acme CLI', device: true, public: true })
    const config = await oidc.discovery(new URL(world.issuer), client.id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] })
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid profile email' })
    const context = await (await sharedBrowser()).newContext()
    try {
      const page = await context.newPage()
      await page.goto(started.verification_uri_complete!)
      expect(await heading(page)).toStartWith('Sign in')
      await page.getByLabel('E-mail address').fill('ada@example.com')
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.waitForURL('**/device?user_code=**')
      expect(await heading(page)).toBe('Connect a device')
      expect(await page.getByLabel('Code').inputValue()).toBe(started.user_code)
      expect(await seriousViolations(checker, page)).toEqual([])
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.waitForURL('**/device')
      expect(await heading(page)).toBe('Connect Acme CLI?')
      expect(await page.locator('main li').allTextContents()).toEqual(['know who you are', 'see your name', 'see your e-mail address'])
      expect(await seriousViolations(checker, page)).toEqual([])
      await page.getByRole('button', { name: 'Approve' }).click()
      await page.waitForURL('**/device/decide')
      expect(await page.getByRole('status').textContent()).toContain('your device is signed in')
      expect(await seriousViolations(checker, page)).toEqual([])
      const tokens = await oidc.pollDeviceAuthorizationGrant(config, { ...started, interval: 0 })
      expect(tokens.claims()).toMatchObject({ email: 'ada@example.com', name: 'Ada Lovelace' })
    } finally {
      await context.close()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('refuses a person the client does not admit at Continue; "Sign out and use another account" brings a member back to the code', async () => {
    const { client } = await createClient(world.ctx.runtime, world.ctx.tenantId, { name: 'Ops CLI', device: true, public: true, allowedGroups: ['ops'] })
    const config = await oidc.discovery(new URL(world.issuer), client.id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] })
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' })
    const context = await (await sharedBrowser()).newContext()
    const signIn = async (page: Page, email: string) => {
      await page.getByLabel('E-mail address').fill(email)
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.waitForURL('**/device?user_code=**')
    }
    try {
      const page = await context.newPage()
      await page.goto(started.verification_uri_complete!)
      await signIn(page, 'ada@example.com')
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.waitForURL('**/device')
      expect(await heading(page)).toBe('You do not have access to Ops CLI')
      expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0)
      expect(await seriousViolations(checker, page)).toEqual([])
      await page.getByRole('button', { name: 'Sign out and use another account' }).click()
      await page.waitForURL('**/login?**')
      expect(await heading(page)).toStartWith('Sign in')
      await signIn(page, 'grace@example.com')
      expect(await page.getByLabel('Code').inputValue()).toBe(started.user_code)
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.waitForURL('**/device')
      expect(await heading(page)).toBe('Connect Ops CLI?')
      await page.getByRole('button', { name: 'Approve' }).click()
      await page.waitForURL('**/device/decide')
      const tokens = await oidc.pollDeviceAuthorizationGrant(config, { ...started, interval: 0 })
      expect(tokens.claims()?.sub).toBe(grace.userId)
    } finally {
      await context.close()
    }
  }, 60_000)
})
