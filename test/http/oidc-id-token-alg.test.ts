// ID tokens signed as each client asks (id_token_signed_response_alg: RS256 unless it asks for
// ES256, as OpenID Connect Registration §2 says), with an RSA key beside the ES256 one in the
// issuer's JWKS and discovery (Discovery §3: RS256 MUST be offered), through `keys rotate` and
// `keys revoke`; openid-client as the relying party, with its defaults and without.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose'
import * as oidc from 'openid-client'
import { updateClient } from '../../src/core/oidc/clients'
import { atHash } from '../../src/core/oidc/tokens'
import { revokeSigningKey, rotateKeys, rotateSigningKey } from '../../src/core/sessions/signing-keys'
import { silentLogger } from '../../src/log'
import { startServer } from '../../src/server/serve'
import { createTestContext } from '../helpers'
import { authorizationRequest, relyingParty, startOidcWorld, UserAgent, type OidcWorld } from '../oidc-journey'

let world: OidcWorld
let email: string
beforeEach(async () => {
  world = await startOidcWorld()
  email = (await world.ctx.addUser({ email: 'ada@example.com' })).email
})
afterEach(() => world.close())

/** The code flow through the pages (signing in unless the browser already is). */
async function codeFlow(config: oidc.Configuration, browser = new UserAgent(world.server.url)) {
  const request = await authorizationRequest(config)
  const page = await browser.follow(request.url.href)
  const answer = page.location ? page : await browser.signIn(page, email)
  const tokens = await oidc.authorizationCodeGrant(config, new URL(answer.location!), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce, idTokenExpected: true })
  return { tokens, browser }
}

const issuerJwks = async () => (await (await fetch(`${world.issuer}/jwks`)).json()) as { keys: JWK[] }
const verifyIdToken = async (idToken: string, alg: string) => jwtVerify(idToken, createLocalJWKSet(await issuerJwks()), { issuer: world.issuer, algorithms: [alg] })

/** openid-client for a relying party that does not read id_token_signing_alg_values_supported: it assumes RS256. */
function relyingPartyIgnoringTheList(config: oidc.Configuration, clientSecret: string) {
  const { supportsPKCE: _, ...metadata } = config.serverMetadata()
  const blind = new oidc.Configuration({ ...metadata, id_token_signing_alg_values_supported: undefined }, config.clientMetadata().client_id, undefined, oidc.ClientSecretBasic(clientSecret))
  oidc.allowInsecureRequests(blind)
  return blind
}

