// The OpenID Provider after "end access" and against tokens presented out of place (product spec
// §21): a code issued before the user or an admin ended access starts no grant; a spent code
// replayed by another client revokes nothing; repeated parameters are refused; end_session
// signs out at once only for its own page session.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { decodeJwt } from 'jose'
import * as oidc from 'openid-client'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { revokeUserSessions } from '../../src/core/sessions/sessions'
import { authorizationRequest, CALLBACK, relyingParty, startOidcWorld, UserAgent, type OidcWorld } from '../oidc-journey'
import { loginFor } from '../helpers'
import { formOn } from '../pages'

let world: OidcWorld
let email: string
let userId: string
beforeEach(async () => {
  world = await startOidcWorld()
  const user = await world.ctx.addUser({ email: 'ada@example.com' })
  email = user.email
  userId = user.userId
})
afterEach(() => world.close())

type Party = Awaited<ReturnType<typeof relyingParty>>

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${world.issuer}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body }).then(async (r) => ({ status: r.status, json: (await r.json().catch(() => null)) as any }))

/** The token endpoint as `party` calls it (Basic for a confidential client, client_id alone for a public one). */
const token = (party: Party, form: Record<string, string>) =>
  party.clientSecret === null
    ? post('/token', new URLSearchParams({ ...form, client_id: party.client.id }).toString())
    : post('/token', new URLSearchParams(form).toString(), { authorization: `Basic ${btoa(`${party.client.id}:${party.clientSecret}`)}` })

/** A code for `party`, the browser signing in (or already signed in, or consenting) on the way. */
async function codeFor(party: Party, browser: UserAgent) {
  const request = await authorizationRequest(party.config)
  let answer = await browser.follow(request.url.href)
  if (answer.html.includes('name="password"')) answer = await browser.signIn(answer, email)
  if (answer.html.includes('/authorize/consent')) {
    const consent = formOn(answer.html, '/authorize/consent')
    answer = await browser.send(consent.action, { form: { ...consent.hidden, decision: 'allow' } })
  }
  expect(answer.location).toStartWith(CALLBACK)
  const code = new URL(answer.location!).searchParams.get('code')!
  return { code, verifier: request.verifier, redeem: (as: Party = party) => token(as, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: request.verifier }) }
}

describe('OpenID Provider: a spent code replayed', () => {
  it("by another (public) client is invalid_grant and revokes nothing; by its own client it revokes the grant", async () => {
    const wiki = await relyingParty(world)
    const stranger = await relyingParty(world, { public: true })
    const browser = new UserAgent(world.server.url)
    const issued = await codeFor(wiki, browser)
    const first = await issued.redeem()
    expect(first.status).toBe(200)
    expect(await issued.redeem(stranger)).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    world.ctx.clock.advance(61)
    expect(await issued.redeem(stranger)).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    // The user's grant lives on.
    const refreshed = await oidc.refreshTokenGrant(wiki.config, first.json.refresh_token)
    expect(refreshed.access_token).toBeString()
    // Its own client presenting it again: intercepted, so what it gave is taken back.
    expect(await issued.redeem()).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    expect(await oidc.refreshTokenGrant(wiki.config, refreshed.refresh_token!).catch((e) => e)).toMatchObject({ error: 'invalid_grant' })
  })
})

