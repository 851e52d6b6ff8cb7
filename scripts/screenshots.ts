// Screenshots of authd's pages for the docs (docs/screenshots/*.png), made again with
// `npm run screenshots`: a throwaway data directory with a demo tenant (branded) and user,
// the real server, and Chromium (playwright-core; AUTHD_TEST_CHROMIUM or /usr/bin/chromium)
// walking through the pages as a user would. `npm run screenshots -- --review DIR` writes
// every page instead (login, account, sessions, passkeys, applications, TOTP set-up), at a
// desktop and a phone width, in English and German, into DIR: to look at before and after a
// change to the pages. The admin console's users list, a user's page and the applications
// (console-users.png, console-user.png, console-applications.png) are made with an
// administrator who sets up TOTP on the account page.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { loadConfig } from '../src/config'
import { createClient } from '../src/core/oidc/clients'
import { setTenantRelyingParty } from '../src/core/tenants/relying-party'
import { login } from '../src/core/sign-in/login'
import { createTenant } from '../src/core/tenants/tenants'
import { updateTenantPages } from '../src/core/tenants/tenant-pages'
import { createUser, updateUser } from '../src/core/accounts/users'
import { addMembers, createGroup } from '../src/core/groups/groups'
import { totpCode, totpStep } from '../src/core/mfa/totp'
import { silentLogger } from '../src/log'
import { openRuntime } from '../src/runtime'
import { startServer } from '../src/server/serve'

