// private_key_jwt (RFC 7523 §2.2, OpenID Connect Core §9, product spec §26): a client given a
// JWKS at creation authenticates with assertions it signs, with openid-client v6 as the client
// over a real socket, and assertions made by hand (jose) for what openid-client never sends:
// a replay, a foreign key, an HMAC, `none`, a wrong audience, a far expiry.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose'
import * as oidc from 'openid-client'
import { createClient, rotateClientSecret, updateClient } from '../../src/core/oidc/clients'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { databaseEnv, tempDir } from '../helpers'
import { startOidcWorld, type OidcWorld } from '../oidc-journey'
import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import { generateKeyPairSync } from 'node:crypto'

const API = 'https://api.example/'
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

let world: OidcWorld
beforeEach(async () => {
  world = await startOidcWorld()
})
afterEach(() => world.close())

interface Keys {
  privateKey: CryptoKey
  publicJwk: JWK
}

async function keyPair(alg: 'ES256' | 'RS256' | 'EdDSA' = 'ES256', kid = `k-${Math.random().toString(36).slice(2)}`): Promise<Keys> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg } }
}

/** A service client that authenticates with these keys, and openid-client's Configuration for it. */
async function keyedClient(keys: Keys, input: { service?: boolean; audiences?: string[] } = {}) {
  const service = input.service ?? true
  const { client, clientSecret } = await createClient(world.ctx.runtime, world.ctx.tenantId, { name: 'Robot', ...(service ? { service: true, scopes: ['invoices:read'] } : { redirectUris: ['https://app.example/cb'] }), audiences: input.audiences ?? [API], jwks: { keys: [keys.publicJwk] } })
  const config = await oidc.discovery(new URL(world.issuer), client.id, undefined, oidc.PrivateKeyJwt({ key: keys.privateKey, kid: keys.publicJwk.kid }), { execute: [oidc.allowInsecureRequests] })
  return { client, clientSecret, config }
}

/** An assertion as the client signs it, with what a test changes. */
async function assertion(keys: Keys, clientId: string, claims: Record<string, unknown> = {}, alg = String(keys.publicJwk.alg)) {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ iss: clientId, sub: clientId, aud: world.issuer, jti: crypto.randomUUID(), iat: now, exp: now + 60, ...claims }).setProtectedHeader({ alg, kid: keys.publicJwk.kid }).sign(keys.privateKey)
}

/** POST /token for the client_credentials grant, authenticated by these fields. */
async function tokenRequest(fields: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(`${world.issuer}/token`, { method: 'POST', headers, body: new URLSearchParams({ grant_type: 'client_credentials', ...fields }) })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}
const withAssertion = (signed: string) => ({ client_assertion_type: ASSERTION_TYPE, client_assertion: signed })
const refused = (description = 'client authentication failed') => ({ status: 401, body: { error: 'invalid_client', error_description: description } })

