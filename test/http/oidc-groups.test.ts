// Groups at the OpenID Provider (product spec §23), with openid-client as the relying party over a
// real socket: a client's --allowed-groups admits only members (anyone else sees authd's
// no-access page, never a code; prompt=none is access_denied; a refresh after the user left every
// allowed group is invalid_grant and ends the grant); the `groups` claim for the scope `groups`
// or a client with groupsClaim 'always'; and authd's own access tokens naming the user's groups.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { decodeJwt } from 'jose'
import * as oidc from 'openid-client'
import { addMembers, createGroup, removeMembers } from '../../src/core/groups/groups'
import { updateClient } from '../../src/core/oidc/clients'
import { authorizationRequest, CALLBACK, relyingParty, startOidcWorld, UserAgent, type OidcWorld } from '../oidc-journey'
import { loginFor } from '../helpers'
import { formOn } from '../pages'

let world: OidcWorld
let member: { userId: string; email: string }
let outsider: { userId: string; email: string }
let admins: string
beforeEach(async () => {
  world = await startOidcWorld()
  member = await world.ctx.addUser({ email: 'ada@example.com' })
  outsider = await world.ctx.addUser({ email: 'bob@example.com' })
  admins = (await createGroup(world.ctx.runtime, { tenantId: world.ctx.tenantId, name: 'admins' })).id
  await createGroup(world.ctx.runtime, { tenantId: world.ctx.tenantId, name: 'staff' })
  await addMembers(world.ctx.runtime, admins, [member.userId])
})
afterEach(() => world.close())

/** A client that admits members of `admins` only. */
async function adminsOnly(options: Parameters<typeof relyingParty>[1] = {}) {
  const party = await relyingParty(world, options)
  await updateClient(world.ctx.runtime, party.client.id, { allowedGroups: ['admins'] })
  return party
}

/** The browser signs in as `email` for this request; what authd answers once it stops on a page or leaves authd. */
async function signInFor(browser: UserAgent, url: URL, email: string) {
  const login = await browser.follow(url.href)
  expect(login.html).toContain('name="password"')
  return browser.signIn(login, email)
}

async function tokensFor(party: Awaited<ReturnType<typeof relyingParty>>, email: string, scope = 'openid profile email offline_access') {
  const request = await authorizationRequest(party.config, { scope })
  const answer = await signInFor(new UserAgent(world.server.url), request.url, email)
  expect(answer.location).toStartWith(CALLBACK)
  return oidc.authorizationCodeGrant(party.config, new URL(answer.location!), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce, idTokenExpected: true })
}

