// The newcomer's first run (`npm start`): on an empty database, a demo tenant, an API key
// and a demo user with a random password, printed once with a curl command to try.
import { createApiKey } from '../core/tenants/api-keys'
import { randomToken } from '../core/secrets'
import { createTenant } from '../core/tenants/tenants'
import { updateTenantPages } from '../core/tenants/tenant-pages'
import { createUser } from '../core/accounts/users'
import type { Runtime } from '../runtime'

export interface DemoAccount {
  tenantId: string
  /** The demo tenant's pages are under /t/{slug}/. */
  slug: string
  apiKey: string
  email: string
  password: string
}

/** Seeds the demo account when there are no tenants yet; null when the database has data. */
export async function seedDemoIfEmpty(runtime: Runtime): Promise<DemoAccount | null> {
  if ((await runtime.store.tenants.list()).length > 0) return null
  const tenant = await updateTenantPages(runtime, (await createTenant(runtime, { name: 'Demo' })).id, { slug: 'demo' })
  const { key } = await createApiKey(runtime, { tenantId: tenant.id, name: 'demo' })
  const email = 'demo@example.com'
  let password: string
  // The policy refuses a password containing the user's name or e-mail: draw again (rare).
  do password = randomToken(18)
  while (/demo|user/i.test(password))
  await createUser(runtime, { tenantId: tenant.id, email, firstName: 'Demo', lastName: 'User', type: 'admin', password })
  return { tenantId: tenant.id, slug: tenant.slug!, apiKey: key, email, password }
}

export function demoBanner(demo: DemoAccount, url: string): string {
  const api = `${url}/api/v1/auth`
  return [
    '',
    'authd created a demo account on this empty database. It is shown only this once:',
    '',
    `  tenant   ${demo.tenantId}`,
    `  API key  ${demo.apiKey}`,
    `  user     ${demo.email}`,
    `  password ${demo.password}`,
    '',
    'Sign in with a browser, at authd\'s own login page:',
    '',
    `  ${url}/t/${demo.slug}/login`,
    '',
    'Or log in over the API (saves the refresh cookie to cookies.txt):',
    '',
    `  curl -i -c cookies.txt -X POST ${api}/login \\`,
    `    -H 'Content-Type: application/json' -H 'X-API-KEY: ${demo.apiKey}' \\`,
    `    -d '{"email":"${demo.email}","password":"${demo.password}","rememberMe":true}'`,
    '',
    'Refresh the access token with that cookie:',
    '',
    `  curl -i -b cookies.txt -c cookies.txt ${api}/refresh-token`,
    '',
  ].join('\n')
}

export function existingDataHint(dataDir: string): string {
  return [
    '',
    `authd is serving the existing data in ${dataDir} (the demo account was printed on its first run).`,
    'Manage tenants, API keys and users with the CLI: ./dist/authd --help',
    '',
  ].join('\n')
}
