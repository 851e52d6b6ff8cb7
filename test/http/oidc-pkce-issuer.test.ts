// The OpenID Provider's PKCE and issuer rules (product spec §21): PKCE with S256 required of
// public clients and accepted from confidential ones; a code is redeemed at the issuer spelling
// it was issued at; a tenant id in upper case is no issuer; a disabled tenant's userinfo answers
// invalid_token.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import * as oidc from 'openid-client'
import { updateTenantPages } from '../../src/core/tenants/tenant-pages'
import { setTenantDisabled } from '../../src/core/tenants/tenants'
import { authorizationRequest, CALLBACK, relyingParty, startOidcWorld, UserAgent, type OidcWorld } from '../oidc-journey'

let world: OidcWorld
let email: string
beforeEach(async () => {
  world = await startOidcWorld()
  email = (await world.ctx.addUser({ email: 'ada@example.com' })).email
})
afterEach(() => world.close())

type Party = Awaited<ReturnType<typeof relyingParty>>

const token = (party: Party, form: Record<string, string>, issuer = world.issuer) =>
  fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(party.clientSecret !== null && { authorization: `Basic ${btoa(`${party.client.id}:${party.clientSecret}`)}` }) },
    body: new URLSearchParams({ ...form, ...(party.clientSecret === null && { client_id: party.client.id }) }),
  }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }))

/** The answer of the authorize endpoint for `url` (after signing in if asked): the callback's parameters. */
async function callbackOf(browser: UserAgent, url: URL) {
  let answer = await browser.follow(url.href)
  if (answer.html.includes('name="password"')) answer = await browser.signIn(answer, email)
  expect(answer.location).toStartWith(CALLBACK)
  return new URL(answer.location!).searchParams
}

const withoutPkce = (url: URL) => {
  url.searchParams.delete('code_challenge')
  url.searchParams.delete('code_challenge_method')
  return url
}

describe('OpenID Provider: PKCE', () => {
  it('a confidential client may go without it; then a verifier at the token endpoint is refused', async () => {
    const wiki = await relyingParty(world)
    const browser = new UserAgent(world.server.url)
    const exchange = async (verifier?: string) => {
      const request = await authorizationRequest(wiki.config)
      const code = (await callbackOf(browser, withoutPkce(request.url))).get('code')!
      expect(code).toBeString()
      return token(wiki, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, ...(verifier !== undefined && { code_verifier: verifier }) })
    }
    expect(await exchange(oidc.randomPKCECodeVerifier())).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    const granted = await exchange()
    expect(granted.status).toBe(200)
    expect(granted.json.id_token).toBeString()
    // (sent, it must be S256: plain stays refused)
    const plain = await authorizationRequest(wiki.config, { code_challenge_method: 'plain' })
    expect(Object.fromEntries(await callbackOf(browser, plain.url))).toMatchObject({ error: 'invalid_request' })
  })

  it('a public client must send it: without a challenge the request is refused, without the verifier the exchange', async () => {
    const spa = await relyingParty(world, { public: true })
    const browser = new UserAgent(world.server.url)
    const refused = Object.fromEntries(await callbackOf(browser, withoutPkce((await authorizationRequest(spa.config)).url)))
    expect(refused).toMatchObject({ error: 'invalid_request', error_description: 'code_challenge is required (PKCE with S256) for a public client' })
    const request = await authorizationRequest(spa.config)
    const code = (await callbackOf(browser, request.url)).get('code')!
    expect(await token(spa, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK })).toMatchObject({ status: 400, json: { error: 'invalid_request' } })
    expect((await token(spa, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: request.verifier })).status).toBe(200)
  })
})

describe('OpenID Provider: one issuer per spelling', () => {
  it('a code issued at /t/{slug} is redeemed there only, not at /t/{id}', async () => {
    await updateTenantPages(world.ctx.runtime, world.ctx.tenantId, { slug: 'acme' })
    const bySlug = `${world.server.url}/t/acme`
    const wiki = await relyingParty(world, { issuer: bySlug })
    const browser = new UserAgent(world.server.url)
    const request = await authorizationRequest(wiki.config)
    const callback = await callbackOf(browser, request.url)
    expect(callback.get('iss')).toBe(bySlug)
    const form = { grant_type: 'authorization_code', code: callback.get('code')!, redirect_uri: CALLBACK, code_verifier: request.verifier }
    expect(await token(wiki, form, world.issuer)).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    const granted = await token(wiki, form, bySlug)
    expect(granted.status).toBe(200)
  })

  it('a tenant id in upper case is no issuer', async () => {
    const upper = `${world.server.url}/t/${world.ctx.tenantId.toUpperCase()}`
    expect((await fetch(`${world.issuer}/.well-known/openid-configuration`)).status).toBe(200)
    expect((await fetch(`${upper}/.well-known/openid-configuration`)).status).toBe(404)
    expect((await fetch(`${upper}/jwks`)).status).toBe(404)
    const wiki = await relyingParty(world)
    const browser = new UserAgent(world.server.url)
    const request = await authorizationRequest(wiki.config)
    await callbackOf(browser, request.url)
    const shouted = await browser.send(request.url.href.replace(world.issuer, upper))
    expect({ status: shouted.status, location: shouted.location }).toEqual({ status: 400, location: null })
  })

  it("a disabled tenant's userinfo answers 401 invalid_token", async () => {
    const wiki = await relyingParty(world)
    const request = await authorizationRequest(wiki.config)
    const callback = await callbackOf(new UserAgent(world.server.url), request.url)
    const tokens = await oidc.authorizationCodeGrant(wiki.config, new URL(`${CALLBACK}?${callback}`), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce })
    await setTenantDisabled(world.ctx.runtime, world.ctx.tenantId, true)
    const info = await fetch(`${world.issuer}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(info.status).toBe(401)
    expect(info.headers.get('www-authenticate')).toContain('error="invalid_token"')
    expect(((await info.json()) as any).error).toBe('invalid_token')
  })
})
