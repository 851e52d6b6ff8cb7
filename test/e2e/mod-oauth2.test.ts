// Apache's mod_oauth2 (Debian's libapache2-mod-oauth2) as an independent resource server of
// authd's service tokens (product spec §26): a throwaway Apache of its own guards one location by
// introspection at /t/{tenant}/introspect, as a confidential client holding the API's audience,
// and another by the issuer's JWKS. Their configurations are the blocks of docs/oidc.md (the
// fenced block after each `<!-- mod-oauth2.test.ts: … -->` marker) with only the addresses and
// the location replaced, so the documentation is what is tested. The callers are service clients
// getting their tokens with openid-client's client_credentials grant; what the resource server
// saw comes back in a header of the page it served. The store is createTestContext's: SQLite in
// the suite, PostgreSQL with AUTHD_TEST_ENGINE=postgres (scripts/test-postgres.ts).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as oidc from 'openid-client'
import { createClient, deleteClient } from '../../src/core/oidc/clients'
import { createTenant } from '../../src/core/tenants/tenants'
import { TEST_ENGINE } from '../helpers'
import { APACHE, APACHE_MODULES, startApache, type RunningApache } from '../apache'
import { freePort, startOidcWorld, type OidcWorld } from '../oidc-journey'

const apacheAvailable = existsSync(APACHE) && existsSync(`${APACHE_MODULES}/mod_oauth2.so`)
// (.ci/run installs them; in CI their absence fails the test instead of skipping it)
const runApacheTests = apacheAvailable || process.env.CI === 'true'
if (!apacheAvailable && process.env.CI !== 'true') console.warn('mod_oauth2 test skipped: apt-get install apache2 libapache2-mod-oauth2')

const DOCS = join(import.meta.dir, '..', '..', 'docs', 'oidc.md')
/** The docs' issuer and audience: the audience is used as it is, the issuer replaced by the world's. */
const DOCS_ISSUER = 'https://auth.example.com/t/acme'
const API = 'https://api.example.com/'
const REPORTS = 'https://reports.example.com/'
const PAGE = 'The invoices of the month'
type Way = 'introspect' | 'jwks'
const WAYS: Way[] = ['introspect', 'jwks']
const LOCATION: Record<Way, string> = { introspect: '/by-introspection/', jwks: '/by-jwks/' }

let world: OidcWorld
let apache: RunningApache
/** The caller: a service client that may ask for the API's audience or the reports'. */
let billing: { id: string; config: oidc.Configuration }

/** The fenced block that follows `<!-- mod-oauth2.test.ts: {way} -->` in docs/oidc.md. */
function documented(way: Way): string {
  const text = readFileSync(DOCS, 'utf8')
  const marker = `<!-- mod-oauth2.test.ts: ${way} -->\n`
  const at = text.indexOf(marker)
  if (at === -1) throw new Error(`docs/oidc.md has no ${marker.trim()}`)
  const block = /^```apache\n([\s\S]*?)\n```\n/.exec(text.slice(at + marker.length))
  if (!block) throw new Error(`no apache block after ${marker.trim()} in docs/oidc.md`)
  return block[1]!
}

/** Replaces each `from` (every occurrence), and fails when one is missing: the docs changed. */
function substitute(text: string, replacements: Array<[string, string]>): string {
  for (const [from, to] of replacements) {
    if (!text.includes(from)) throw new Error(`the documented configuration no longer has ${from}: update the test's substitutions`)
    text = text.replaceAll(from, to)
  }
  return text
}

/**
 * Apache (test/apache.ts) on a free port, with the docs' two locations. The introspecting
 * client's id and secret reach it through its environment, as the docs' `${…}` say: the secret
 * is in no file.
 */