describe('private_key_jwt: a client proves itself with an assertion signed by its keys', () => {
  it('gets client_credentials tokens and introspects with openid-client; has no secret; discovery lists the method', async () => {
    const keys = await keyPair()
    const { client, clientSecret, config } = await keyedClient(keys)
    expect(clientSecret).toBeNull()
    expect(config.serverMetadata()).toMatchObject({
      token_endpoint_auth_methods_supported: expect.arrayContaining(['private_key_jwt']),
      introspection_endpoint_auth_methods_supported: expect.arrayContaining(['private_key_jwt']),
      token_endpoint_auth_signing_alg_values_supported: expect.arrayContaining(['ES256', 'RS256', 'EdDSA']),
    })
    const tokens = await oidc.clientCredentialsGrant(config, { resource: API })
    expect(tokens.scope).toBe('invoices:read')
    // (each request signs a new assertion: openid-client's second request is not a replay)
    expect({ ...(await oidc.tokenIntrospection(config, tokens.access_token)) }).toMatchObject({ active: true, client_id: client.id, aud: API })
    // A resource server that is no service client (it signs users in) introspects with its own keys too.
    const resourceServer = await keyedClient(await keyPair('RS256'), { service: false })
    expect({ ...(await oidc.tokenIntrospection(resourceServer.config, tokens.access_token)) }).toMatchObject({ active: true, sub: client.id })
    const ed = await keyedClient(await keyPair('EdDSA'))
    expect((await oidc.clientCredentialsGrant(ed.config)).access_token).toBeString()
  })

  it('spends each assertion once: the same assertion sent again is refused, saying why to the key holder', async () => {
    const keys = await keyPair()
    const { client } = await keyedClient(keys)
    const signed = await assertion(keys, client.id)
    expect((await tokenRequest(withAssertion(signed))).status).toBe(200)
    expect(await tokenRequest(withAssertion(signed))).toEqual(refused('client assertion refused: this jti was used before (an assertion is good for one request)'))
    // (at another endpoint too: a jti is the client's, not the endpoint's)
    const introspected = await fetch(`${world.issuer}/introspect`, { method: 'POST', body: new URLSearchParams({ token: 'x', ...withAssertion(signed) }) })
    expect(introspected.status).toBe(401)
  })

  it('refuses assertions a thief or a careless client could make, each as invalid_client', async () => {
    const keys = await keyPair()
    const { client } = await keyedClient(keys)
    const other = await keyPair()
    const cases: Record<string, string> = {
      'a key not the client’s': await assertion({ ...other, publicJwk: keys.publicJwk }, client.id),
      'another client as iss': await assertion(keys, client.id, { iss: 'someone-else' }),
      'another tenant’s issuer as aud': await assertion(keys, client.id, { aud: `${new URL(world.issuer).origin}/t/${(await createTenant(world.ctx.runtime, { name: 'Other' })).id}` }),
      'expired': await assertion(keys, client.id, { iat: Math.floor(Date.now() / 1000) - 600, exp: Math.floor(Date.now() / 1000) - 120 }),
      'no jti': await assertion(keys, client.id, { jti: undefined }),
      'no exp': await assertion(keys, client.id, { exp: undefined }),
      'not yet valid': await assertion(keys, client.id, { nbf: Math.floor(Date.now() / 1000) + 600 }),
      'HS256 with the public key as secret': await new SignJWT({ iss: client.id, sub: client.id, aud: world.issuer, jti: 'h', exp: Math.floor(Date.now() / 1000) + 60 }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(JSON.stringify(keys.publicJwk))),
      'alg none': `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify({ iss: client.id, sub: client.id, aud: world.issuer, jti: 'n', exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url')}.`,
      'not a JWT': 'abc',
    }
    const answers = Object.fromEntries(await Promise.all(Object.entries(cases).map(async ([name, signed]) => [name, await tokenRequest(withAssertion(signed))])))
    expect(answers).toEqual(Object.fromEntries(Object.keys(cases).map((name) => [name, refused()])))
    expect(await tokenRequest(withAssertion(await assertion(keys, client.id, { exp: Math.floor(Date.now() / 1000) + 3600 })))).toEqual(refused('client assertion refused: exp must be at most 10 minutes ahead'))
    // aud is the issuer alone (audience injection): not the token endpoint, not a list naming it among others.
    expect(await tokenRequest(withAssertion(await assertion(keys, client.id, { aud: `${world.issuer}/token` })))).toEqual(refused())
    expect(await tokenRequest(withAssertion(await assertion(keys, client.id, { aud: [API, world.issuer] })))).toEqual(refused('client assertion refused: aud must be the issuer alone'))
    expect((await tokenRequest(withAssertion(await assertion(keys, client.id, { aud: [world.issuer] })))).status).toBe(200)
    // A fractional exp: the spent jti is kept until the assertion can no longer be accepted. The
    // clock stands 0.1 s into a second; 60.2 s after exp the assertion still verifies (the
    // tolerance counts whole seconds), so only the kept jti refuses it.
    const clock = world.ctx.clock
    clock.freeze()
    clock.advance((Math.ceil(clock.now() / 1000) * 1000 - clock.now()) / 1000 + 0.1)
    const fractional = await assertion(keys, client.id, { exp: clock.now() / 1000 + 0.0001 })
    expect((await tokenRequest(withAssertion(fractional))).status).toBe(200)
    clock.advance(60.2)
    expect(await tokenRequest(withAssertion(fractional))).toEqual(refused('client assertion refused: this jti was used before (an assertion is good for one request)'))
  })

  it('takes one method only: no secret for a keyed client, no assertion for a secret one, never both', async () => {
    const keys = await keyPair()
    const { client } = await keyedClient(keys)
    const secretClient = await createClient(world.ctx.runtime, world.ctx.tenantId, { name: 'Billing', service: true })
    expect(await tokenRequest({ client_id: client.id, client_secret: 'authd_cs_guess' })).toEqual(refused())
    expect(await tokenRequest({ client_id: client.id })).toEqual(refused())
    // An assertion for the secret client, signed with a key it never had.
    expect(await tokenRequest(withAssertion(await assertion(keys, secretClient.client.id)))).toEqual(refused())
    const basic = `Basic ${Buffer.from(`${secretClient.client.id}:${secretClient.clientSecret}`).toString('base64')}`
    expect(await tokenRequest(withAssertion(await assertion(keys, client.id)), { authorization: basic })).toEqual({ status: 400, body: { error: 'invalid_request', error_description: 'use one client authentication method, not two' } })
    expect(await tokenRequest({ client_assertion_type: 'urn:example:saml', client_assertion: await assertion(keys, client.id) })).toEqual({ status: 400, body: { error: 'invalid_request', error_description: `client_assertion_type must be ${ASSERTION_TYPE}` } })
    // client_id, when sent beside the assertion, must be the assertion's.
    expect(await tokenRequest({ client_id: secretClient.client.id, ...withAssertion(await assertion(keys, client.id)) })).toEqual(refused())
    expect((await tokenRequest({ client_id: client.id, ...withAssertion(await assertion(keys, client.id)) })).status).toBe(200)
  })

  it('rotates keys: the new set replaces the old at once; a keyed client has no secret to rotate', async () => {
    const first = await keyPair()
    const { client } = await keyedClient(first)
    const second = await keyPair('RS256')
    await updateClient(world.ctx.runtime, client.id, { jwks: { keys: [first.publicJwk, second.publicJwk] } })
    expect((await tokenRequest(withAssertion(await assertion(first, client.id)))).status).toBe(200)
    expect((await tokenRequest(withAssertion(await assertion(second, client.id)))).status).toBe(200)
    // A client that names no kid (openid-client given a bare key) is checked against each key that fits.
    const third = await keyPair('ES256')
    await updateClient(world.ctx.runtime, client.id, { jwks: { keys: [first.publicJwk, third.publicJwk] } })
    const unnamed = async (keys: Keys) => new SignJWT({ iss: client.id, sub: client.id, aud: world.issuer, jti: crypto.randomUUID(), exp: Math.floor(Date.now() / 1000) + 60 }).setProtectedHeader({ alg: 'ES256' }).sign(keys.privateKey)
    expect((await tokenRequest(withAssertion(await unnamed(first)))).status).toBe(200)
    expect((await tokenRequest(withAssertion(await unnamed(third)))).status).toBe(200)
    await updateClient(world.ctx.runtime, client.id, { jwks: { keys: [second.publicJwk] } })
    expect(await tokenRequest(withAssertion(await assertion(first, client.id)))).toEqual(refused())
    await expect(rotateClientSecret(world.ctx.runtime, client.id)).rejects.toThrow('authenticates with its keys')
    const secretClient = await createClient(world.ctx.runtime, world.ctx.tenantId, { name: 'Billing', service: true })
    await expect(updateClient(world.ctx.runtime, secretClient.client.id, { jwks: { keys: [second.publicJwk] } })).rejects.toThrow('jwks is for a client created with keys')
  })

  it('refuses key sets that are no public signing keys, without echoing the key', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true })
    const privateJwk = await exportJWK(privateKey)
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' })
    const create = (jwks: unknown, extra: Record<string, unknown> = {}) => createClient(world.ctx.runtime, world.ctx.tenantId, { name: 'Robot', service: true, jwks, ...extra }).then(() => 'created', (e: Error) => e.message)
    const message = await create({ keys: [privateJwk] })
    expect(message).toBe('jwks.keys[0] is a private or symmetric key: give the public key only (and treat this one as exposed)')
    expect(message).not.toContain(String(privateJwk.d))
    expect(await create({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] })).toContain('private or symmetric key')
    expect(await create({ keys: [weak] })).toBe('jwks.keys[0] must be an RSA key of at least 2048 bits')
    // (zero bytes before a short modulus make it no longer)
    expect(await create({ keys: [{ ...weak, n: Buffer.concat([Buffer.alloc(200), Buffer.from(String(weak.n), 'base64url')]).toString('base64url') }] })).toBe('jwks.keys[0] must be an RSA key of at least 2048 bits')
    const twin = (await keyPair()).publicJwk
    expect(await create({ keys: [twin, { ...(await keyPair()).publicJwk, kid: twin.kid }] })).toContain('is given twice')
    expect(await create({ keys: [{ kty: 'EC', crv: 'secp256k1', x: 'a', y: 'b' }] })).toContain('the curve must be P-256')
    expect(await create({ keys: [{ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' }] })).toBe('jwks.keys[0] is not a valid EC public key for ES256')
    expect(await create({ keys: [] })).toContain('1 to 10 public keys')
    expect(await create([])).toContain('JSON Web Key Set')
    expect(await create({ keys: [{ ...(await keyPair()).publicJwk, use: 'enc' }] })).toBe('jwks.keys[0]: use must be sig')
    expect(await create({ keys: [(await keyPair()).publicJwk] }, { service: false, public: true, redirectUris: ['https://app.example/cb'] })).toContain('a public client has no keys')
  })
})

describe('private_key_jwt through the CLI and the admin API', () => {
  it('authd clients create --jwks-file prints no secret; update --jwks-file replaces the keys; a file that is no JSON is a usage error', async () => {
    const keys = await keyPair()
    const dir = tempDir()
    const file = join(dir, 'robot.jwks.json')
    writeFileSync(file, JSON.stringify({ keys: [keys.publicJwk] }))
    const authd = cliRunner(SOURCE_CLI, world.ctx.dir, { ...databaseEnv(world.ctx), AUTHD_PUBLIC_URL: world.ctx.runtime.config.publicUrl })
    const human = await authd(['clients', 'create', '--tenant', world.ctx.tenantId, '--name', 'Robot', '--service', '--jwks-file', file])
    expect({ code: human.code, stderr: human.stderr }).toEqual({ code: 0, stderr: '' })
    expect(human.stdout).toContain('created private_key_jwt service client Robot')
    expect(human.stdout).toContain('authenticates with private_key_jwt')
    expect(human.stdout).not.toContain('client_secret')
    const created = await authd(['--json', 'clients', 'create', '--tenant', world.ctx.tenantId, '--name', 'Robot 2', '--service', '--jwks-file', file])
    expect(created.json).toMatchObject({ clientSecret: null, client: { type: 'confidential', authMethod: 'private_key_jwt', jwks: { keys: [keys.publicJwk] } } })
    const clientId = created.json.client.clientId
    expect((await tokenRequest(withAssertion(await assertion(keys, clientId)))).status).toBe(200)
    const next = await keyPair()
    writeFileSync(file, JSON.stringify({ keys: [next.publicJwk] }))
    expect((await authd(['clients', 'update', clientId, '--jwks-file', file])).code).toBe(0)
    expect(await tokenRequest(withAssertion(await assertion(keys, clientId)))).toEqual(refused())
    expect((await tokenRequest(withAssertion(await assertion(next, clientId)))).status).toBe(200)
    writeFileSync(file, 'not json')
    const bad = await authd(['clients', 'create', '--tenant', world.ctx.tenantId, '--name', 'X', '--service', '--jwks-file', file])
    expect({ code: bad.code, stderr: bad.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining('is not JSON') })
    const missing = await authd(['clients', 'create', '--tenant', world.ctx.tenantId, '--name', 'X', '--service', '--jwks-file', join(dir, 'nope.json')])
    expect({ code: missing.code, stderr: missing.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('cannot read') })
  })

  it('POST /api/v1/admin/clients takes jwks (no secret in the answer); PATCH replaces it; rotate-secret is a 400', async () => {
    const key = (await createApiKey(world.ctx.runtime, { tenantId: world.ctx.tenantId, name: 'ops', scope: 'admin' })).key
    const admin = (method: string, path: string, body?: unknown) => world.ctx.call(method, `/api/v1/admin${path}`, { apiKey: key, body })
    const keys = await keyPair()
    const created = await admin('POST', '/clients', { name: 'Robot', service: true, jwks: { keys: [keys.publicJwk] } })
    expect(created.status).toBe(201)
    expect(created.json.data).toMatchObject({ clientSecret: null, client: { authMethod: 'private_key_jwt', secretPrefix: null, jwks: { keys: [keys.publicJwk] } } })
    const id = created.json.data.client.clientId
    const next = await keyPair()
    expect((await admin('PATCH', `/clients/${id}`, { jwks: { keys: [next.publicJwk] } })).json.data.jwks).toEqual({ keys: [next.publicJwk] })
    const rotate = await admin('POST', `/clients/${id}/rotate-secret`)
    expect({ status: rotate.status, message: rotate.json.message }).toEqual({ status: 400, message: expect.stringContaining('authenticates with its keys') })
    const bad = await admin('POST', '/clients', { name: 'Robot', service: true, jwks: 'keys' })
    expect({ status: bad.status, message: bad.json.message }).toEqual({ status: 400, message: expect.stringContaining('JSON Web Key Set') })
    expect((await admin('GET', '/clients')).json.data.map((c: { authMethod: string }) => c.authMethod)).toContain('private_key_jwt')
  })
})