describe('OpenID Provider: ID-token signing algorithms', () => {
  it('discovery offers RS256 and ES256; the issuer’s JWKS has a public key of each, with alg and use: sig; the API’s JWKS only the access-token key', async () => {
    const discovery = (await (await fetch(`${world.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>
    expect(discovery.id_token_signing_alg_values_supported).toEqual(['RS256', 'ES256'])
    const { keys } = await issuerJwks()
    expect(keys.map((k) => [k.kty, k.alg, k.use]).sort()).toEqual([['EC', 'ES256', 'sig'], ['RSA', 'RS256', 'sig']])
    const rsa = keys.find((k) => k.kty === 'RSA')!
    expect(Buffer.from(rsa.n!, 'base64url').length * 8).toBe(2048)
    // Public parts only.
    for (const key of keys) for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(secret)
    const api = (await (await fetch(`${world.server.url}/api/v1/auth/.well-known/jwks.json`)).json()) as { keys: JWK[] }
    expect(api.keys.map((k) => k.alg)).toEqual(['ES256'])
  })

  it('a client registered without an algorithm gets RS256 ID tokens: openid-client accepts them with its defaults, and so does a relying party that reads no list', async () => {
    const { client, clientSecret, config } = await relyingParty(world)
    expect(client.idTokenAlg).toBe('RS256')
    const { tokens } = await codeFlow(config)
    expect(decodeProtectedHeader(tokens.id_token!)).toMatchObject({ alg: 'RS256', typ: 'JWT' })
    const { payload } = await verifyIdToken(tokens.id_token!, 'RS256')
    expect(payload).toMatchObject({ aud: client.id, sub: tokens.claims()!.sub, email, at_hash: atHash(tokens.access_token) })
    // Access tokens stay ES256 whatever the client's ID tokens are.
    expect(decodeProtectedHeader(tokens.access_token).alg).toBe('ES256')
    expect(await oidc.fetchUserInfo(config, tokens.access_token, payload.sub!)).toMatchObject({ sub: payload.sub, email })

    const blind = relyingPartyIgnoringTheList(config, clientSecret!)
    const again = await codeFlow(blind)
    expect(decodeProtectedHeader(again.tokens.id_token!).alg).toBe('RS256')
    // A refresh's ID token is signed the same way.
    expect(decodeProtectedHeader((await oidc.refreshTokenGrant(config, tokens.refresh_token!)).id_token!).alg).toBe('RS256')
  })

  it('a client registered with ES256 gets ES256 ID tokens (refused by a relying party that assumes RS256, as before authd offered it), until it is switched to RS256', async () => {
    const { client, clientSecret, config } = await relyingParty(world, { idTokenAlg: 'ES256', metadata: { id_token_signed_response_alg: 'ES256' } })
    const { tokens, browser } = await codeFlow(config)
    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('ES256')
    expect((await verifyIdToken(tokens.id_token!, 'ES256')).payload.at_hash).toBe(atHash(tokens.access_token))
    expect(decodeProtectedHeader((await oidc.refreshTokenGrant(config, tokens.refresh_token!)).id_token!).alg).toBe('ES256')

    const blind = relyingPartyIgnoringTheList(config, clientSecret!)
    expect(await codeFlow(blind, browser).catch((e) => e.cause?.message)).toBe('unexpected JWT "alg" header parameter')
    await updateClient(world.ctx.runtime, client.id, { idTokenAlg: 'RS256' })
    expect(decodeProtectedHeader((await codeFlow(blind, browser)).tokens.id_token!).alg).toBe('RS256')

    // end_session takes an ES256 ID token as its hint as it takes an RS256 one.
    const logout = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'http://127.0.0.1:9/signed-out', state: 'bye' })
    expect((await browser.send(logout.href)).location).toBe('http://127.0.0.1:9/signed-out?state=bye')
  })

  it('keys rotate replaces both keys, each retiring its own predecessor; keys revoke of the RSA key takes it out of the JWKS (its ID tokens no longer verify) and a new RSA key signs', async () => {
    const deps = world.ctx.runtime
    const { config } = await relyingParty(world)
    const browser = new UserAgent(world.server.url)
    const first = (await codeFlow(config, browser)).tokens.id_token!
    const before = (await issuerJwks()).keys.map((k) => k.kid)

    const [es, rs] = await rotateKeys(deps)
    expect([es!.alg, rs!.alg]).toEqual(['ES256', 'RS256'])
    const active = (await deps.store.signingKeys.list()).filter((k) => k.retiredAt === null)
    expect(active.map((k) => k.kid).sort()).toEqual([es!.kid, rs!.kid].sort())
    // The retired keys stay published until their tokens have expired.
    expect((await issuerJwks()).keys.map((k) => k.kid).sort()).toEqual([...before, es!.kid, rs!.kid].sort())
    world.ctx.clock.advance(6) // the key ring re-reads the store every few seconds
    const second = (await codeFlow(config, browser)).tokens
    expect(decodeProtectedHeader(second.id_token!).kid).toBe(rs!.kid)
    expect(decodeProtectedHeader(second.access_token).kid).toBe(es!.kid)
    await verifyIdToken(first, 'RS256')

    const revoked = await revokeSigningKey(deps, rs!.kid, undefined, 0)
    expect(revoked).toEqual({ kid: rs!.kid, alg: 'RS256', replacementKid: expect.any(String), sessionsRevoked: 0 })
    const kids = (await issuerJwks()).keys.map((k) => k.kid)
    expect(kids).not.toContain(rs!.kid)
    expect(kids).toContain(revoked.replacementKid!)
    expect(kids).toContain(es!.kid)
    expect(await verifyIdToken(second.id_token!, 'RS256').catch((e) => e.code)).toBe('ERR_JWKS_NO_MATCHING_KEY')
    // The ES256 key still signs access tokens, and the grant is untouched: an ID-token key signs no session.
    expect(await oidc.fetchUserInfo(config, second.access_token, oidc.skipSubjectCheck)).toMatchObject({ email })
    world.ctx.clock.advance(6)
    const third = (await codeFlow(config, browser)).tokens.id_token!
    expect(decodeProtectedHeader(third).kid).toBe(revoked.replacementKid!)
    await verifyIdToken(third, 'RS256')
  })

  it('a database from before the RSA key gets one at the first start; its ES256 key stays the one that signs access tokens', async () => {
    // As a database made before this change: an ES256 key, no RSA key.
    const ctx = await createTestContext()
    try {
      const es = await rotateSigningKey(ctx.runtime.store.signingKeys, ctx.clock)
      expect((await ctx.runtime.store.signingKeys.list()).map((k) => k.alg)).toEqual(['ES256'])
      const server = await startServer(ctx.runtime, silentLogger)
      try {
        const active = (await ctx.runtime.store.signingKeys.list()).filter((k) => k.retiredAt === null)
        expect(active.map((k) => [k.kid === es.kid, k.alg])).toEqual([[true, 'ES256'], [false, 'RS256']])
      } finally {
        await server.stop()
      }
    } finally {
      await ctx.close()
    }
  })
})