function startResourceServer(resourceServer: { id: string; secret: string }) {
  const locations = WAYS.map((way) => substitute(documented(way), [[DOCS_ISSUER, world.issuer], ['<Location /api/>', `<Location ${LOCATION[way]}>`]])).join('\n')
  return startApache({
    port: freePort(),
    pages: Object.fromEntries(WAYS.map((way) => [`${LOCATION[way]}index.html`, `<!doctype html><title>Invoices</title><p>${PAGE}</p>\n`])),
    modules: ['headers_module mod_headers.so', 'oauth2_module mod_oauth2.so'],
    config: () => `# What the API saw, on the pages it served: the caller (the token's sub), the audience (a
# variable) and the scope (a request header).
Header set X-Remote-User "expr=%{REMOTE_USER}"
Header set X-Token-Aud "%{OAUTH2_CLAIM_aud}e"
Header set X-Token-Scope "expr=%{req:OAUTH2_CLAIM_scope}"

${locations}`,
    env: { INVOICES_API_ID: resourceServer.id, INVOICES_API_SECRET: resourceServer.secret },
  })
}

/** A service client of the world's tenant (or another's) and openid-client's Configuration for it. */
async function serviceClient(input: { name: string; audiences: string[]; tenantId?: string; issuer?: string }) {
  const { client, clientSecret } = await createClient(world.ctx.runtime, input.tenantId ?? world.ctx.tenantId, { name: input.name, service: true, scopes: ['invoices:read'], audiences: input.audiences, tokenLifetime: '5m' })
  const config = await oidc.discovery(new URL(input.issuer ?? world.issuer), client.id, undefined, oidc.ClientSecretBasic(clientSecret!), { execute: [oidc.allowInsecureRequests] })
  return { id: client.id, config }
}

const tokenFor = async (caller: { config: oidc.Configuration }, resource?: string) => (await oidc.clientCredentialsGrant(caller.config, resource === undefined ? {} : { resource })).access_token

/** What a caller of the API gets at a location: the status, whether the page came, and who Apache said called. */
async function call(way: Way, token?: string) {
  // (each on a connection of its own: Apache in -X, one process, stops only after a kept-alive
  // connection has timed out, 5 s)
  const headers: Record<string, string> = { connection: 'close', ...(token !== undefined && { authorization: `Bearer ${token}` }) }
  const response = await fetch(`${apache.origin}${LOCATION[way]}`, { headers })
  const body = await response.text()
  const challenge = response.headers.get('www-authenticate')
  return {
    status: response.status,
    page: body.includes(PAGE),
    caller: response.headers.get('x-remote-user'),
    aud: response.headers.get('x-token-aud'),
    scope: response.headers.get('x-token-scope'),
    // (the RFC 6750 challenge: its scheme and error code)
    challenge: challenge === null ? null : `${challenge.split(' ')[0]} ${/error="([^"]*)"/.exec(challenge)?.[1] ?? ''}`.trim(),
  }
}

const ADMITTED = (caller: string) => ({ status: 200, page: true, caller, aud: API, scope: 'invoices:read', challenge: null })
/** Refused, with the challenge's error: `invalid_token` when the token failed the checks, `insufficient_scope`
 *  when it passed them but a `Require oauth2_claim` did not hold, `invalid_request` when there was none. */
const REFUSED = (error: 'invalid_token' | 'insufficient_scope' | 'invalid_request' = 'invalid_token') => ({ status: 401, page: false, caller: null, aud: null, scope: null, challenge: `Bearer ${error}` })

beforeAll(async () => {
  if (!runApacheTests) return
  world = await startOidcWorld()
  // The API: a confidential client that asks for no token itself and holds the API's audience.
  const { client, clientSecret } = await createClient(world.ctx.runtime, world.ctx.tenantId, { name: 'Invoices API', service: true, scopes: [], audiences: [API] })
  billing = await serviceClient({ name: 'Billing', audiences: [API, REPORTS] })
  apache = await startResourceServer({ id: client.id, secret: clientSecret! })
}, 60_000)

