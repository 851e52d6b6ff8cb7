// The OpenID Provider (product spec §21) with openid-client as the relying party, over a real
// socket, signing in through authd's pages: discovery, code + PKCE, the ID token checked
// against the JWKS, userinfo, refresh rotation and reuse, revocation, RP-initiated logout,
// prompt=none; and the requests it must refuse.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { listUsers, updateUser } from '../../src/core/accounts/users'
import { atHash } from '../../src/core/oidc/tokens'
import { authorizationRequest, CALLBACK, relyingParty, startOidcWorld, UserAgent, type OidcWorld } from '../oidc-journey'
import { formOn } from '../pages'

let world: OidcWorld
let email: string
beforeEach(async () => {
  world = await startOidcWorld()
  email = (await world.ctx.addUser({ email: 'ada@example.com' })).email
})
afterEach(() => world.close())

/** Signs `email` in through the pages for this request; the callback URL authd sends the browser to. */
async function signInAndGetCallback(browser: UserAgent, url: URL) {
  const login = await browser.follow(url.href)
  expect(login.status).toBe(200)
  expect(login.html).toContain('name="password"')
  const answer = await browser.signIn(login, email)
  expect(answer.location).toStartWith(CALLBACK)
  return new URL(answer.location!)
}

async function codeFlow(config: oidc.Configuration, browser = new UserAgent(world.server.url)) {
  const request = await authorizationRequest(config)
  const callback = await signInAndGetCallback(browser, request.url)
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce, idTokenExpected: true })
  return { request, callback, tokens, browser }
}