describe('OpenID Provider: a code issued before the user or an admin ended access starts no grant', () => {
  it('after logout-all', async () => {
    const wiki = await relyingParty(world)
    const issued = await codeFor(wiki, new UserAgent(world.server.url))
    const api = await loginFor(world.ctx, email)
    const ended = await world.ctx.call('POST', '/api/v1/auth/logout-all', { apiKey: null, headers: { authorization: `Bearer ${api.json.data.response.accessToken}` } })
    expect(ended.status).toBe(200)
    expect(await issued.redeem()).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
  })

  it('after `sessions revoke --user`', async () => {
    const wiki = await relyingParty(world)
    const issued = await codeFor(wiki, new UserAgent(world.server.url))
    await revokeUserSessions(world.ctx.runtime, userId)
    expect(await issued.redeem()).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
  })

  it("after an admin ends the user's grants to the client", async () => {
    const { key } = await createApiKey(world.ctx.runtime, { tenantId: world.ctx.tenantId, scope: 'admin' })
    const wiki = await relyingParty(world)
    const other = await relyingParty(world)
    const browser = new UserAgent(world.server.url)
    const issued = await codeFor(wiki, browser)
    const otherCode = await codeFor(other, browser)
    const ended = await fetch(`${world.server.url}/api/v1/admin/users/${userId}/grants/${wiki.client.id}`, { method: 'DELETE', headers: { 'x-api-key': key } })
    expect(ended.status).toBe(200)
    expect(await issued.redeem()).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    // (another client's code is none of it)
    expect((await otherCode.redeem()).status).toBe(200)
  })

  it('after the user withdraws the consent on the apps page: no grant, and the next request asks again', async () => {
    const wiki = await relyingParty(world, { firstParty: false })
    const browser = new UserAgent(world.server.url)
    await codeFor(wiki, browser)
    const issued = await codeFor(wiki, browser)
    const apps = await browser.follow(`${world.issuer}/account/apps`)
    const withdraw = formOn(apps.html, '/account/apps/withdraw')
    expect((await browser.send(withdraw.action, { form: withdraw.hidden })).status).toBe(303)
    expect(await issued.redeem()).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
    const again = await browser.follow((await authorizationRequest(wiki.config)).url.href)
    expect(again.html).toContain('<h1>Allow Wiki?</h1>')
  })
})

describe('OpenID Provider: repeated parameters (RFC 6749 §3.2)', () => {
  it('the token and revocation endpoints answer invalid_request and spend nothing', async () => {
    const wiki = await relyingParty(world)
    const basic = { authorization: `Basic ${btoa(`${wiki.client.id}:${wiki.clientSecret}`)}` }
    const issued = await codeFor(wiki, new UserAgent(world.server.url))
    const form = new URLSearchParams({ grant_type: 'authorization_code', code: issued.code, redirect_uri: CALLBACK, code_verifier: issued.verifier })
    expect(await post('/token', `${form}&code=bad`, basic)).toMatchObject({ status: 400, json: { error: 'invalid_request' } })
    expect(await post('/token', `${form}&code_verifier=${'x'.repeat(43)}`, basic)).toMatchObject({ status: 400, json: { error: 'invalid_request' } })
    const granted = await issued.redeem()
    expect(granted.status).toBe(200)
    const revoke = new URLSearchParams({ token: granted.json.refresh_token })
    expect(await post('/revoke', `${revoke}&token=other`, basic)).toMatchObject({ status: 400, json: { error: 'invalid_request' } })
    expect((await oidc.refreshTokenGrant(wiki.config, granted.json.refresh_token)).access_token).toBeString()
  })
})

describe('OpenID Provider: end_session with the ID token of another session', () => {
  it('asks before signing out; the own session’s ID token signs out at once', async () => {
    const wiki = await relyingParty(world)
    const laptop = new UserAgent(world.server.url)
    const phone = new UserAgent(world.server.url)
    const fromLaptop = await (await codeFor(wiki, laptop)).redeem()
    const fromPhone = await (await codeFor(wiki, phone)).redeem()
    expect(decodeJwt(fromLaptop.json.id_token).sid).not.toBe(decodeJwt(fromPhone.json.id_token).sid)
    const logout = (hint: string) => oidc.buildEndSessionUrl(wiki.config, { id_token_hint: hint, post_logout_redirect_uri: 'http://127.0.0.1:9/signed-out' }).href
    const asked = await laptop.send(logout(fromPhone.json.id_token))
    expect(asked.status).toBe(200)
    expect(asked.html).toContain('Sign out of Acme in this browser?')
    // Still signed in.
    expect((await laptop.send((await authorizationRequest(wiki.config, { prompt: 'none' })).url.href)).location).toContain('code=')
    const out = await laptop.send(logout(fromLaptop.json.id_token))
    expect(out.location).toBe('http://127.0.0.1:9/signed-out')
    expect((await laptop.send((await authorizationRequest(wiki.config, { prompt: 'none' })).url.href)).location).toContain('error=login_required')
  })
})