const reviewAt = process.argv.indexOf('--review')
const OUT = reviewAt > 0 ? resolve(process.argv[reviewAt + 1] ?? 'screenshots-review') : join(import.meta.dir, '../docs/screenshots')
const PASSWORD = 'correct horse battery staple'
// Sessions elsewhere, as the account page lists them (the browsers' own User-Agent strings).
const ELSEWHERE = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
]
const dir = mkdtempSync(join(tmpdir(), 'authd-screenshots-'))
const runtime = await openRuntime({ ...loadConfig({ AUTHD_PORT: '0' }, { dataDir: dir }), argon2MemoryKib: 64, argon2TimeCost: 1 })
const server = await startServer(runtime, silentLogger)
const browser = await chromium.launch({ executablePath: process.env.AUTHD_TEST_CHROMIUM ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] })
try {
  const tenant = await createTenant(runtime, { name: 'Acme' })
  await updateTenantPages(runtime, tenant.id, { slug: 'acme', displayName: 'Acme Corporation', accentColor: '#0b6e4f' })
  // Passkeys need a host name as their relying party (a browser refuses an IP address): the
  // pages are opened at localhost.
  const origin = server.url.replace('127.0.0.1', 'localhost')
  await setTenantRelyingParty(runtime, tenant.id, { rpId: 'localhost', origins: [origin] })
  const ada = (await createUser(runtime, { tenantId: tenant.id, email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', password: PASSWORD })).user
  for (const userAgent of ELSEWHERE) {
    await login(runtime, { tenant, email: 'ada@example.com', password: PASSWORD, rememberMe: false }, { ip: '203.0.113.7', userAgent })
  }
  // OpenID clients that are not the operator's own ask for the user's consent (docs/oidc.md).
  const wiki = (await createClient(runtime, tenant.id, { name: 'Team Wiki', redirectUris: ['https://wiki.example.com/oauth/callback'] })).client
  const chat = (await createClient(runtime, tenant.id, { name: 'Chat', redirectUris: ['https://chat.example.com/callback'] })).client
  const authorize = (clientId: string, redirectUri: string, scope: string) =>
    `${origin}/t/acme/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 'demo' })}`
  mkdirSync(OUT, { recursive: true })
  const base = `${origin}/t/acme`

  if (reviewAt < 0) {
    const page = await (await browser.newContext({ viewport: { width: 900, height: 760 }, locale: 'en' })).newPage()
    const shot = (name: string) => page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true })
    await page.goto(`${base}/login`)
    await shot('login')
    await signIn(page, 'not the password')
    await shot('login-error')
    await signIn(page, PASSWORD)
    await shot('account')
    await page.goto(authorize(wiki.id, 'https://wiki.example.com/oauth/callback', 'openid profile email offline_access'))
    await shot('consent')
    await allow(page)
    await page.goto(authorize(chat.id, 'https://chat.example.com/callback', 'openid profile'))
    await allow(page)
    await page.goto(`${base}/account/apps`)
    await shot('apps')
    await page.context().clearCookies()
    await page.goto(`${base}/forgot`)
    await shot('forgot')
    await consoleShots(base, tenant.id, ada.id)
  } else {
    for (const locale of ['en', 'de']) {
      for (const [size, viewport] of [['desktop', { width: 900, height: 760 }], ['phone', { width: 390, height: 800 }]] as const) {
        const context = await browser.newContext({ viewport, locale, isMobile: size === 'phone' })
        const page = await withAuthenticator(context)
        const shot = (name: string) => page.screenshot({ path: join(OUT, `${name}-${locale}-${size}.png`), fullPage: true })
        await page.goto(`${base}/login`)
        await shot('login')
        await page.locator('#f-email').fill('ada@example.com')
        await page.locator('#f-password').fill(PASSWORD)
        await Promise.all([page.waitForURL('**/account'), page.locator('form[action$="/login"] button[type=submit]').click()])
        // (a click by script: where the layout overlaps the button, a user's tap would miss it too)
        await Promise.all([page.waitForURL('**/account?done=passkey-added'), page.locator('form[data-passkey-register] button').evaluate((button: any) => button.click())])
        await shot('account')
        if (locale === 'en' && size === 'desktop') {
          // (once: the consents given, authorize sends the browser straight on to the application)
          for (const [client, redirectUri, scope] of [[wiki, 'https://wiki.example.com/oauth/callback', 'openid profile email offline_access'], [chat, 'https://chat.example.com/callback', 'openid profile']] as const) {
            await page.goto(authorize(client.id, redirectUri, scope))
            await allow(page)
          }
        }
        await page.goto(`${base}/account/apps`)
        await shot('apps')
        await page.goto(`${base}/account`)
        await Promise.all([page.waitForEvent('load'), page.locator('form[action$="/account/totp"] button').evaluate((button: any) => button.click())])
        await shot('totp')
        await context.close()
      }
    }
  }
  console.log(`screenshots written to ${OUT}`)
} finally {
  await browser.close()
  await server.stop()
  runtime.close()
  rmSync(dir, { recursive: true, force: true })
}

/** The admin console (docs/console.md): an administrator with TOTP, the users list, Ada's page and the applications. */
async function consoleShots(base: string, tenantId: string, adaId: string) {
  const admin = (await createUser(runtime, { tenantId, email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', type: 'admin', password: PASSWORD })).user
  for (const [email, firstName, lastName] of [['alan@example.com', 'Alan', 'Turing'], ['barbara@example.com', 'Barbara', 'Liskov'], ['edsger@example.com', 'Edsger', 'Dijkstra']] as const) {
    await createUser(runtime, { tenantId, email, firstName, lastName, invite: true })
  }
  const edsger = await runtime.store.users.findByEmail(tenantId, 'edsger@example.com')
  await updateUser(runtime, edsger!.id, { disabled: true })
  const staff = await createGroup(runtime, { tenantId, name: 'staff' })
  await addMembers(runtime, staff.id, [adaId, admin.id])
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 760 }, locale: 'en' })).newPage()
  const shot = (name: string) => page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true })
  await page.goto(`${base}/login`)
  await signIn(page, PASSWORD, admin.email)
  await page.goto(`${base}/account`)
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Turn on two-step verification' }).click()])
  const secret = (await page.locator('p code').textContent())!.replaceAll(' ', '')
  // (the step before now for the set-up, now's to open the console: each code is taken once)
  const step = totpStep(Date.now())
  await page.getByLabel('Code', { exact: true }).fill(totpCode(secret, step - 1))
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Turn on' }).click()])
  await page.goto(`${base}/admin/users`)
  await page.getByLabel('Code').fill(totpCode(secret, step))
  await Promise.all([page.waitForURL('**/admin/users'), page.getByRole('button', { name: 'Verify' }).click()])
  await shot('console-users')
  await page.goto(`${base}/admin/users/${adaId}`)
  await shot('console-user')
  // (Team Wiki and Chat are the pages' own; a native app and a machine beside them)
  await createClient(runtime, tenantId, { name: 'Acme mobile', public: true, redirectUris: ['com.acme.app:/callback'], firstParty: true, allowedGroups: ['staff'] })
  await createClient(runtime, tenantId, { name: 'Billing robot', service: true, scopes: ['invoices:read'] })
  await page.goto(`${base}/admin/applications`)
  await shot('console-applications')
  await page.context().close()
}

async function signIn(page: Page, password: string, email = 'ada@example.com') {
  await page.getByLabel('E-mail address').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

/** Allows the application on the consent page: the form is sent beside the page, whose
 *  redirect to the example application could not load. */
async function allow(page: Page) {
  const form = page.locator('form:has(button[value=allow])')
  const action = new URL((await form.getAttribute('action'))!, page.url()).href
  const fields = Object.fromEntries(await form.locator('input[type=hidden]').evaluateAll((inputs: any[]) => inputs.map((input) => [input.name, input.value])))
  await page.context().request.post(action, { form: { ...fields, decision: 'allow' }, headers: { origin: new URL(action).origin }, maxRedirects: 0 })
}

/** A page with the DevTools virtual authenticator, so that the pages offer passkeys. */
async function withAuthenticator(context: BrowserContext): Promise<Page> {
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })
  return page
}
