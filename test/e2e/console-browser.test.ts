// The admin console (product spec §27) in Chromium (playwright-core) against a real server: an
// administrator signs in with the password and a TOTP code, opens the console, goes to Users
// by the navigation (by keyboard), searches, opens a user, disables and enables them, creates
// one (the invitation), ends their sessions, lets the step-up window pass and confirms with the
// password; a user of type `user` is refused and switches accounts; the console in German.
// Then through every other section: registers a service client and an OpenID client (the latter
// by keyboard alone; each secret seen once, not on a reload), changes, rotates and deletes it;
// adds an OpenID Connect provider (nothing is fetched when it is added) and deletes it; adds a
// webhook endpoint on a real receiver, sees a delivery, rotates and deletes it; filters the
// audit log; brands the tenant in the settings and sees it on the console itself. The console
// has no JavaScript; the browser runs with it on, as people's do, and it must not matter. Every
// console page and state reached is checked with axe-core (no serious or critical finding).
// CONSOLE_PAGES lists the sections' pages to check: a section adds its line. SQLite, or
// PostgreSQL with AUTHD_TEST_ENGINE=postgres (scripts/test-postgres.ts runs it so).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { createGroup } from '../../src/core/groups/groups'
import { createUser } from '../../src/core/accounts/users'
import { createTenant } from '../../src/core/tenants/tenants'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { silentLogger } from '../../src/log'
import { consoleDe } from '../../src/server/console/strings/de'
import { startServer, type RunningServer } from '../../src/server/serve'
import { loaded, runBrowserTests, scriptlessChecker, sharedBrowser } from '../browser'
import { createTestContext, loginFor, PASSWORD, type TestContext } from '../helpers'
import { startReceiver, until } from '../webhook-receiver'

let ctx: TestContext
let server: RunningServer
let checker: BrowserContext
let violationsOf: (page: Page) => Promise<string[]>
let base: string
let admin: { userId: string; email: string; secret: string }
let ada: { userId: string; email: string }
let staffId: string

/**
 * The console's pages an admin reaches by a GET, each checked with axe-core and for its
 * heading: one line per page. `path` is below /t/{tenant}/admin; `heading` is the page's h1;
 * `status` its answer's (200 unless given).
 */
const CONSOLE_PAGES: { state: string; path: () => string; heading: string | RegExp; status?: number }[] = [
  { state: 'home', path: () => '', heading: 'Admin console' },
  { state: 'users list', path: () => '/users', heading: 'Users' },
  { state: 'users: no match', path: () => '/users?email=nobody%40example.com', heading: 'Users' },
  { state: 'users: not an address', path: () => '/users?email=not-an-address', heading: 'Users' },
  { state: 'a user', path: () => `/users/${ada.userId}`, heading: 'Ada Lovelace' },
  { state: 'groups', path: () => '/groups', heading: 'Groups' },
  { state: 'a group', path: () => `/groups/${staffId}`, heading: 'Group staff' },
  { state: 'access rules, no protected domain', path: () => '/rules', heading: 'Access rules' },
  { state: 'applications', path: () => '/applications', heading: 'Applications' },
  { state: 'identity providers', path: () => '/providers', heading: 'Identity providers' },
  { state: 'webhooks', path: () => '/webhooks', heading: 'Webhooks' },
  { state: 'audit log', path: () => '/audit', heading: 'Audit log' },
  { state: 'audit log: a family', path: () => '/audit?type=user.*&limit=25', heading: 'Audit log' },
  { state: 'audit log: a user by id, nothing found', path: () => `/audit?type=provider.*&user=${ada.userId}`, heading: 'Audit log' },
  { state: 'audit log: not a time', path: () => '/audit?since=yesterday', heading: 'Audit log', status: 400 },
  { state: 'settings', path: () => '/settings', heading: 'Settings' },
]

beforeAll(async () => {
  if (!runBrowserTests) return
  ctx = await createTestContext({ AUTHD_PORT: '0', AUTHD_REFUSAL_HOLD_MS: '0', AUTHD_WEBHOOKS_ALLOW_INSECURE: '1' })
  server = await startServer(ctx.runtime, silentLogger)
  base = `${server.url}/t/${ctx.tenantId}`
  const root = await ctx.addUser({ email: 'root@example.com', type: 'admin', firstName: 'Root', lastName: 'Admin' })
  admin = { ...root, secret: await withTotp(root.email) }
  ada = await ctx.addUser({ email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' })
  staffId = (await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'staff' })).id
  checker = await (await sharedBrowser()).newContext({ bypassCSP: true })
  violationsOf = scriptlessChecker(checker)
}, 60_000)

