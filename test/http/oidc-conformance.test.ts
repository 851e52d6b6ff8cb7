// The OpenID Provider where the specifications say what a refused or odd request must leave
// behind (product spec §21, issue 43): a refused refresh spends nothing (RFC 6749 §6), a client
// cannot revoke another's token (RFC 7009 §2.1), userinfo challenges a request without a token
// as RFC 6750 §3.1 says, a tenant segment that is no UTF-8 is a 4xx everywhere, every ended
// grant is found under its user in the audit log, and a consent covers only its scopes.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import * as oidc from 'openid-client'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createApp } from '../../src/server/app'
import { peerAddresses } from '../../src/server/plugins/client-ip'
import { authorizationRequest, CALLBACK, relyingParty, startOidcWorld, UserAgent, type OidcWorld } from '../oidc-journey'
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

const post = (path: string, form: Record<string, string>, party: Party) =>
  fetch(`${world.issuer}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${party.client.id}:${party.clientSecret}`)}` },
    body: new URLSearchParams(form),
  }).then(async (r) => ({ status: r.status, json: (await r.json().catch(() => null)) as any }))

/** The code flow through the pages (signing in, or consenting, where asked): the token answer. */
async function grantFor(party: Party, browser: UserAgent, extra: Record<string, string> = {}) {
  const request = await authorizationRequest(party.config, extra)
  let answer = await browser.follow(request.url.href)
  if (answer.html.includes('name="password"')) answer = await browser.signIn(answer, email)
  if (answer.html.includes('/authorize/consent')) {
    const consent = formOn(answer.html, '/authorize/consent')
    answer = await browser.send(consent.action, { form: { ...consent.hidden, decision: 'allow' } })
  }
  expect(answer.location).toStartWith(CALLBACK)
  const code = new URL(answer.location!).searchParams.get('code')!
  const redeem = () => post('/token', { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: request.verifier }, party)
  const tokens = await redeem()
  expect(tokens.status).toBe(200)
  return { ...(tokens.json as { access_token: string; refresh_token?: string; scope: string; id_token: string }), redeemAgain: redeem }
}

const refresh = (party: Party, refreshToken: string, scope?: string) => post('/token', { grant_type: 'refresh_token', refresh_token: refreshToken, ...(scope !== undefined && { scope }) }, party)
const userinfo = (accessToken: string) => fetch(`${world.issuer}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } })
const auditTypes = async (type: string) => (await world.ctx.runtime.store.audit.query({ type })).length

describe('OpenID Provider: a refresh with a scope (RFC 6749 §6)', () => {
  it('wider than the grant is invalid_scope and spends nothing: the same token works afterwards, and no theft is recorded', async () => {
    const wiki = await relyingParty(world)
    const granted = await grantFor(wiki, new UserAgent(world.server.url), { scope: 'openid offline_access' })
    expect(await refresh(wiki, granted.refresh_token!, 'openid email')).toMatchObject({ status: 400, json: { error: 'invalid_scope' } })
    // Past the grace period, so that a token spent by the refused request would be a reuse now.
    world.ctx.clock.advance(11)
    const next = await refresh(wiki, granted.refresh_token!)
    expect(next).toMatchObject({ status: 200, json: { scope: 'openid offline_access' } })
    expect(next.json.refresh_token).toBeString()
    expect(await auditTypes('refresh.reused')).toBe(0)
    expect(await auditTypes('oidc.grant_reused')).toBe(0)
    world.ctx.clock.advance(11)
    expect((await refresh(wiki, next.json.refresh_token)).status).toBe(200)
  })

  it('narrower without offline_access answers the successor (the grant holds it), whose next use works with the whole scope', async () => {
    const wiki = await relyingParty(world)
    const granted = await grantFor(wiki, new UserAgent(world.server.url))
    expect(granted.scope).toBe('openid profile email offline_access')
    const narrow = await refresh(wiki, granted.refresh_token!, 'openid email')
    expect(narrow).toMatchObject({ status: 200, json: { scope: 'openid email' } })
    expect(narrow.json.refresh_token).toBeString()
    // The access token carries the narrower scope.
    expect(await (await userinfo(narrow.json.access_token)).json()).not.toHaveProperty('name')
    world.ctx.clock.advance(11)
    const next = await refresh(wiki, narrow.json.refresh_token)
    expect(next).toMatchObject({ status: 200, json: { scope: 'openid profile email offline_access' } })
    expect(next.json.refresh_token).toBeString()
    expect(await auditTypes('refresh.reused')).toBe(0)
  })
})