describe('OpenID Provider: a client with allowed groups', () => {
  it('gives a member a code', async () => {
    const party = await adminsOnly()
    const tokens = await tokensFor(party, member.email)
    expect(tokens.access_token).toBeString()
  })

  it("shows anyone else authd's no-access page (never a redirect to the client), whose sign-out comes back to the request as someone else", async () => {
    const party = await adminsOnly()
    const request = await authorizationRequest(party.config)
    const browser = new UserAgent(world.server.url)
    const denied = await signInFor(browser, request.url, outsider.email)
    expect(denied.status).toBe(200)
    expect(denied.location).toBeNull()
    expect(denied.html).toContain('You do not have access to Wiki')
    expect(denied.html).not.toContain(CALLBACK)
    // Again while signed in: the same page, still no code.
    const again = await browser.follow(request.url.href)
    expect({ status: again.status, location: again.location }).toEqual({ status: 200, location: null })
    // The page's sign-out button: signed out, the login form, and after the member signs in, the request goes on.
    const signOut = formOn(denied.html, '/logout')
    const login = await browser.follow(signOut.action, { form: signOut.hidden })
    expect(login.html).toContain('name="password"')
    const answer = await browser.signIn(login, member.email)
    expect(answer.location).toStartWith(CALLBACK)
    const callback = new URL(answer.location!)
    const tokens = await oidc.authorizationCodeGrant(party.config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce })
    expect(tokens.claims()!.sub).toBe(member.userId)
  })

  it('answers prompt=none for anyone else with access_denied (with state and iss)', async () => {
    const party = await adminsOnly()
    const browser = new UserAgent(world.server.url)
    const first = await authorizationRequest(party.config)
    await signInFor(browser, first.url, outsider.email)
    const silent = await authorizationRequest(party.config, { prompt: 'none' })
    const answer = await browser.send(silent.url.href)
    expect(answer.location).toStartWith(CALLBACK)
    const callback = new URL(answer.location!)
    expect(callback.searchParams.get('error')).toBe('access_denied')
    expect(callback.searchParams.get('state')).toBe(silent.state)
    expect(callback.searchParams.get('iss')).toBe(world.issuer)
    expect(callback.searchParams.has('code')).toBe(false)
    // Each refusal is in the audit log, with the user and the client (the page's and this one).
    const denied = await world.ctx.runtime.store.audit.query({ tenantId: world.ctx.tenantId, type: 'oidc.access_denied', limit: 10 })
    expect(denied.map((e) => [e.userId, e.detail])).toEqual([
      [outsider.userId, { clientId: party.client.id }],
      [outsider.userId, { clientId: party.client.id }],
    ])
  })

  it("keeps no consent of anyone else who posts the consent form's allow by hand (added to the group later, they are asked)", async () => {
    const party = await adminsOnly({ firstParty: false })
    const request = await authorizationRequest(party.config)
    const browser = new UserAgent(world.server.url)
    const denied = await signInFor(browser, request.url, outsider.email)
    const signOut = formOn(denied.html, '/logout')
    const resume = new URL(signOut.hidden.return_to!, world.server.url)
    const posted = await browser.send(`${new URL(world.issuer).pathname}/authorize/consent`, { form: { _form: signOut.hidden._form!, return_to: resume.pathname + resume.search, decision: 'allow' } })
    expect(posted.html).toContain('You do not have access to Wiki')
    await addMembers(world.ctx.runtime, admins, [outsider.userId])
    const silent = await authorizationRequest(party.config, { prompt: 'none' })
    expect(new URL((await browser.send(silent.url.href)).location!).searchParams.get('error')).toBe('consent_required')
  })

  it('refuses the code of a user removed from every allowed group between the code and its exchange (invalid_grant: no tokens)', async () => {
    const party = await adminsOnly()
    const request = await authorizationRequest(party.config)
    const answer = await signInFor(new UserAgent(world.server.url), request.url, member.email)
    expect(answer.location).toStartWith(CALLBACK)
    await removeMembers(world.ctx.runtime, admins, [member.userId])
    const exchanged = await oidc.authorizationCodeGrant(party.config, new URL(answer.location!), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce }).catch((e) => e)
    expect(exchanged).toMatchObject({ error: 'invalid_grant' })
  })

  it('refuses the refresh of a user removed from every allowed group (invalid_grant), and the grant stays ended', async () => {
    const party = await adminsOnly()
    const tokens = await tokensFor(party, member.email)
    const refreshed = await oidc.refreshTokenGrant(party.config, tokens.refresh_token!)
    await removeMembers(world.ctx.runtime, admins, [member.userId])
    expect(await oidc.refreshTokenGrant(party.config, refreshed.refresh_token!).catch((e) => e)).toMatchObject({ error: 'invalid_grant' })
    // Back in the group: that grant is still over (a new sign-in starts another).
    await addMembers(world.ctx.runtime, admins, [member.userId])
    expect(await oidc.refreshTokenGrant(party.config, refreshed.refresh_token!).catch((e) => e)).toMatchObject({ error: 'invalid_grant' })
    expect(await oidc.fetchUserInfo(party.config, refreshed.access_token, member.userId).catch((e) => e)).toBeInstanceOf(Error)
  })

  it("refuses a removed member's access token at userinfo at once, before its 15 minutes are over", async () => {
    const party = await adminsOnly()
    const tokens = await tokensFor(party, member.email)
    expect(await oidc.fetchUserInfo(party.config, tokens.access_token, member.userId)).toMatchObject({ sub: member.userId })
    await removeMembers(world.ctx.runtime, admins, [member.userId])
    const refused = await fetch(`${world.issuer}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  it('admits anyone again once its allowed groups are cleared', async () => {
    const party = await adminsOnly()
    await updateClient(world.ctx.runtime, party.client.id, { allowedGroups: null })
    expect((await tokensFor(party, outsider.email)).access_token).toBeString()
  })
})

describe('OpenID Provider: the groups claim', () => {
  it('is in the ID token and userinfo for the scope groups (sorted names, as they are at each token), and not without it', async () => {
    const party = await relyingParty(world)
    expect(party.config.serverMetadata().scopes_supported).toContain('groups')
    expect(party.config.serverMetadata().claims_supported).toContain('groups')
    const staff = (await createGroup(world.ctx.runtime, { tenantId: world.ctx.tenantId, name: 'a-team' })).id
    await addMembers(world.ctx.runtime, staff, [member.userId])

    const withScope = await tokensFor(party, member.email, 'openid groups offline_access')
    expect(withScope.claims()!.groups).toEqual(['a-team', 'admins'])
    expect((await oidc.fetchUserInfo(party.config, withScope.access_token, member.userId)).groups).toEqual(['a-team', 'admins'])
    // A change of membership shows in the next token.
    await removeMembers(world.ctx.runtime, staff, [member.userId])
    const refreshed = await oidc.refreshTokenGrant(party.config, withScope.refresh_token!)
    expect(refreshed.claims()!.groups).toEqual(['admins'])

    const without = await tokensFor(party, member.email, 'openid profile')
    expect(without.claims()!.groups).toBeUndefined()
    expect((await oidc.fetchUserInfo(party.config, without.access_token, member.userId)).groups).toBeUndefined()
    // A user in no group gets an empty list for the scope: the client reads "none", not "not asked".
    expect((await tokensFor(party, outsider.email, 'openid groups')).claims()!.groups).toEqual([])
  })

  it("is always there for a client with groupsClaim 'always'", async () => {
    const party = await relyingParty(world)
    await updateClient(world.ctx.runtime, party.client.id, { groupsClaim: 'always' })
    const tokens = await tokensFor(party, member.email, 'openid')
    expect(tokens.claims()!.groups).toEqual(['admins'])
    expect((await oidc.fetchUserInfo(party.config, tokens.access_token, member.userId)).groups).toEqual(['admins'])
  })

  it('asks for consent to the groups scope in words', async () => {
    const party = await relyingParty(world, { firstParty: false })
    const request = await authorizationRequest(party.config, { scope: 'openid groups' })
    const consent = await signInFor(new UserAgent(world.server.url), request.url, member.email)
    expect(consent.html).toContain('see the groups you are in')
  })
})

describe("authd's own access tokens", () => {
  it('name the user’s groups (sorted) when in any, and a change shows in the next token (refresh or login)', async () => {
    const first = await loginFor(world.ctx, outsider.email)
    expect(decodeJwt(first.json.data.response.accessToken).groups).toBeUndefined()
    const staff = (await createGroup(world.ctx.runtime, { tenantId: world.ctx.tenantId, name: 'zeta' })).id
    await addMembers(world.ctx.runtime, staff, [outsider.userId])
    await addMembers(world.ctx.runtime, admins, [outsider.userId])
    const refreshed = await world.ctx.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${first.refreshCookie}` })
    expect(refreshed.status).toBe(201)
    expect(decodeJwt(refreshed.json.data.response.accessToken).groups).toEqual(['admins', 'zeta'])
    await removeMembers(world.ctx.runtime, staff, [outsider.userId])
    const again = await loginFor(world.ctx, outsider.email)
    expect(decodeJwt(again.json.data.response.accessToken).groups).toEqual(['admins'])
    // (GET /me takes the token as before)
    expect((await world.ctx.call('GET', '/api/v1/auth/me', { headers: { authorization: `Bearer ${again.json.data.response.accessToken}` } })).status).toBe(200)
  })
})