afterAll(async () => {
  if (!runBrowserTests) return
  await checker?.close()
  await server?.stop()
  await ctx?.close()
})

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const currentCode = (secret: string) => totpCode(secret, totpStep(ctx.clock.now()))
const heading = (page: Page) => page.locator('h1').textContent()
const notice = (page: Page) => page.locator('.notice').textContent()
const problem = (page: Page) => page.locator('[role=alert]').first().textContent()

/** Turns TOTP on for the user through the API: its secret. */
async function withTotp(email: string): Promise<string> {
  const token = (await loginFor(ctx, email)).json.data.response.accessToken as string
  const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })).json.data
  expect((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), body: { code: currentCode(secret) } })).status).toBe(200)
  ctx.clock.advance(30)
  return secret
}

async function expectAccessible(page: Page, state: string) {
  const violations = await violationsOf(page)
  expect({ state, violations }).toEqual({ state, violations: [] })
}

/** Signs in on the login page the browser is on: the password, then the TOTP code when `secret` is given. */
async function signIn(page: Page, email: string, secret?: string) {
  await page.locator('#f-email').fill(email)
  await page.locator('#f-password').fill(PASSWORD)
  await loaded(page, () => page.locator('form[action$="/login"] button[type=submit]').click())
  if (!secret) return
  await expectAccessible(page, 'second-factor challenge')
  ctx.clock.advance(30)
  await page.locator('#f-code').fill(currentCode(secret))
  await loaded(page, () => page.locator('form[action$="/login/second-factor"] button[type=submit]').click())
}

/** A fresh browser context (cookies of its own) with the admin signed in, on the console's home. */
async function adminIn(options: { locale?: string } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await (await sharedBrowser()).newContext({ locale: options.locale ?? 'en-US' })
  const page = await context.newPage()
  await page.goto(`${base}/admin`)
  expect(new URL(page.url()).pathname).toBe(`/t/${ctx.tenantId}/login`)
  await signIn(page, admin.email, admin.secret)
  expect(new URL(page.url()).pathname).toBe(`/t/${ctx.tenantId}/admin`)
  return { context, page }
}

/** Presses Tab until the focused element is the one `matches` recognises (as a person with a keyboard would). */
async function tabTo(page: Page, matches: (element: { tag: string; text: string; id: string }) => boolean, what: string) {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab')
    const focused = await page.evaluate(() => {
      const element = (globalThis as any).document.activeElement
      return { tag: element?.tagName.toLowerCase() ?? '', text: (element?.textContent ?? '').trim(), id: element?.id ?? '' }
    })
    if (matches(focused)) return
  }
  throw new Error(`Tab never reached ${what}`)
}

