// Access tokens: ES256 with a kid, verifiable from the JWKS by any standard library, and
// authd's own verifier (core/access-tokens.ts, what authd's endpoints accept) refuses forged,
// unsigned (alg: none), wrongly keyed, key-confused (HMAC over the public key, or the ID tokens'
// RSA key), key-locating, revoked-key and expired
// tokens (RFC 8725 §3.1, §3.2; ASVS 9.1.1-9.1.3).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createHmac, generateKeyPairSync, sign } from 'node:crypto'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose'
import { signAccessToken, verifyAccessToken } from '../../src/core/sessions/access-tokens'
import { revokeSigningKey } from '../../src/core/sessions/signing-keys'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { createUser } from '../../src/core/accounts/users'
import { createTestContext, loginFor, PASSWORD, type TestContext } from '../helpers'

let ctx: TestContext
let token: string
let jwks: JSONWebKeySet
beforeAll(async () => {
  ctx = await createTestContext()
  const { email } = await ctx.addUser()
  token = (await loginFor(ctx, email)).json.data.response.accessToken
  jwks = (await ctx.call('GET', '/api/v1/auth/.well-known/jwks.json')).json
})
afterAll(() => ctx.close())

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
/** authd's verifier, as its own endpoints use it. */
const verifyHere = (jwt: string) =>
  verifyAccessToken(ctx.runtime.keyRing, jwt, {
    issuer: ctx.runtime.config.issuer,
    now: Date.now(),
    audienceOf: async (tenantId) => (await ctx.runtime.store.tenants.get(tenantId))?.audience ?? null,
  })
/** Re-signs header and payload with authd's real key: what only a key leak would allow. */
const resign = async (header: object, payload: string) => {
  const key = await ctx.runtime.keyRing.signingKey()
  const input = `${b64(header)}.${payload}`
  return `${input}.${sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`
}
const verify = (jwt: string) => jwtVerify(jwt, createLocalJWKSet(jwks), { algorithms: ['ES256'], issuer: ctx.runtime.config.issuer, audience: `urn:authd:tenant:${ctx.tenantId}` })

describe('access tokens', () => {
  it('are ES256 JWTs with a kid and no key-location headers (jku, x5u, jwk)', async () => {
    const protectedHeader = decodeProtectedHeader(token)
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'JWT', kid: jwks.keys[0]!.kid })
    expect((await verify(token)).payload.sub).toEqual(expect.any(String))
    expect((await verifyHere(token)).tid).toBe(ctx.tenantId)
  })

  it.each([
    ['unsigned (alg: none)', () => `${b64({ alg: 'none', typ: 'JWT' })}.${token.split('.')[1]}.`],
    ['with a forged payload', () => {
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())
      return `${token.split('.')[0]}.${b64({ ...claims, type: 'admin' })}.${token.split('.')[2]}`
    }],
    ['signed by another key under our kid', () => {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      const user = { id: 'u', tenantId: 't', type: 'admin', email: 'x@example.com' } as never
      return signAccessToken({ kid: jwks.keys[0]!.kid!, alg: 'ES256', privateKey }, { issuer: ctx.runtime.config.issuer, audience: `urn:authd:tenant:${ctx.tenantId}`, ttlSec: 900 }, user, 'session-id', Date.now())
    }],
    ['HS256 keyed with our public key (key confusion)', () => {
      const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: jwks.keys[0]!.kid })}.${token.split('.')[1]}`
      return `${input}.${createHmac('sha256', JSON.stringify(jwks.keys[0])).update(input).digest('base64url')}`
    }],
    ['expired', async () => {
      const key = await ctx.runtime.keyRing.signingKey()
      const [user] = await ctx.runtime.store.users.page(ctx.tenantId, { limit: 1 })
      return signAccessToken(key, { issuer: ctx.runtime.config.issuer, audience: `urn:authd:tenant:${ctx.tenantId}`, ttlSec: 900 }, user!, 'session-id', Date.now() - 16 * 60 * 1000)
    }],
    ['naming a key location (jku) in an otherwise valid token', () => resign({ ...decodeProtectedHeader(token), jku: 'https://evil.example/jwks.json' }, token.split('.')[1]!)],
    ['with a crit header authd does not understand', () => resign({ ...decodeProtectedHeader(token), crit: ['exp'], exp: 1 }, token.split('.')[1]!)],
    ['signed with authd\'s RSA key, which signs ID tokens only (a leak of it forges no access token)', async () => {
      const rsa = await ctx.runtime.keyRing.signingKey('RS256')
      const input = `${b64({ ...decodeProtectedHeader(token), kid: rsa.kid })}.${token.split('.')[1]}`
      return `${input}.${sign('sha256', Buffer.from(input), rsa.privateKey).toString('base64url')}`
    }],
    ['carrying another tenant\'s audience', async () => {
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())
      return resign(decodeProtectedHeader(token), b64({ ...claims, aud: 'urn:authd:tenant:someone-else' }))
    }],
  ])('are refused by authd when %s', async (_, make) => {
    await expect(verifyHere(await make())).rejects.toThrow('Unauthorized')
  })

  it('signed by a revoked key are refused by authd, and the key leaves the JWKS', async () => {
    const own = await createTestContext()
    try {
      const { email } = await own.addUser()
      const jwt = (await loginFor(own, email)).json.data.response.accessToken
      const check = () =>
        verifyAccessToken(own.runtime.keyRing, jwt, { issuer: own.runtime.config.issuer, now: Date.now(), audienceOf: async () => `urn:authd:tenant:${own.tenantId}` })
      expect((await check()).sub).toEqual(expect.any(String))
      const kid = decodeProtectedHeader(jwt).kid!
      await revokeSigningKey(own.runtime, kid, undefined, 0)
      own.clock.advance(6) // past the key ring's reload interval
      await expect(check()).rejects.toThrow('Unauthorized')
      expect((await own.call('GET', '/api/v1/auth/.well-known/jwks.json')).json.keys.map((k: { kid: string }) => k.kid)).not.toContain(kid)
    } finally {
      own.close()
    }
  })

  it("of one tenant fail another tenant's audience check", async () => {
    const other = await createTenant(ctx.runtime, { name: 'Other', audience: 'https://api.other.example' })
    const { key } = await createApiKey(ctx.runtime, { tenantId: other.id })
    await createUser(ctx.runtime, { tenantId: other.id, email: 'o@example.com', firstName: 'O', lastName: 'P', password: PASSWORD })
    const otherToken = (await ctx.call('POST', '/api/v1/auth/login', { apiKey: key, body: { email: 'o@example.com', password: PASSWORD } })).json.data.response.accessToken
    const check = (jwt: string, audience: string) => jwtVerify(jwt, createLocalJWKSet(jwks), { algorithms: ['ES256'], issuer: ctx.runtime.config.issuer, audience })
    expect((await check(otherToken, 'https://api.other.example')).payload.tid).toBe(other.id)
    await expect(check(otherToken, `urn:authd:tenant:${ctx.tenantId}`)).rejects.toThrow('unexpected "aud" claim value')
    await expect(check(token, 'https://api.other.example')).rejects.toThrow('unexpected "aud" claim value')
  })

  it('the JWKS publishes only public keys, each pinned to ES256 and signature use', () => {
    for (const key of jwks.keys) {
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' })
      expect(key.d).toBeUndefined()
    }
  })
})
