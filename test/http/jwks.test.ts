import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { rotateSigningKey } from '../../src/core/sessions/signing-keys'
import { createTestContext, loginFor, type TestContext } from '../helpers'

const JWKS = '/api/v1/auth/.well-known/jwks.json'
let ctx: TestContext
beforeEach(async () => {
  ctx = await createTestContext()
})
afterEach(() => ctx.close())

const kidsOf = async () => (await ctx.call('GET', JWKS)).json.keys.map((k: { kid: string }) => k.kid)

describe('GET /.well-known/jwks.json', () => {
  it('serves the public keys as a plain JWKS, cacheable, without private parts', async () => {
    const { email } = await ctx.addUser()
    await loginFor(ctx, email)
    const res = await ctx.call('GET', JWKS, { apiKey: null })
    expect(res.status).toBe(200)
    expect(res.json.keys).toHaveLength(1)
    expect(res.json.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) })
    expect(res.json.keys[0].d).toBeUndefined()
    expect(res.headers.get('cache-control')).toBe('public, max-age=60')
    // With no CORS origins configured, no answer depends on Origin (app.test.ts for the other case).
    expect(res.headers.get('vary')).toBeNull()
  })

  it('after keys rotate: new tokens use the new key, and the old key stays until its tokens expire', async () => {
    const { email } = await ctx.addUser()
    const oldToken = (await loginFor(ctx, email)).json.data.response.accessToken
    const [oldKid] = await kidsOf()
    const newKey = await rotateSigningKey(ctx.runtime.store.signingKeys, ctx.clock)
    ctx.clock.advance(6) // the key ring re-reads the store every few seconds
    const newToken = (await loginFor(ctx, email)).json.data.response.accessToken
    expect(decodeProtectedHeader(newToken).kid).toBe(newKey.kid)
    expect(await kidsOf()).toEqual([oldKid, newKey.kid])
    const jwks = createLocalJWKSet((await ctx.call('GET', JWKS)).json)
    await jwtVerify(oldToken, jwks)
    await jwtVerify(newToken, jwks)
    ctx.clock.advance(15 * 60)
    expect(await kidsOf()).toEqual([newKey.kid])
  })
})

describe('GET /healthz and /readyz', () => {
  it('answer 200 while the database is reachable and migrated', async () => {
    expect((await ctx.call('GET', '/healthz', { apiKey: null })).json).toEqual({ statusCode: 200, message: 'OK', data: { status: 'alive' } })
    expect((await ctx.call('GET', '/readyz', { apiKey: null })).json).toEqual({ statusCode: 200, message: 'OK', data: { status: 'ready' } })
  })

  it('readyz answers 503 with Retry-After when the database is gone', async () => {
    ctx.runtime.store.close()
    const res = await ctx.call('GET', '/readyz', { apiKey: null })
    expect(res.status).toBe(503)
    expect(res.json).toEqual({ statusCode: 503, message: 'Service unavailable', data: null })
    expect(res.headers.get('retry-after')).toBe('5')
    expect((await ctx.call('GET', '/healthz', { apiKey: null })).status).toBe(200)
  })
})