describe('OpenID Provider: revoking a token issued to another client (RFC 7009 §2.1)', () => {
  it('is unauthorized_client (400) for a refresh and an access token, and both stay valid for their own client', async () => {
    const wiki = await relyingParty(world)
    const stranger = await relyingParty(world)
    const granted = await grantFor(wiki, new UserAgent(world.server.url))
    for (const token of [granted.refresh_token!, granted.access_token]) {
      expect(await post('/revoke', { token }, stranger)).toMatchObject({ status: 400, json: { error: 'unauthorized_client' } })
    }
    expect(await auditTypes('oidc.grant_revoked')).toBe(0)
    expect((await userinfo(granted.access_token)).status).toBe(200)
    const next = await refresh(wiki, granted.refresh_token!)
    expect(next.status).toBe(200)
    // A token that is no live grant's is still a 200 and nothing else (RFC 7009 §2.2), and the own client revokes.
    expect((await post('/revoke', { token: 'unknown' }, stranger)).status).toBe(200)
    expect((await post('/revoke', { token: next.json.refresh_token }, wiki)).status).toBe(200)
    expect((await post('/revoke', { token: next.json.refresh_token }, stranger)).status).toBe(200)
    expect((await userinfo(next.json.access_token)).status).toBe(401)
  })
})

describe('OpenID Provider: userinfo challenges (RFC 6750 §3.1)', () => {
  it('a request without a token with a bare Bearer challenge; a bad token with error="invalid_token"', async () => {
    for (const headers of [{}, { authorization: 'Basic ' + btoa('a:b') }] as Array<Record<string, string>>) {
      for (const method of ['GET', 'POST']) {
        const bare = await fetch(`${world.issuer}/userinfo`, { method, headers })
        expect({ status: bare.status, challenge: bare.headers.get('www-authenticate'), body: await bare.json() }).toEqual({ status: 401, challenge: 'Bearer realm="authd"', body: {} })
      }
    }
    for (const authorization of ['Bearer a.b.c', 'Bearer', 'Bearer !!!']) {
      const bad = await fetch(`${world.issuer}/userinfo`, { headers: { authorization } })
      expect(bad.status).toBe(401)
      expect(bad.headers.get('www-authenticate')).toStartWith('Bearer realm="authd", error="invalid_token"')
    }
    // openid-client reads the challenge of a good request as it did.
    const wiki = await relyingParty(world)
    const granted = await grantFor(wiki, new UserAgent(world.server.url))
    expect(await oidc.fetchUserInfo(wiki.config, granted.access_token, oidc.skipSubjectCheck)).toMatchObject({ sub: userId })
  })
})

describe('OpenID Provider: a tenant segment that is not UTF-8', () => {
  it('is a 4xx, and no error in the log, at every endpoint under /t/{tenant} (the JSON ones in their protocol form)', async () => {
    const errors: string[] = []
    const app = createApp(world.ctx.runtime, { log: (level, msg, fields) => void (level === 'error' && errors.push(`${msg} ${JSON.stringify(fields)}`)) })
    const routes = app.routes.filter((r) => r.path.startsWith('/t/:tenant') && ['GET', 'POST'].includes(r.method))
    expect(routes.length).toBeGreaterThan(40)
    const json = { '/.well-known/openid-configuration': 404, '/jwks': 404, '/token': 404, '/revoke': 404, '/userinfo': 401 } as Record<string, number>
    for (const segment of ['%ED%A0%80', '%FF', '%C0%AF']) {
      for (const route of routes) {
        const rest = route.path.slice('/t/:tenant'.length)
        const headers: Record<string, string> = route.method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost' } : {}
        const request = new Request(`http://localhost/t/${segment}${rest}`, { method: route.method, headers, body: route.method === 'POST' ? 'token=x&grant_type=refresh_token&refresh_token=x&client_id=x' : undefined })
        peerAddresses.set(request, '127.0.0.1')
        const response = await app.handle(request)
        const where = `${route.method} /t/${segment}${rest}`
        if (rest in json) {
          expect({ where, status: response.status, error: ((await response.json()) as any).error }).toEqual({ where, status: json[rest]!, error: rest === '/userinfo' ? undefined : 'invalid_request' })
        } else if (rest === '/passkeys.js') {
          // (the same script for every tenant, read from no store)
          expect(response.status).toBe(200)
        } else {
          expect({ where, status: response.status >= 400 && response.status < 500 }).toEqual({ where, status: true })
        }
      }
      // userinfo with a token: the tenant is looked for, and there is none.
      const withToken = new Request(`http://localhost/t/${segment}/userinfo`, { headers: { authorization: 'Bearer a.b.c' } })
      peerAddresses.set(withToken, '127.0.0.1')
      expect((await app.handle(withToken)).status).toBe(404)
    }
    expect(errors).toEqual([])
  })
})

