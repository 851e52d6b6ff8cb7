// Apache's mod_auth_openidc (Debian's libapache2-mod-auth-openidc) as a real relying party of
// authd's OpenID Provider (product spec §23): a throwaway Apache of its own, configured from
// authd's discovery with a confidential client and the scope `groups`, admits to a location
// with `Require claim groups:admins` a member of admins and refuses a user who is signed in but
// in no such group. The browser is a cookie-keeping user agent without JavaScript that follows
// the redirects between Apache and authd as a browser would.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync } from 'node:fs'
import { createClient } from '../../src/core/oidc/clients'
import { addMembers, createGroup } from '../../src/core/groups/groups'
import { APACHE, APACHE_MODULES, startApache, type RunningApache } from '../apache'
import { freePort, startOidcWorld, UserAgent, type OidcWorld } from '../oidc-journey'

const apacheAvailable = existsSync(APACHE) && existsSync(`${APACHE_MODULES}/mod_auth_openidc.so`)
// (.ci/run installs them; in CI their absence fails the test instead of skipping it)
const runApacheTests = apacheAvailable || process.env.CI === 'true'
if (!apacheAvailable && process.env.CI !== 'true') console.warn('mod_auth_openidc test skipped: apt-get install apache2 libapache2-mod-auth-openidc')

const SECRET_PAGE = 'Welcome to the admins’ corner'

let world: OidcWorld
let apache: RunningApache

/** Apache (test/apache.ts) as a relying party of the world's issuer, on a free port. */
function startRelyingParty(port: number, settings: { issuer: string; clientId: string; clientSecret: string }) {
  return startApache({
    port,
    logLevel: 'warn auth_openidc:info',
    pages: { 'hello.html': '<!doctype html><title>Hello</title><p>Signed in</p>\n', 'admins/index.html': `<!doctype html><title>Admins</title><p>${SECRET_PAGE}</p>\n` },
    modules: ['auth_openidc_module mod_auth_openidc.so'],
    config: (origin) => `OIDCProviderMetadataURL ${settings.issuer}/.well-known/openid-configuration
OIDCClientID ${settings.clientId}
OIDCClientSecret ${settings.clientSecret}
OIDCRedirectURI ${origin}/redirect_uri
OIDCCryptoPassphrase ${crypto.randomUUID()}
OIDCScope "openid email groups"
OIDCPKCEMethod S256
OIDCRemoteUserClaim email

<Location />
  AuthType openid-connect
  Require valid-user
</Location>
<Location /admins/>
  AuthType openid-connect
  Require claim groups:admins
</Location>`,
  })
}

/**
 * A browser asking Apache for `path`: it follows every redirect (Apache to authd's authorize,
 * authd back to Apache's redirect URI, Apache to the page first asked for), signs in on authd's
 * login page when it shows, and returns the last answer.
 */
async function visit(path: string, email: string) {
  const agent = new UserAgent(new URL(world.issuer).origin)
  let url = new URL(path, apache.origin)
  let answer = await agent.send(url.href)
  const seen: string[] = [url.href]
  for (let hops = 0; hops < 20; hops++) {
    if (answer.location) {
      url = new URL(answer.location, url)
      seen.push(url.href)
      answer = await agent.send(url.href)
    } else if (url.origin === agent.origin && answer.status === 200 && answer.html.includes('action="') && url.pathname.endsWith('/login')) {
      answer = await agent.signIn(answer, email)
      seen.push('(signed in)')
    } else {
      return { ...answer, url: url.href, seen }
    }
  }
  throw new Error(`more than 20 redirects: ${seen.join(' → ')}`)
}

beforeAll(async () => {
  if (!runApacheTests) return
  world = await startOidcWorld()
  const { ctx } = world
  const admins = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
  const staff = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'staff' })
  const { userId: ada } = await ctx.addUser({ email: 'ada@example.com' })
  const { userId: grace } = await ctx.addUser({ email: 'grace@example.com' })
  await addMembers(ctx.runtime, admins.id, [ada])
  await addMembers(ctx.runtime, staff.id, [ada, grace])
  const port = freePort()
  const { client, clientSecret } = await createClient(ctx.runtime, ctx.tenantId, { name: 'Apache', redirectUris: [`http://127.0.0.1:${port}/redirect_uri`], firstParty: true })
  apache = await startRelyingParty(port, { issuer: world.issuer, clientId: client.id, clientSecret: clientSecret! })
}, 60_000)

afterAll(async () => {
  if (!runApacheTests) return
  await apache?.stop()
  await world?.close()
})

describe("Apache's mod_auth_openidc with Require claim groups:admins", () => {
  it.skipIf(!runApacheTests)('admits a member of admins to the protected page after signing in at authd', async () => {
    const answer = await visit('/admins/', 'ada@example.com')
    expect({ status: answer.status, url: answer.url, page: answer.html.includes(SECRET_PAGE) }, apache.errorLog()).toEqual({ status: 200, url: `${apache.origin}/admins/`, page: true })
    // The way there went through authd's authorization endpoint and back to Apache's redirect URI.
    expect(answer.seen.some((url) => url.startsWith(`${world.issuer}/authorize?`) && new URL(url).searchParams.get('scope') === 'openid email groups')).toBe(true)
    expect(answer.seen.some((url) => url.startsWith(`${apache.origin}/redirect_uri?`))).toBe(true)
  })

  it.skipIf(!runApacheTests)('refuses a signed-in user who is not in admins (in another group), who still reaches what any signed-in user may', async () => {
    const refused = await visit('/admins/', 'grace@example.com')
    expect([401, 403], apache.errorLog()).toContain(refused.status)
    expect(refused.html).not.toContain(SECRET_PAGE)
    expect(refused.seen.some((url) => url.startsWith(`${apache.origin}/redirect_uri?`))).toBe(true)
    const hello = await visit('/hello.html', 'grace@example.com')
    expect({ status: hello.status, signedIn: hello.html.includes('Signed in') }).toEqual({ status: 200, signedIn: true })
  })
})
