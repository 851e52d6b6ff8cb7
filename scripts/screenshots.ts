// Screenshots of authd's pages for the README (docs/screenshots/*.png), made again with
// `npm run screenshots`: a throwaway data directory with a demo tenant (branded) and user,
// the real server, and Chromium (playwright-core; AUTHD_TEST_CHROMIUM or /usr/bin/chromium)
// walking through the pages as a user would.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Page } from 'playwright-core'
import { loadConfig } from '../src/config'
import { createClient } from '../src/core/oidc/clients'
import { createTenant } from '../src/core/tenants'
import { updateTenantPages } from '../src/core/tenant-pages'
import { createUser } from '../src/core/users'
import { silentLogger } from '../src/log'
import { openRuntime } from '../src/runtime'
import { startServer } from '../src/server/serve'

const OUT = join(import.meta.dir, '../docs/screenshots')
const PASSWORD = 'correct horse battery staple'
const dir = mkdtempSync(join(tmpdir(), 'authd-screenshots-'))
const runtime = await openRuntime({ ...loadConfig({ AUTHD_PORT: '0' }, { dataDir: dir }), argon2MemoryKib: 64, argon2TimeCost: 1 })
const server = await startServer(runtime, silentLogger)
const browser = await chromium.launch({ executablePath: process.env.AUTHD_TEST_CHROMIUM ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] })
try {
  const tenant = await createTenant(runtime, { name: 'Acme' })
  await updateTenantPages(runtime, tenant.id, { slug: 'acme', displayName: 'Acme Corporation', accentColor: '#0b6e4f' })
  await createUser(runtime, { tenantId: tenant.id, email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', password: PASSWORD })
  mkdirSync(OUT, { recursive: true })
  const page = await (await browser.newContext({ viewport: { width: 900, height: 760 }, locale: 'en' })).newPage()
  const shot = (name: string) => page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true })
  const base = `${server.url}/t/acme`

  await page.goto(`${base}/login`)
  await shot('login')
  await signIn(page, 'not the password')
  await shot('login-error')
  await signIn(page, PASSWORD)
  await shot('account')
  await page.goto(`${base}/forgot`)
  await shot('forgot')
  // An OpenID client that is not the operator's own asks for the user's consent (docs/oidc.md).
  const { client } = await createClient(runtime, tenant.id, { name: 'Team Wiki', redirectUris: ['https://wiki.example.com/oauth/callback'] })
  const authorize = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: 'https://wiki.example.com/oauth/callback', scope: 'openid profile email offline_access', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 'demo' })
  await page.goto(`${base}/authorize?${authorize}`)
  await shot('consent')
  console.log(`screenshots written to ${OUT}`)
} finally {
  await browser.close()
  await server.stop()
  runtime.close()
  rmSync(dir, { recursive: true, force: true })
}

async function signIn(page: Page, password: string) {
  await page.getByLabel('E-mail address').fill('ada@example.com')
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}