describe('OpenID Provider: ended grants in the audit log', () => {
  it('every way a grant ends is found by the audit filter by user (the admin API’s, as `authd audit --user`)', async () => {
    const { key } = await createApiKey(world.ctx.runtime, { tenantId: world.ctx.tenantId, scope: 'admin' })
    const byUser = async () =>
      ((await (await fetch(`${world.server.url}/api/v1/admin/audit?userId=${userId}&limit=1000`, { headers: { 'x-api-key': key } })).json()) as any).data.map((e: { type: string }) => e.type) as string[]
    const count = async (type: string) => (await byUser()).filter((t) => t === type).length
    const browser = new UserAgent(world.server.url)
    const wiki = await relyingParty(world)

    // The client revokes its refresh token, then an access token.
    await post('/revoke', { token: (await grantFor(wiki, browser)).refresh_token! }, wiki)
    expect(await count('oidc.grant_revoked')).toBe(1)
    await post('/revoke', { token: (await grantFor(wiki, browser)).access_token }, wiki)
    expect(await count('oidc.grant_revoked')).toBe(2)
    // An admin ends the user's grants to the client.
    await grantFor(wiki, browser)
    expect((await fetch(`${world.server.url}/api/v1/admin/users/${userId}/grants/${wiki.client.id}`, { method: 'DELETE', headers: { 'x-api-key': key } })).status).toBe(200)
    expect(await count('oidc.grant_revoked')).toBe(3)
    // A refresh token used again past the grace period.
    const stolen = (await grantFor(wiki, browser)).refresh_token!
    await refresh(wiki, stolen)
    world.ctx.clock.advance(11)
    expect((await refresh(wiki, stolen)).json.error).toBe('invalid_grant')
    expect(await count('refresh.reused')).toBe(1)
    // A code redeemed a second time.
    expect((await (await grantFor(wiki, browser)).redeemAgain()).json.error).toBe('invalid_grant')
    expect(await count('oidc.code_reused')).toBe(1)
    // The user withdraws a third-party client's consent.
    const shop = await relyingParty(world, { firstParty: false })
    await grantFor(shop, browser)
    const apps = await browser.follow(`${world.issuer}/account/apps`)
    const withdraw = formOn(apps.html, '/account/apps/withdraw')
    expect((await browser.send(withdraw.action, { form: withdraw.hidden })).status).toBe(303)
    expect(await count('oidc.consent_withdrawn')).toBe(1)
    // And nothing of theirs is left without them.
    const anonymous = (await world.ctx.runtime.store.audit.query({ type: 'oidc.*' })).filter((e) => e.userId === null)
    expect(anonymous).toEqual([])
  })
})

describe('OpenID Provider: a consent covers only the scopes the user allowed', () => {
  it('prompt=none asking a third-party client more than was allowed is consent_required at the redirect URI', async () => {
    const shop = await relyingParty(world, { firstParty: false })
    const browser = new UserAgent(world.server.url)
    await grantFor(shop, browser, { scope: 'openid' })
    expect((await world.ctx.runtime.store.oidc.findConsent(userId, shop.client.id))?.scope).toBe('openid')
    // As allowed: a code without a page.
    const same = await authorizationRequest(shop.config, { scope: 'openid', prompt: 'none' })
    expect(new URL((await browser.send(same.url.href)).location!).searchParams.get('code')).toBeString()
    const more = await authorizationRequest(shop.config, { scope: 'openid email', prompt: 'none' })
    const answer = await browser.send(more.url.href)
    expect(answer.location).toStartWith(CALLBACK)
    const callback = new URL(answer.location!)
    expect({ error: callback.searchParams.get('error'), state: callback.searchParams.get('state'), code: callback.searchParams.get('code') }).toEqual({ error: 'consent_required', state: more.state, code: null })
  })
})