afterAll(async () => {
  if (!runApacheTests) return
  await apache?.stop()
  await world?.close()
})

describe(`Apache's mod_oauth2 in front of an API, by introspection and by the JWKS (${TEST_ENGINE})`, () => {
  it.skipIf(!runApacheTests)('admits a service client’s token for the API’s audience, and tells the API who called', async () => {
    const token = await tokenFor(billing, API)
    for (const way of WAYS) expect({ way, ...(await call(way, token)) }, apache.errorLog()).toEqual({ way, ...ADMITTED(billing.id) })
  })

  it.skipIf(!runApacheTests)('refuses a request without a token, with garbage, and with a token whose signature or claims were changed', async () => {
    const token = await tokenFor(billing, API)
    const [header, payload, signature] = token.split('.') as [string, string, string]
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url')}.${signature}`
    // (a signature of the right length with its last bytes changed)
    const tampered = `${header}.${payload}.${signature.slice(0, -6)}${signature.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA'}`
    for (const way of WAYS) {
      expect({ way, ...(await call(way)) }, apache.errorLog()).toEqual({ way, ...REFUSED('invalid_request') })
      for (const [what, bad] of [['garbage', 'garbage'], ['not a JWT', 'a.b.c'], ['tampered signature', tampered], ['changed claims', forged]] as const) {
        expect({ way, what, ...(await call(way, bad)) }, apache.errorLog()).toEqual({ way, what, ...REFUSED() })
      }
    }
  })

  it.skipIf(!runApacheTests)('refuses a token for another audience: authd tells the API’s client nothing of it, and the JWKS location requires the API’s aud', async () => {
    // For the reports (an audience Billing holds, the API does not), and for the tenant's
    // audience (no resource asked), which authd's own user tokens name too.
    for (const resource of [REPORTS, undefined]) {
      const token = await tokenFor(billing, resource)
      expect(await call('introspect', token), apache.errorLog()).toEqual(REFUSED())
      expect(await call('jwks', token), apache.errorLog()).toEqual(REFUSED('insufficient_scope'))
    }
  })

  it.skipIf(!runApacheTests)('refuses another tenant’s token for the same audience, signed by the same key: the JWKS location requires the issuer', async () => {
    const beta = await createTenant(world.ctx.runtime, { name: 'Beta' })
    const betaIssuer = world.issuer.replace(world.ctx.tenantId, beta.id)
    const token = await tokenFor(await serviceClient({ name: 'Beta billing', audiences: [API], tenantId: beta.id, issuer: betaIssuer }), API)
    expect(await call('introspect', token), apache.errorLog()).toEqual(REFUSED())
    expect(await call('jwks', token), apache.errorLog()).toEqual(REFUSED('insufficient_scope'))
  })

  it.skipIf(!runApacheTests)('refuses an expired token', async () => {
    // Issued ten minutes ago (authd's clock set back), for five minutes: expired for authd and
    // for Apache alike, each by its own clock.
    world.ctx.clock.advance(-600)
    const token = await tokenFor(billing, API).finally(() => world.ctx.clock.advance(600))
    for (const way of WAYS) expect({ way, ...(await call(way, token)) }, apache.errorLog()).toEqual({ way, ...REFUSED() })
  })

  it.skipIf(!runApacheTests)('after its client is deleted, a token is refused by introspection at once, and admitted by the JWKS until it expires', async () => {
    const nightly = await serviceClient({ name: 'Nightly', audiences: [API] })
    const token = await tokenFor(nightly, API)
    for (const way of WAYS) expect({ way, ...(await call(way, token)) }, apache.errorLog()).toEqual({ way, ...ADMITTED(nightly.id) })
    await deleteClient(world.ctx.runtime, nightly.id)
    expect(await call('introspect', token), apache.errorLog()).toEqual(REFUSED())
    expect(await call('jwks', token), apache.errorLog()).toEqual(ADMITTED(nightly.id))
  })
})