describe('the admin console in Chromium', () => {
  it.skipIf(!runBrowserTests)(
    'an admin signs in with TOTP, reaches Users by keyboard, searches, opens a user, disables and enables, creates one, ends sessions, confirms after 5 minutes',
    async () => {
      const { context, page } = await adminIn()
      try {
        expect(await heading(page)).toBe('Admin console')
        expect(await page.getByRole('navigation', { name: 'Admin console sections' }).isVisible()).toBe(true)
        await expectAccessible(page, 'home')

        // The navigation and the search form by keyboard alone.
        await tabTo(page, (e) => e.tag === 'a' && e.text === 'Users', 'the Users link')
        await loaded(page, () => page.keyboard.press('Enter'))
        expect(await heading(page)).toBe('Users')
        expect(await page.getByRole('link', { name: 'Users' }).getAttribute('aria-current')).toBe('page')
        await expectAccessible(page, 'users list')
        await tabTo(page, (e) => e.id === 'f-email-search', 'the search field')
        await page.keyboard.type(ada.email)
        await loaded(page, () => page.keyboard.press('Enter'))
        expect(new URL(page.url()).searchParams.get('email')).toBe(ada.email)
        expect(await page.locator('tbody tr').count()).toBe(1)
        await expectAccessible(page, 'users: one found')

        await loaded(page, () => page.getByRole('link', { name: ada.email }).click())
        expect(await heading(page)).toBe('Ada Lovelace')
        await expectAccessible(page, 'a user')

        await loaded(page, () => page.getByRole('button', { name: 'Disable' }).click())
        expect(await notice(page)).toBe('The user was disabled: their sessions ended.')
        expect(await page.locator('dd', { hasText: 'disabled' }).count()).toBe(1)
        await expectAccessible(page, 'a user, disabled')
        await loaded(page, () => page.getByRole('button', { name: 'Enable' }).click())
        expect(await notice(page)).toBe('The user was enabled.')
        const [disabled] = await ctx.runtime.store.audit.query({ tenantId: ctx.tenantId, type: 'user.disabled' })
        expect(disabled).toMatchObject({ userId: ada.userId, actorUserId: admin.userId })

        // A user created with the invitation; a taken address is the form's problem.
        await loaded(page, () => page.getByRole('link', { name: 'Users' }).click())
        await page.getByLabel('E-mail address', { exact: true }).fill(ada.email)
        await page.getByLabel('First name').fill('Ada')
        await page.getByLabel('Last name').fill('Again')
        await loaded(page, () => page.getByRole('button', { name: 'Create and invite' }).click())
        expect(await page.locator('[role=alert]').first().textContent()).toContain('already')
        await expectAccessible(page, 'users: create refused')
        await page.getByLabel('E-mail address', { exact: true }).fill('grace@example.com')
        await page.getByLabel('First name').fill('Grace')
        await page.getByLabel('Last name').fill('Hopper')
        await loaded(page, () => page.getByRole('button', { name: 'Create and invite' }).click())
        expect(await heading(page)).toBe('Grace Hopper')
        expect(await notice(page)).toBe('The user was created and invited.')
        const grace = await ctx.runtime.store.users.findByEmail(ctx.tenantId, 'grace@example.com')
        const [created] = (await ctx.runtime.store.audit.query({ tenantId: ctx.tenantId, type: 'user.created' })).filter((e) => e.userId === grace!.id)
        expect(created).toMatchObject({ actorUserId: admin.userId, detail: { invited: true } })
        expect(await page.getByRole('button', { name: 'Send an invitation again' }).isVisible()).toBe(true)
        await expectAccessible(page, 'a user, just created')

        // Ada's sessions (two sign-ins elsewhere), ended.
        await loginFor(ctx, ada.email)
        await loginFor(ctx, ada.email)
        await page.goto(`${base}/admin/users/${ada.userId}`)
        expect(await page.locator('ul.sessions li').count()).toBe(2)
        await loaded(page, () => page.getByRole('button', { name: 'End all sessions' }).click())
        expect(await notice(page)).toBe('All sessions were ended.')
        expect(await page.getByText('No live sessions.').isVisible()).toBe(true)

        // Five minutes later: the change asks for a confirmation first, then is made.
        ctx.clock.advance(6 * 60)
        await loaded(page, () => page.reload())
        expect(await page.getByText('You will be asked to confirm it is you before your next change.').isVisible()).toBe(true)
        await loaded(page, () => page.getByRole('button', { name: 'Disable' }).click())
        expect(await heading(page)).toBe('Confirm it is you')
        expect((await ctx.runtime.store.users.get(ada.userId))?.disabledAt).toBeNull()
        await expectAccessible(page, 'confirmation')
        await page.getByLabel('Password').fill('not the password')
        await loaded(page, () => page.getByRole('button', { name: 'Confirm with your password' }).click())
        expect(await page.locator('#f-password-error').textContent()).toBe('The password is wrong.')
        await expectAccessible(page, 'confirmation: wrong password')
        await page.getByLabel('Password').fill(PASSWORD)
        await loaded(page, () => page.getByRole('button', { name: 'Confirm with your password' }).click())
        expect(new URL(page.url()).pathname).toBe(`/t/${ctx.tenantId}/admin/users/${ada.userId}`)
        expect(await page.getByText(/^Confirmed: you can make changes until/).isVisible()).toBe(true)
        await loaded(page, () => page.getByRole('button', { name: 'Disable' }).click())
        expect(await notice(page)).toBe('The user was disabled: their sessions ended.')
        expect((await ctx.runtime.store.users.get(ada.userId))?.disabledAt).not.toBeNull()
        await loaded(page, () => page.getByRole('button', { name: 'Enable' }).click())
      } finally {
        await context.close()
      }
    },
    120_000,
  )

  it.skipIf(!runBrowserTests)(
    'an admin’s journey through every section: applications, identity providers, webhooks, the audit log and the settings',
    async () => {
      const { context, page } = await adminIn()
      const receiver = startReceiver()
      const audited = async (type: string) => (await ctx.runtime.store.audit.query({ tenantId: ctx.tenantId, type, limit: 1 }))[0]
      try {
        // Applications: a service client, its secret once; a reload of its page shows it no more.
        await loaded(page, () => page.getByRole('link', { name: 'Applications' }).click())
        expect(await heading(page)).toBe('Applications')
        expect(await page.getByText('No applications yet.').isVisible()).toBe(true)
        await expectAccessible(page, 'applications list, empty')
        await loaded(page, () => page.getByRole('button', { name: 'Register the service client' }).click())
        expect(await problem(page)).toContain('name')
        await expectAccessible(page, 'applications: service client refused')
        await page.locator('#f-serviceName').fill('Billing robot')
        await page.locator('#f-scopes').fill('invoices:read invoices:write')
        await loaded(page, () => page.getByRole('button', { name: 'Register the service client' }).click())
        expect(await heading(page)).toBe('Billing robot')
        const serviceSecret = (await page.locator('#client-secret').textContent())!
        expect(serviceSecret.length).toBeGreaterThan(20)
        expect(await page.getByText('Store it now').isVisible()).toBe(true)
        await expectAccessible(page, 'a service client, its secret once')
        const serviceId = (await page.locator('dd code').first().textContent())!
        await page.goto(`${base}/admin/applications/${serviceId}`)
        await loaded(page, () => page.reload())
        expect(await heading(page)).toBe('Billing robot')
        expect(await page.content()).not.toContain(serviceSecret)
        expect(await page.locator('#client-secret').count()).toBe(0)
        await expectAccessible(page, 'a service client')

        // An OpenID client by keyboard alone: its name, a redirect URI, the group `staff` ticked.
        await loaded(page, () => page.getByRole('link', { name: 'Applications' }).click())
        await tabTo(page, (e) => e.id === 'f-name', 'the client’s name')
        await page.keyboard.type('Team Wiki')
        await page.keyboard.press('Tab')
        await page.keyboard.type('https://wiki.example.com/callback')
        await tabTo(page, (e) => e.id === 'f-group-0', 'the group staff')
        await page.keyboard.press('Space')
        await tabTo(page, (e) => e.tag === 'button' && e.text === 'Register', 'the Register button')
        await loaded(page, () => page.keyboard.press('Enter'))
        expect(await heading(page)).toBe('Team Wiki')
        const firstSecret = (await page.locator('#client-secret').textContent())!
        const wiki = (await ctx.runtime.store.oidc.listClients(ctx.tenantId)).find((c) => c.name === 'Team Wiki')!
        expect({ redirectUris: wiki.redirectUris, allowedGroups: wiki.allowedGroups }).toEqual({ redirectUris: ['https://wiki.example.com/callback'], allowedGroups: ['staff'] })
        expect(await audited('oidc_client.created')).toMatchObject({ actorUserId: admin.userId })
        await expectAccessible(page, 'an OpenID client, its secret once')

        // A redirect URI the domain refuses is the form's problem.
        await loaded(page, () => page.getByRole('link', { name: 'Applications' }).click())
        await page.locator('#f-name').fill('Chat')
        await page.locator('#f-redirectUris').fill('http://chat.example.com/callback')
        await loaded(page, () => page.getByRole('button', { name: 'Register', exact: true }).click())
        expect(await problem(page)).toContain('http')
        expect(await page.locator('#f-name').inputValue()).toBe('Chat')
        await expectAccessible(page, 'applications: OpenID client refused')

        // Opened from the list; its redirect URIs changed, its secret rotated, deleted with its name typed.
        await loaded(page, () => page.getByRole('link', { name: 'Applications' }).click())
        expect(await page.locator('tbody tr').count()).toBe(2)
        await expectAccessible(page, 'applications list')
        await loaded(page, () => page.getByRole('link', { name: 'Team Wiki' }).click())
        expect(await page.locator('#client-secret').count()).toBe(0)
        await expectAccessible(page, 'an OpenID client')
        await page.getByLabel('Redirect URIs').fill('https://wiki.example.com/callback\nhttps://wiki.example.com/other')
        await loaded(page, () => page.getByRole('button', { name: 'Save' }).click())
        expect(await notice(page)).toBe('The application was changed.')
        expect((await ctx.runtime.store.oidc.getClient(wiki.id))?.redirectUris).toEqual(['https://wiki.example.com/callback', 'https://wiki.example.com/other'])
        expect(await audited('oidc_client.updated')).toMatchObject({ actorUserId: admin.userId })
        await loaded(page, () => page.getByRole('button', { name: 'Rotate the secret' }).click())
        const rotated = (await page.locator('#client-secret').textContent())!
        expect(rotated).not.toBe(firstSecret)
        expect(await audited('oidc_client.secret_rotated')).toMatchObject({ actorUserId: admin.userId })
        await expectAccessible(page, 'an OpenID client, its secret rotated')
        await page.getByLabel('Name of the application').fill('Team')
        await loaded(page, () => page.getByRole('button', { name: 'Delete the application' }).click())
        expect(await problem(page)).toContain('Type the application’s name exactly')
        await expectAccessible(page, 'an OpenID client: delete refused')
        await page.getByLabel('Name of the application').fill('Team Wiki')
        await loaded(page, () => page.getByRole('button', { name: 'Delete the application' }).click())
        expect(await notice(page)).toBe('The application was deleted.')
        expect(await ctx.runtime.store.oidc.getClient(wiki.id)).toBeNull()
        expect(await audited('oidc_client.deleted')).toMatchObject({ actorUserId: admin.userId })

        // Identity providers: any OpenID provider (nothing is fetched from its issuer when added).
        await loaded(page, () => page.getByRole('link', { name: 'Identity providers' }).click())
        expect(await heading(page)).toBe('Identity providers')
        await expectAccessible(page, 'identity providers, none')
        await page.getByLabel('Type').selectOption('oidc')
        await page.getByLabel('Name', { exact: true }).fill('Keycloak')
        await page.getByLabel('Issuer').fill('http://sso.example.com/realms/acme')
        await page.getByLabel('Client ID').fill('authd')
        await page.getByLabel('Client secret').fill('upstream-secret-4f2a')
        await loaded(page, () => page.getByRole('button', { name: 'Add', exact: true }).click())
        expect(await problem(page)).toContain('issuer must be an https URL')
        expect(await page.content()).not.toContain('upstream-secret-4f2a')
        await expectAccessible(page, 'identity providers: add refused')
        await page.getByLabel('Issuer').fill('https://sso.example.com/realms/acme')
        await page.getByLabel('Client secret').fill('upstream-secret-4f2a')
        await loaded(page, () => page.getByRole('button', { name: 'Add', exact: true }).click())
        expect(await heading(page)).toBe('Keycloak')
        const providerId = /\/admin\/providers\/([^/?]+)/.exec(page.url())![1]!
        expect(await notice(page)).toStartWith('The identity provider was added.')
        expect(await page.locator('#redirect-uri').textContent()).toBe(`${base}/login/${providerId}/callback`)
        expect(await page.content()).not.toContain('upstream-secret-4f2a')
        expect(await audited('provider.created')).toMatchObject({ actorUserId: admin.userId })
        await expectAccessible(page, 'an identity provider')
        await page.getByLabel('Name of the identity provider').fill('Keycloak')
        await loaded(page, () => page.getByRole('button', { name: 'Delete the identity provider' }).click())
        expect(await notice(page)).toBe('The identity provider was deleted, and 0 linked identities with it.')
        expect(await ctx.runtime.store.providers.get(providerId)).toBeNull()

        // Webhooks: an endpoint on a real receiver, its secret once, a delivery, rotated, deleted.
        await loaded(page, () => page.getByRole('link', { name: 'Webhooks' }).click())
        expect(await heading(page)).toBe('Webhooks')
        await expectAccessible(page, 'webhooks, none')
        await page.getByLabel('URL').fill('ftp://hooks.example.com')
        await loaded(page, () => page.getByRole('button', { name: 'Add the endpoint' }).click())
        expect(await page.locator('#f-url-error').isVisible()).toBe(true)
        await expectAccessible(page, 'webhooks: add refused')
        await page.getByLabel('URL').fill(receiver.url)
        await page.getByLabel('Description').fill('The test receiver')
        await loaded(page, () => page.getByRole('button', { name: 'Add the endpoint' }).click())
        expect(await heading(page)).toBe('Endpoint added')
        const hookSecret = (await page.locator('p.secret').textContent())!
        expect(hookSecret).toStartWith('whsec_')
        expect(await page.getByText('Store it now').isVisible()).toBe(true)
        await expectAccessible(page, 'webhooks: the secret once')
        receiver.state.secrets.push(hookSecret)
        await loaded(page, () => page.getByRole('link', { name: 'Open the endpoint' }).click())
        expect(await heading(page)).toBe(receiver.url)
        expect(await page.content()).not.toContain(hookSecret)
        await ctx.addUser({ email: 'hedy@example.com' })
        await until('the delivery', () => receiver.received.some((r) => r.type === 'user.created' && r.data.user.email === 'hedy@example.com'))
        await until('its row', async () => (await page.reload(), (await page.locator('tbody tr', { hasText: 'succeeded' }).count()) > 0))
        await expectAccessible(page, 'an endpoint with its deliveries')
        await loaded(page, () => page.getByRole('button', { name: 'Rotate the signing secret' }).click())
        expect(await heading(page)).toBe('Signing secret rotated')
        const newSecret = (await page.locator('p.secret').textContent())!
        expect(newSecret).not.toBe(hookSecret)
        expect(await audited('webhook_endpoint.secret_rotated')).toMatchObject({ actorUserId: admin.userId })
        await expectAccessible(page, 'webhooks: the rotated secret once')
        await loaded(page, () => page.getByRole('link', { name: 'Open the endpoint' }).click())
        await page.getByLabel('URL of the endpoint').fill(receiver.url)
        await loaded(page, () => page.getByRole('button', { name: 'Delete the endpoint' }).click())
        expect(await notice(page)).toBe('The endpoint was deleted.')
        expect(await ctx.runtime.store.webhooks.listEndpoints(ctx.tenantId)).toEqual([])

        // The audit log: by type, by a user's address, nothing found, an unknown address.
        await loaded(page, () => page.getByRole('link', { name: 'Audit log' }).click())
        expect(await heading(page)).toBe('Audit log')
        await page.getByLabel('Event type').selectOption('oidc_client.created')
        await loaded(page, () => page.getByRole('button', { name: 'Show' }).click())
        expect(new URL(page.url()).searchParams.get('type')).toBe('oidc_client.created')
        const rows = page.locator('tbody tr')
        expect(await rows.count()).toBe(2)
        for (const row of await rows.all()) expect(await row.locator('td').nth(3).textContent()).toBe(`console: ${admin.email}`)
        await expectAccessible(page, 'audit log by type')
        await page.getByLabel('Event type').selectOption('')
        await page.getByLabel('User (e-mail address or user id)').fill('hedy@example.com')
        await loaded(page, () => page.getByRole('button', { name: 'Show' }).click())
        expect(await rows.count()).toBeGreaterThan(0)
        const hedy = (await ctx.runtime.store.users.findByEmail(ctx.tenantId, 'hedy@example.com'))!
        for (const row of await rows.all()) expect(await row.locator('td').nth(2).textContent()).toBe(hedy.id)
        await expectAccessible(page, 'audit log by user')
        await page.getByLabel('Event type').selectOption('provider.*')
        await loaded(page, () => page.getByRole('button', { name: 'Show' }).click())
        expect(await page.getByText('No events match.').isVisible()).toBe(true)
        await expectAccessible(page, 'audit log, nothing found')
        await page.getByLabel('User (e-mail address or user id)').fill('nobody@example.com')
        await loaded(page, () => page.getByRole('button', { name: 'Show' }).click())
        expect(await problem(page)).toContain('No user of this tenant has this address.')
        await expectAccessible(page, 'audit log, an unknown address')

        // Settings: a colour that is none is refused; the display name and accent brand the console itself.
        await loaded(page, () => page.getByRole('link', { name: 'Settings' }).click())
        expect(await heading(page)).toBe('Settings')
        await page.getByLabel('Accent colour').fill('green')
        await loaded(page, () => page.getByRole('button', { name: 'Save' }).click())
        expect(await page.locator('#f-accentColor-error').textContent()).toContain('#rrggbb')
        await expectAccessible(page, 'settings: refused')
        await page.getByLabel('Display name').fill('Acme Corporation')
        await page.getByLabel('Accent colour').fill('#0B6E4F')
        await loaded(page, () => page.getByRole('button', { name: 'Save' }).click())
        expect(await notice(page)).toBe('The settings were saved.')
        expect(await page.locator('header.brand').textContent()).toBe('Acme Corporation')
        expect(await page.title()).toBe('Settings – Acme Corporation')
        expect(await page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.documentElement).getPropertyValue('--accent').trim())).toBe('#0b6e4f')
        expect(await page.getByRole('button', { name: 'Save' }).evaluate((button) => (globalThis as any).getComputedStyle(button).backgroundColor)).toBe('rgb(11, 110, 79)')
        expect(await audited('tenant.updated')).toMatchObject({ actorUserId: admin.userId, detail: { displayName: 'Acme Corporation', accentColor: '#0b6e4f' } })
        await expectAccessible(page, 'settings: saved, branded')
      } finally {
        receiver.stop()
        await context.close()
      }
    },
    120_000,
  )

  it.skipIf(!runBrowserTests)(
    'groups and access rules: a group made, a member added by address and removed, renamed and deleted; a rule refused without a protected domain',
    async () => {
      const { context, page } = await adminIn()
      try {
        await loaded(page, () => page.getByRole('link', { name: 'Groups' }).click())
        expect(await heading(page)).toBe('Groups')
        await loaded(page, () => page.getByRole('button', { name: 'Create the group' }).click())
        expect(await problem(page)).toBeString()
        await expectAccessible(page, 'groups: a name missing')
        await page.locator('#f-name').fill('engineering')
        await loaded(page, () => page.getByRole('button', { name: 'Create the group' }).click())
        expect(await heading(page)).toBe('Group engineering')
        expect(await notice(page)).toBe('The group was created.')
        await page.locator('#f-email').fill('nobody@example.com')
        await loaded(page, () => page.getByRole('button', { name: 'Add to the group' }).click())
        expect(await problem(page)).toBeString()
        await expectAccessible(page, 'a group: an unknown address')
        await page.locator('#f-email').fill(ada.email)
        await loaded(page, () => page.getByRole('button', { name: 'Add to the group' }).click())
        expect(await notice(page)).toBe('The user was added to the group.')
        expect(await ctx.runtime.store.groups.groupNamesOfUser(ada.userId)).toContain('engineering')
        await expectAccessible(page, 'a group with a member')
        await loaded(page, () => page.getByRole('button', { name: `Remove ${ada.email}` }).click())
        expect(await ctx.runtime.store.groups.groupNamesOfUser(ada.userId)).not.toContain('engineering')
        const [removed] = await ctx.runtime.store.audit.query({ tenantId: ctx.tenantId, type: 'group.member_removed', limit: 1 })
        expect(removed).toMatchObject({ actorUserId: admin.userId })
        await page.locator('#f-confirm_name').fill('engineering')
        await loaded(page, () => page.getByRole('button', { name: 'Delete the group' }).click())
        expect(await heading(page)).toBe('Groups')
        // Access rules: no protected domain on this tenant (the operator's), so a rule is refused and says why.
        await loaded(page, () => page.getByRole('link', { name: 'Access rules' }).click())
        expect(await heading(page)).toBe('Access rules')
        await page.locator('#f-domain').fill('app.example.com')
        await loaded(page, () => page.getByRole('button', { name: 'Add the rule' }).click())
        expect(await problem(page)).toBeString()
        await expectAccessible(page, 'access rules: a rule refused')
      } finally {
        await context.close()
      }
    },
    120_000,
  )

  it.skipIf(!runBrowserTests)('has no serious or critical axe-core finding on any of its pages', async () => {
    const { context, page } = await adminIn()
    try {
      for (const { state, path, heading: expected, status = 200 } of CONSOLE_PAGES) {
        const answer = await page.goto(`${base}/admin${path()}`)
        expect({ state, status: answer?.status() }).toEqual({ state, status })
        const title = await heading(page)
        expect({ state, title: typeof expected === 'string' ? title === expected : expected.test(title ?? '') }).toEqual({ state, title: true })
        await expectAccessible(page, state)
      }
    } finally {
      await context.close()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('refuses a user of type user, who signs out and comes back as the admin', async () => {
    const context = await (await sharedBrowser()).newContext()
    try {
      const { email } = await ctx.addUser({ email: 'linus@example.com' })
      const page = await context.newPage()
      await page.goto(`${base}/admin/users`)
      await signIn(page, email)
      const refused = await page.goto(`${base}/admin`)
      expect(refused?.status()).toBe(403)
      expect(await heading(page)).toBe('Not an administrator')
      expect(await page.getByRole('alert').textContent()).toContain('linus@example.com, who is not an administrator')
      await expectAccessible(page, 'not an administrator')
      await loaded(page, () => page.getByRole('button', { name: 'Sign out and use another account' }).click())
      expect(new URL(page.url()).searchParams.get('return_to')).toBe(`/t/${ctx.tenantId}/admin`)
      await signIn(page, admin.email, admin.secret)
      expect(await heading(page)).toBe('Admin console')
    } finally {
      await context.close()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('answers another tenant’s ids with the 404 page, and its forms change nothing', async () => {
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const stranger = (await createUser(ctx.runtime, { tenantId: other.id, email: 'stranger@other.example', firstName: 'S', lastName: 'T' })).user
    const group = await createGroup(ctx.runtime, { tenantId: other.id, name: 'theirs' })
    const { context, page } = await adminIn()
    try {
      for (const path of [`/users/${stranger.id}`, `/groups/${group.id}`]) {
        const answer = await page.goto(`${base}/admin${path}`)
        expect({ path, status: answer?.status() }).toEqual({ path, status: 404 })
        await expectAccessible(page, `another tenant's ${path.split('/')[1]}`)
      }
      // A form of this tenant's page sent at the stranger: the token is good, the id is not this tenant's.
      await page.goto(`${base}/admin/users/${ada.userId}`)
      const token = await page.locator('input[name=_form]').first().getAttribute('value')
      const refused = await page.request.post(`${base}/admin/users/${stranger.id}/disable`, { form: { _form: token! }, headers: { origin: new URL(base).origin }, maxRedirects: 0 })
      expect(refused.status()).toBe(404)
      expect((await ctx.runtime.store.users.get(stranger.id))?.disabledAt).toBeNull()
    } finally {
      await context.close()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('sends an admin without a second factor to set one up, and asks for it when set up in the session', async () => {
    const { email } = await ctx.addUser({ email: 'second@example.com', type: 'admin' })
    const context = await (await sharedBrowser()).newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${base}/admin`)
      await signIn(page, email)
      expect(await heading(page)).toBe('A second factor is needed')
      await expectAccessible(page, 'second factor: set one up')
      await loaded(page, () => page.getByRole('link', { name: 'Set up a second factor' }).click())
      await loaded(page, () => page.getByRole('button', { name: 'Turn on two-step verification' }).click())
      const secret = (await page.locator('p code').textContent())!.replaceAll(' ', '')
      await page.getByLabel('Code', { exact: true }).fill(currentCode(secret))
      await loaded(page, () => page.getByRole('button', { name: 'Turn on' }).click())
      ctx.clock.advance(30)
      await page.goto(`${base}/admin/users`)
      expect(await heading(page)).toBe('A second factor is needed')
      await expectAccessible(page, 'second factor: prove it')
      await page.getByLabel('Code').fill(currentCode(secret) === '000000' ? '111111' : '000000')
      await loaded(page, () => page.getByRole('button', { name: 'Verify' }).click())
      expect(await page.locator('#f-code-error').isVisible()).toBe(true)
      await expectAccessible(page, 'second factor: wrong code')
      await page.getByLabel('Code').fill(currentCode(secret))
      await loaded(page, () => page.getByRole('button', { name: 'Verify' }).click())
      expect(await heading(page)).toBe('Users')
    } finally {
      await context.close()
    }
  }, 60_000)

  it.skipIf(!runBrowserTests)('speaks German to a German browser', async () => {
    const { context, page } = await adminIn({ locale: 'de-DE' })
    try {
      expect(await page.locator('html').getAttribute('lang')).toBe('de')
      expect(await heading(page)).toBe(consoleDe['console.title'])
      expect(await page.locator('main p').last().textContent()).toContain('Hier verwalten Sie')
      await expectAccessible(page, 'home, German')
      await loaded(page, () => page.getByRole('link', { name: 'Benutzer' }).click())
      expect(await heading(page)).toBe('Benutzer')
      expect(await page.getByLabel(consoleDe['console.users.search']).isVisible()).toBe(true)
      await expectAccessible(page, 'users list, German')
      await page.goto(`${base}/admin/users?email=nobody%40example.com`)
      expect(await page.getByText(consoleDe['console.users.none']).isVisible()).toBe(true)
      await page.goto(`${base}/admin/users/${ada.userId}`)
      expect(await page.getByRole('heading', { name: consoleDe['console.user.profile'] }).isVisible()).toBe(true)
      await expectAccessible(page, 'a user, German')
    } finally {
      await context.close()
    }
  }, 60_000)
})