describe('OpenID Provider: the code flow with openid-client', () => {
  it('discovers the issuer, signs in through the pages, and issues an ID token that verifies against the JWKS', async () => {
    const { config } = await relyingParty(world)
    const metadata = config.serverMetadata()
    expect(metadata.issuer).toBe(world.issuer)
    expect(metadata.code_challenge_methods_supported).toEqual(['S256'])
    expect(metadata.response_types_supported).toEqual(['code'])
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true)

    const { request, callback, tokens } = await codeFlow(config)
    // RFC 9207: the answer names its issuer; state comes back as sent.
    expect(callback.searchParams.get('iss')).toBe(world.issuer)
    expect(callback.searchParams.get('state')).toBe(request.state)

    // (a client registered without an algorithm: RS256, OpenID Connect Registration's default)
    const { payload, protectedHeader } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(metadata.jwks_uri!)), { issuer: world.issuer, audience: config.clientMetadata().client_id, algorithms: ['RS256'] })
    expect(protectedHeader.alg).toBe('RS256')
    expect(payload.nonce).toBe(request.nonce)
    expect(payload.at_hash).toBe(atHash(tokens.access_token))
    expect(typeof payload.auth_time).toBe('number')
    expect(Math.abs((payload.auth_time as number) - Date.now() / 1000)).toBeLessThan(120)
    expect(payload.amr).toEqual(['pwd'])
    expect(payload).toMatchObject({ email, email_verified: false, name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace' })
    expect(tokens.claims()!.sub).toBe(payload.sub!)

    const info = await oidc.fetchUserInfo(config, tokens.access_token, payload.sub!)
    expect(info).toMatchObject({ sub: payload.sub, email, name: 'Ada Lovelace' })
    // The grant's tokens are no key to authd's own API.
    const me = await fetch(`${world.server.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(me.status).toBe(401)
  })

  it('a public client with client_secret_post and one with none both work; a wrong secret is invalid_client', async () => {
    const confidential = await relyingParty(world, { auth: 'post' })
    expect((await codeFlow(confidential.config)).tokens.access_token).toBeString()
    const pub = await relyingParty(world, { public: true })
    expect((await codeFlow(pub.config)).tokens.access_token).toBeString()

    const wrong = await oidc.discovery(new URL(world.issuer), confidential.client.id, undefined, oidc.ClientSecretBasic('authd_cs_wrong'), { execute: [oidc.allowInsecureRequests] })
    const request = await authorizationRequest(wrong)
    const callback = await signInAndGetCallback(new UserAgent(world.server.url), request.url)
    const refused = await oidc.authorizationCodeGrant(wrong, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce }).catch((e) => e)
    // (a 401 with WWW-Authenticate: Basic, as RFC 6749 §5.2 asks for a client that used Basic)
    expect(refused).toBeInstanceOf(oidc.WWWAuthenticateChallengeError)
    expect(refused.status).toBe(401)
  })

  it('refresh rotates the token; a spent one within the grace period gets the same successor, after it the grant is revoked', async () => {
    const { config } = await relyingParty(world)
    const { tokens } = await codeFlow(config)
    const first = tokens.refresh_token!
    const second = await oidc.refreshTokenGrant(config, first)
    expect(second.refresh_token).not.toBe(first)
    // Each rotation is an audit event (committed with it); the grace period's repeat is none.
    const refreshed = () => world.ctx.runtime.store.audit.query({ type: 'oidc.grant_refreshed' }).then((events) => events.length)
    expect(await refreshed()).toBe(1)
    expect(second.id_token).toBeString()
    // Two refreshes racing: the second gets the same successor.
    expect((await oidc.refreshTokenGrant(config, first)).refresh_token).toBe(second.refresh_token!)
    expect(await refreshed()).toBe(1)
    world.ctx.clock.advance(11)
    expect(await oidc.refreshTokenGrant(config, first).catch((e) => e)).toMatchObject({ error: 'invalid_grant' })
    // The whole grant ended: its newest token and its access token too.
    expect(await oidc.refreshTokenGrant(config, second.refresh_token!).catch((e) => e)).toMatchObject({ error: 'invalid_grant' })
    expect(await oidc.fetchUserInfo(config, second.access_token, oidc.skipSubjectCheck).catch((e) => e.status ?? e.cause?.status)).toBe(401)
  })

  it('revocation ends the grant; end_session with an id_token_hint ends the page session and returns to the registered URI', async () => {
    const { config } = await relyingParty(world)
    const { tokens, browser } = await codeFlow(config)
    await oidc.tokenRevocation(config, tokens.refresh_token!)
    expect(await oidc.refreshTokenGrant(config, tokens.refresh_token!).catch((e) => e)).toMatchObject({ error: 'invalid_grant' })

    const logout = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'http://127.0.0.1:9/signed-out', state: 'bye' })
    const answer = await browser.send(logout.href)
    expect(answer.location).toBe('http://127.0.0.1:9/signed-out?state=bye')
    // Signed out: prompt=none now says so.
    const again = await authorizationRequest(config, { prompt: 'none' })
    const none = await browser.send(again.url.href)
    const callback = new URL(none.location!)
    expect(callback.searchParams.get('error')).toBe('login_required')
    expect(callback.searchParams.get('state')).toBe(again.state)
    // A post-logout URI the client did not register is no redirect.
    expect((await browser.send(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://evil.example/' }).href)).status).toBe(400)
  })

  it('the admin API lists a user’s grants (not among the sessions) and ends them', async () => {
    const { key } = await createApiKey(world.ctx.runtime, { tenantId: world.ctx.tenantId, scope: 'admin' })
    const { client, config } = await relyingParty(world)
    const { tokens } = await codeFlow(config)
    const userId = tokens.claims()!.sub
    const admin = (method: string, path: string) => fetch(`${world.server.url}/api/v1/admin/users/${userId}${path}`, { method, headers: { 'x-api-key': key } }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }))
    const grants = (await admin('GET', '/grants')).json.data
    expect(grants).toEqual([expect.objectContaining({ clientId: client.id, clientName: 'Wiki', scope: 'openid profile email offline_access' })])
    // The page session is a session; the grant is not.
    expect((await admin('GET', '/sessions')).json.data).toHaveLength(1)
    expect((await admin('DELETE', `/grants/${client.id}`)).json.data).toEqual({ userId, clientId: client.id, ended: 1 })
    expect(await oidc.refreshTokenGrant(config, tokens.refresh_token!).catch((e) => e)).toMatchObject({ error: 'invalid_grant' })
    expect((await admin('GET', '/grants')).json.data).toEqual([])
  })

  it('prompt=none with a session issues a code without a page', async () => {
    const { config } = await relyingParty(world)
    const { browser } = await codeFlow(config)
    const request = await authorizationRequest(config, { prompt: 'none' })
    const answer = await browser.send(request.url.href)
    const tokens = await oidc.authorizationCodeGrant(config, new URL(answer.location!), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce })
    expect(tokens.access_token).toBeString()
  })
})

describe('OpenID Provider: what it refuses', () => {
  const token = (clientId: string, secret: string, form: Record<string, string>) =>
    fetch(`${world.issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${clientId}:${secret}`)}` }, body: new URLSearchParams(form) }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }))

  it('a code used twice revokes what the first use gave; late, by another client, with a wrong or missing verifier it is invalid_grant', async () => {
    const { client, clientSecret, config } = await relyingParty(world)
    const other = await relyingParty(world)
    const browser = new UserAgent(world.server.url)
    const fresh = async () => {
      const request = await authorizationRequest(config)
      const answer = await browser.follow(request.url.href)
      const callback = answer.location ? new URL(answer.location) : await signInAndGetCallback(browser, request.url)
      return { code: callback.searchParams.get('code')!, verifier: request.verifier }
    }
    const exchange = (code: string, verifier: string | null, as = { id: client.id, secret: clientSecret! }, redirect = CALLBACK) =>
      token(as.id, as.secret, { grant_type: 'authorization_code', code, redirect_uri: redirect, ...(verifier !== null && { code_verifier: verifier }) })

    const once = await fresh()
    const first = await exchange(once.code, once.verifier)
    expect(first.status).toBe(200)
    expect(await exchange(once.code, once.verifier)).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    expect(await oidc.fetchUserInfo(config, first.json.access_token, oidc.skipSubjectCheck).catch((e) => e.status ?? e.cause?.status)).toBe(401)
    expect(await oidc.refreshTokenGrant(config, first.json.refresh_token).catch((e) => e)).toMatchObject({ error: 'invalid_grant' })

    const wrongVerifier = await fresh()
    expect(await exchange(wrongVerifier.code, 'x'.repeat(43))).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    expect(await exchange(wrongVerifier.code, null)).toMatchObject({ status: 400, json: { error: 'invalid_request' } })
    // (refused attempts do not spend it)
    expect((await exchange(wrongVerifier.code, wrongVerifier.verifier)).status).toBe(200)

    const otherClient = await fresh()
    expect(await exchange(otherClient.code, otherClient.verifier, { id: other.client.id, secret: other.clientSecret! })).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    expect(await exchange(otherClient.code, otherClient.verifier, { id: client.id, secret: clientSecret! }, `${CALLBACK}x`)).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })

    const late = await fresh()
    world.ctx.clock.advance(61)
    expect(await exchange(late.code, late.verifier)).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    expect(await exchange(late.code, late.verifier, { id: client.id, secret: 'authd_cs_wrong' })).toMatchObject({ status: 401, json: { error: 'invalid_client' } })
  })

  it('refuses at the authorize endpoint: a redirect URI off by one character (a page, no redirect), plain PKCE, no PKCE from a public client, the implicit flow (redirected errors)', async () => {
    const { client, config } = await relyingParty(world)
    const browser = new UserAgent(world.server.url)
    const ask = async (change: (params: URLSearchParams) => void) => {
      const { url } = await authorizationRequest(config)
      change(url.searchParams)
      return browser.send(url.href)
    }
    const offByOne = await ask((p) => p.set('redirect_uri', `${CALLBACK}/`))
    expect(offByOne.status).toBe(400)
    expect(offByOne.location).toBeNull()
    expect(offByOne.html).toContain('not known to Acme')

    const errorOf = (answer: { location: string | null }) => Object.fromEntries(new URL(answer.location!).searchParams)
    expect(errorOf(await ask((p) => p.set('code_challenge_method', 'plain')))).toMatchObject({ error: 'invalid_request', iss: world.issuer })
    // (no PKCE: refused of a public client; a confidential one may go without, see oidc-pkce-issuer.test.ts)
    const { config: spa } = await relyingParty(world, { public: true })
    const { url: noPkce } = await authorizationRequest(spa)
    noPkce.searchParams.delete('code_challenge')
    noPkce.searchParams.delete('code_challenge_method')
    expect(errorOf(await browser.send(noPkce.href))).toMatchObject({ error: 'invalid_request' })
    expect(errorOf(await ask((p) => p.set('response_type', 'id_token token')))).toMatchObject({ error: 'unsupported_response_type' })
    expect(errorOf(await ask((p) => p.set('response_type', 'token')))).toMatchObject({ error: 'unsupported_response_type' })
    expect(errorOf(await ask((p) => p.set('scope', 'profile')))).toMatchObject({ error: 'invalid_scope' })
    expect((await ask((p) => p.set('client_id', `${client.id}x`))).status).toBe(400)
  })

  it("a tenant's client is unknown at another tenant's issuer", async () => {
    const beta = await createTenant(world.ctx.runtime, { name: 'Beta' })
    const { client, clientSecret } = await relyingParty(world, { tenantId: beta.id, issuer: `${world.server.url}/t/${beta.id}` })
    const config = await oidc.discovery(new URL(world.issuer), client.id, undefined, oidc.ClientSecretBasic(clientSecret!), { execute: [oidc.allowInsecureRequests] })
    const { url } = await authorizationRequest(config)
    const answer = await new UserAgent(world.server.url).send(url.href)
    expect(answer.status).toBe(400)
    expect(answer.location).toBeNull()
    expect(await token(client.id, clientSecret!, { grant_type: 'authorization_code', code: 'x', redirect_uri: CALLBACK, code_verifier: 'x'.repeat(43) })).toMatchObject({ status: 401, json: { error: 'invalid_client' } })
  })

  it('answers bad token requests with RFC 6749 errors, never a 500', async () => {
    const { client, clientSecret } = await relyingParty(world)
    expect(await token(client.id, clientSecret!, { grant_type: 'password', username: 'a', password: 'b' })).toMatchObject({ status: 400, json: { error: 'unsupported_grant_type' } })
    expect(await token(client.id, clientSecret!, {})).toMatchObject({ status: 400, json: { error: 'invalid_request' } })
    expect(await token(client.id, clientSecret!, { grant_type: 'refresh_token', refresh_token: 'nope' })).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    const json = await fetch(`${world.issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })
    expect(json.status).toBe(400)
    expect(((await json.json()) as any).error).toBe('invalid_request')
    const userinfo = await fetch(`${world.issuer}/userinfo`, { headers: { authorization: 'Bearer a.b.c' } })
    expect(userinfo.status).toBe(401)
    expect(userinfo.headers.get('www-authenticate')).toContain('invalid_token')
    expect((await fetch(`${world.server.url}/t/nope/.well-known/openid-configuration`)).status).toBe(404)
  })
})

describe('OpenID Provider: prompt, max_age, login_hint, consent, and what the grant is not', () => {
  const consentOf = (page: { html: string }) => formOn(page.html, '/authorize/consent')

  it('prompt=login and max_age=0 show the login form to a signed-in browser, and auth_time moves on', async () => {
    const { config } = await relyingParty(world)
    const { tokens, browser } = await codeFlow(config)
    const firstAuth = tokens.claims()!.auth_time!
    for (const extra of [{ prompt: 'login' }, { max_age: '0' }] as Array<Record<string, string>>) {
      world.ctx.clock.advance(5)
      const request = await authorizationRequest(config, extra)
      const callback = await signInAndGetCallback(browser, request.url)
      const again = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce, maxAge: extra.max_age === undefined ? undefined : 0 })
      expect(again.claims()!.auth_time!).toBeGreaterThan(firstAuth)
    }
  })

  it('login_hint fills the e-mail field of the login page', async () => {
    const { config } = await relyingParty(world)
    const { url } = await authorizationRequest(config, { login_hint: 'ada@example.com' })
    const login = await new UserAgent(world.server.url).follow(url.href)
    expect(login.html).toContain('value="ada@example.com"')
  })

  it('a third-party client asks consent once; prompt=consent asks again; prompt=none without consent is consent_required; deny is access_denied', async () => {
    const { config } = await relyingParty(world, { firstParty: false })
    const browser = new UserAgent(world.server.url)
    const none = await authorizationRequest(config)
    const consent = await browser.signIn(await browser.follow(none.url.href), email)
    expect(consent.status).toBe(200)
    expect(consent.html).toContain('<h1>Allow Wiki?</h1>')
    const allowed = await browser.send(consentOf(consent).action, { form: { ...consentOf(consent).hidden, decision: 'allow' } })
    expect(new URL(allowed.location!).searchParams.get('code')).toBeString()
    // Remembered: the next request needs no page.
    const next = await authorizationRequest(config)
    expect((await browser.send(next.url.href)).location).toStartWith(CALLBACK)
    const asked = await browser.follow((await authorizationRequest(config, { prompt: 'consent' })).url.href)
    expect(asked.html).toContain('<h1>Allow Wiki?</h1>')
    const denied = await browser.send(consentOf(asked).action, { form: { ...consentOf(asked).hidden, decision: 'deny' } })
    expect(new URL(denied.location!).searchParams.get('error')).toBe('access_denied')
    // Another user of the same browser's tenant has not consented.
    const wider = await authorizationRequest(config, { scope: 'openid', prompt: 'none' })
    expect((await browser.send(wider.url.href)).location).toStartWith(CALLBACK)
    const { config: other } = await relyingParty(world, { firstParty: false })
    const silent = await authorizationRequest(other, { prompt: 'none' })
    expect(new URL((await browser.send(silent.url.href)).location!).searchParams.get('error')).toBe('consent_required')
  })

  it("a grant's refresh token opens neither authd's own API nor the pages", async () => {
    const { config } = await relyingParty(world)
    const { tokens } = await codeFlow(config)
    const refresh = await fetch(`${world.server.url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${tokens.refresh_token}` } })
    expect(refresh.status).toBe(401)
    const account = await fetch(`${world.issuer}/account`, { headers: { cookie: `authd_session=${tokens.refresh_token}` }, redirect: 'manual' })
    expect(account.headers.get('location')).toEndWith('/login')
    // (and it still works where it belongs)
    expect((await oidc.refreshTokenGrant(config, tokens.refresh_token!)).access_token).toBeString()
  })

  it('end_session without an id_token_hint asks before signing out, and audit events record the grant', async () => {
    const { config } = await relyingParty(world)
    const { browser, tokens } = await codeFlow(config)
    const logout = oidc.buildEndSessionUrl(config, { post_logout_redirect_uri: 'http://127.0.0.1:9/signed-out', client_id: config.clientMetadata().client_id })
    const asked = await browser.send(logout.href)
    expect(asked.html).toContain('Sign out of Acme in this browser?')
    const form = formOn(asked.html, '/end_session/confirm')
    const out = await browser.send(form.action, { form: form.hidden })
    // (no id_token_hint: the signed-out page links to the registered URI; only the user's click goes there)
    expect({ status: out.status, location: out.location }).toEqual({ status: 200, location: null })
    expect(out.html).toContain('<a href="http://127.0.0.1:9/signed-out">Return to Wiki</a>')
    expect((await browser.send((await authorizationRequest(config, { prompt: 'none' })).url.href)).location).toContain('error=login_required')
    const types = (await world.ctx.runtime.store.audit.query({ userId: tokens.claims()!.sub })).map((e) => e.type)
    expect(types).toEqual(expect.arrayContaining(['oidc.code_issued', 'oidc.grant_started', 'logout']))
  })

  it('end_session without an id_token_hint never sends the browser to the registered URI by itself (no redirector)', async () => {
    const { config } = await relyingParty(world)
    // What anybody can put in a mail: no sign-in, no hint, a tenant admin's registered URI.
    const link = `${world.issuer}/end_session?client_id=${config.clientMetadata().client_id}&post_logout_redirect_uri=${encodeURIComponent('http://127.0.0.1:9/signed-out')}&state=bye`
    const answer = await fetch(link, { redirect: 'manual' })
    expect({ status: answer.status, location: answer.headers.get('location') }).toEqual({ status: 200, location: null })
    const page = await answer.text()
    expect(page).toContain('You are signed out.')
    expect(page).toContain('<a href="http://127.0.0.1:9/signed-out?state=bye">Return to Wiki</a>')
    // The client's own ID token as the hint: it asked, so the browser goes back at once.
    const { tokens } = await codeFlow(config)
    const hinted = await fetch(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'http://127.0.0.1:9/signed-out', state: 'bye' }), { redirect: 'manual' })
    expect({ status: hinted.status, location: hinted.headers.get('location') }).toEqual({ status: 303, location: 'http://127.0.0.1:9/signed-out?state=bye' })
  })

  it('lets a single-page application call the JSON endpoints from its own origin (CORS, no credentials), and no page', async () => {
    const { client, config } = await relyingParty(world, { public: true })
    const origin = { origin: 'https://spa.example' }
    const preflight = await fetch(`${world.issuer}/token`, { method: 'OPTIONS', headers: { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } })
    expect({ status: preflight.status, origin: preflight.headers.get('access-control-allow-origin'), methods: preflight.headers.get('access-control-allow-methods') }).toEqual({ status: 204, origin: '*', methods: 'GET, POST, OPTIONS' })
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull()
    const refused = await fetch(`${world.issuer}/token`, { method: 'POST', headers: { ...origin, 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=authorization_code&client_id=${client.id}&code=x` })
    expect({ status: refused.status, origin: refused.headers.get('access-control-allow-origin') }).toEqual({ status: 400, origin: '*' })
    const { tokens } = await codeFlow(config)
    const info = await fetch(`${world.issuer}/userinfo`, { headers: { ...origin, authorization: `Bearer ${tokens.access_token}` } })
    expect({ status: info.status, origin: info.headers.get('access-control-allow-origin') }).toEqual({ status: 200, origin: '*' })
    expect((await fetch(`${world.issuer}/authorize`, { headers: origin, redirect: 'manual' })).headers.get('access-control-allow-origin')).toBeNull()
    expect((await fetch(`${world.issuer}/login`, { headers: origin })).headers.get('access-control-allow-origin')).toBeNull()
  })

  it('never answers a malformed request with a 500', async () => {
    const { client, clientSecret, config } = await relyingParty(world)
    const { url } = await authorizationRequest(config)
    const browser = new UserAgent(world.server.url)
    const odd = [
      `${url.href}&state=again`,
      url.href.replace('response_type=code', 'response_type='),
      `${url.href}&max_age=soon`,
      `${url.href}&prompt=none%20login`,
      `${url.href}&prompt=select_account`,
      `${url.href}&request=eyJ`,
      `${url.href}&response_mode=fragment`,
      `${world.issuer}/authorize`,
      `${world.issuer}/authorize?client_id=${'x'.repeat(5000)}`,
      `${world.issuer}/end_session?id_token_hint=not.a.jwt`,
      `${world.issuer}/end_session?client_id=nope`,
      `${world.issuer}/end_session?post_logout_redirect_uri=https://evil.example/`,
    ]
    for (const target of odd) expect((await browser.send(target)).status).toBeLessThan(500)
    const posted = await fetch(`${world.issuer}/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_id: client.id, scope: 5, redirect_uri: CALLBACK, response_type: 'code' }), redirect: 'manual' })
    // (the pages take forms only: a JSON body is the 400 page, never sent on to the client)
    expect({ status: posted.status, location: posted.headers.get('location') }).toEqual({ status: 400, location: null })
    for (const headers of [{ authorization: 'Basic !!!' }, { authorization: 'Basic ' + btoa('no-colon') }, { authorization: 'Bearer x' }, { authorization: 'Basic ' + btoa(`${client.id}:%E0%A4%A`) }]) {
      const answer = await fetch(`${world.issuer}/token`, { method: 'POST', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code' })
      expect({ status: answer.status, error: ((await answer.json()) as any).error }).toEqual({ status: 401, error: 'invalid_client' })
    }
    const both = await fetch(`${world.issuer}/token`, { method: 'POST', headers: { authorization: `Basic ${btoa(`${client.id}:${clientSecret}`)}`, 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=authorization_code&client_secret=${clientSecret}` })
    expect({ status: both.status, error: ((await both.json()) as any).error }).toEqual({ status: 400, error: 'invalid_request' })
    for (const body of ['token=', 'token=' + 'x'.repeat(9000), 'token=a.b.c']) {
      const revoke = await fetch(`${world.issuer}/revoke`, { method: 'POST', headers: { authorization: `Basic ${btoa(`${client.id}:${clientSecret}`)}`, 'content-type': 'application/x-www-form-urlencoded' }, body })
      expect(revoke.status).toBeLessThan(500)
    }
  })
})

describe('OpenID Provider: email_verified says whether the address is proven', () => {
  it('false for an address nobody proved, true once an admin vouches, false again after the address changes', async () => {
    const { config } = await relyingParty(world)
    const claimsNow = async () => {
      const { tokens } = await codeFlow(config)
      const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub)
      return { idToken: tokens.claims()!.email_verified, userinfo: info.email_verified, email: info.email }
    }
    expect(await claimsNow()).toEqual({ idToken: false, userinfo: false, email })
    const [user] = (await listUsers(world.ctx.runtime, world.ctx.tenantId, { email })).items
    await updateUser(world.ctx.runtime, user!.userId, { emailVerified: true })
    expect(await claimsNow()).toEqual({ idToken: true, userinfo: true, email })
    await updateUser(world.ctx.runtime, user!.userId, { email: 'ada@example.org' })
    email = 'ada@example.org'
    expect(await claimsNow()).toEqual({ idToken: false, userinfo: false, email })
  })
})
