// Service clients, the client_credentials grant and token introspection (product spec §26),
// with openid-client v6 as the client over a real socket, and jose verifying the tokens against
// the published JWKS as an independent resource server would.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { createClient } from '../../src/core/oidc/clients'
import { createTenant } from '../../src/core/tenants/tenants'
import { updateTenantPages } from '../../src/core/tenants/tenant-pages'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { databaseEnv, loginFor } from '../helpers'
import { authorizationRequest, CALLBACK, relyingParty, startOidcWorld, UserAgent, type OidcWorld } from '../oidc-journey'

const API = 'https://api.example/'
const REPORTS = 'https://reports.example/'

let world: OidcWorld
let tenantAudience: string
beforeEach(async () => {
  world = await startOidcWorld()
  tenantAudience = (await world.ctx.runtime.store.tenants.get(world.ctx.tenantId))!.audience
})
afterEach(() => world.close())

type ServiceInput = { scopes?: string[]; audiences?: string[]; tokenLifetime?: string; tenantId?: string; issuer?: string; auth?: 'basic' | 'post' }

const secretOf = new WeakMap<oidc.Configuration, string>()

/** A service client and openid-client's Configuration for it. */
async function serviceClient(input: ServiceInput = {}) {
  const { client, clientSecret } = await createClient(world.ctx.runtime, input.tenantId ?? world.ctx.tenantId, { name: 'Billing', service: true, scopes: input.scopes ?? ['invoices:read', 'invoices:write'], audiences: input.audiences ?? [API], tokenLifetime: input.tokenLifetime })
  const auth = input.auth === 'post' ? oidc.ClientSecretPost(clientSecret!) : oidc.ClientSecretBasic(clientSecret!)
  const config = await oidc.discovery(new URL(input.issuer ?? world.issuer), client.id, undefined, auth, { execute: [oidc.allowInsecureRequests] })
  secretOf.set(config, clientSecret!)
  return { client, config }
}

const refusal = (promise: Promise<unknown>) => promise.then(() => null, (e: { error?: string; status?: number }) => ({ error: e.error, status: e.status }))
/** What introspection told, as a plain record. */
const introspect = async (config: oidc.Configuration, token: string, parameters?: Record<string, string>): Promise<Record<string, unknown>> => ({ ...(await oidc.tokenIntrospection(config, token, parameters)) })
const jwks = () => createRemoteJWKSet(new URL(`${world.issuer}/jwks`))

describe('client_credentials (RFC 6749 §4.4) for service clients', () => {
  it('issues an RFC 9068 access token for the tenant audience by default, and no refresh or ID token; discovery lists the grant', async () => {
    const { client, config } = await serviceClient({ tokenLifetime: '10m' })
    expect(config.serverMetadata()).toMatchObject({ introspection_endpoint: `${world.issuer}/introspect`, introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] })
    expect(config.serverMetadata().grant_types_supported).toContain('client_credentials')
    const tokens = await oidc.clientCredentialsGrant(config)
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 600, scope: 'invoices:read invoices:write' })
    expect(tokens.refresh_token).toBeUndefined()
    expect(tokens.id_token).toBeUndefined()
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ typ: 'at+jwt', alg: 'ES256' })
    const { payload } = await jwtVerify(tokens.access_token, jwks(), { issuer: world.issuer, audience: tenantAudience, typ: 'at+jwt' })
    expect(payload).toEqual({ iss: world.issuer, sub: client.id, client_id: client.id, aud: tenantAudience, scope: 'invoices:read invoices:write', iat: expect.any(Number), exp: payload.iat! + 600, jti: expect.any(String) })
    const events = await world.ctx.runtime.store.audit.query({ tenantId: world.ctx.tenantId, type: 'oidc.service_token_issued' })
    expect(events[0]?.detail).toMatchObject({ clientId: client.id, aud: tenantAudience })
  })

  it('names the resource asked for (RFC 8707) and narrows the scope; refuses a scope or resource not the client’s (client_secret_post too)', async () => {
    const { config } = await serviceClient({ audiences: [API, REPORTS], auth: 'post' })
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'invoices:read', resource: REPORTS })
    expect(tokens.scope).toBe('invoices:read')
    const { payload } = await jwtVerify(tokens.access_token, jwks(), { issuer: world.issuer, audience: REPORTS })
    expect(payload.scope).toBe('invoices:read')
    expect(await refusal(oidc.clientCredentialsGrant(config, { scope: 'invoices:read admin' }))).toEqual({ error: 'invalid_scope', status: 400 })
    expect(await refusal(oidc.clientCredentialsGrant(config, { resource: 'https://elsewhere.example/' }))).toEqual({ error: 'invalid_target', status: 400 })
  })

  it('is refused to a client that signs users in, and a service client gets no code or refresh grant', async () => {
    const { config } = await relyingParty(world)
    expect(await refusal(oidc.clientCredentialsGrant(config))).toEqual({ error: 'unauthorized_client', status: 400 })
    const { client, config: service } = await serviceClient()
    // (openid-client checks a callback before it sends a code: the endpoint is asked directly)
    const secret = await createClient(world.ctx.runtime, world.ctx.tenantId, { name: 'Batch', service: true })
    const code = await fetch(`${world.issuer}/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', redirect_uri: CALLBACK, client_id: secret.client.id, client_secret: secret.clientSecret! }) })
    expect({ status: code.status, error: ((await code.json()) as { error: string }).error }).toEqual({ status: 400, error: 'unauthorized_client' })
    expect(await refusal(oidc.refreshTokenGrant(service, 'x'))).toEqual({ error: 'unauthorized_client', status: 400 })
    const page = await new UserAgent(world.server.url).send(`${new URL(world.issuer).pathname}/authorize?client_id=${client.id}&response_type=code&scope=openid&redirect_uri=${encodeURIComponent(CALLBACK)}`)
    expect(page.location).toBeNull()
    expect({ status: page.status, shown: page.html.includes('Something is wrong') }).toEqual({ status: 400, shown: true })
  })

  it('refuses service clients that are public or have redirect URIs, and scopes for other clients', async () => {
    const create = (input: Record<string, unknown>) => createClient(world.ctx.runtime, world.ctx.tenantId, { name: 'X', ...input }).then(() => null, (e: Error) => e.message)
    expect(await create({ service: true, public: true })).toContain('confidential')
    expect(await create({ service: true, redirectUris: [CALLBACK] })).toContain('redirectUris')
    expect(await create({ redirectUris: [CALLBACK], scopes: ['a'] })).toContain('service client only')
    expect(await create({ service: true, scopes: ['openid'] })).toContain('no user')
    expect(await create({ service: true, audiences: ['not a uri'] })).toContain('audiences')
    expect(await create({ service: true, tokenLifetime: '2d' })).toContain('tokenLifetime')
    // authd's own issuer is the audience of every user's OpenID access token of the tenant
    expect(await create({ service: true, audiences: [world.issuer] })).toContain('must not be an issuer of authd')
    expect(await create({ audiences: [world.issuer], redirectUris: [CALLBACK] })).toContain('must not be an issuer of authd')
  })
})

describe('token introspection (RFC 7662)', () => {
  /** A user's OpenID grant through the pages: its access and refresh tokens. */
  async function openIdGrant(config: oidc.Configuration) {
    const { email } = await world.ctx.addUser()
    const request = await authorizationRequest(config)
    const browser = new UserAgent(world.server.url)
    const answer = await browser.signIn(await browser.follow(request.url.href), email)
    return oidc.authorizationCodeGrant(config, new URL(answer.location!), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce })
  }

  it('tells a client its own token and a token for an audience it holds; another client’s token is inactive', async () => {
    const billing = await serviceClient()
    const reports = await serviceClient({ audiences: [REPORTS] })
    const resourceServer = await serviceClient({ scopes: [], audiences: [API] })
    const own = (await oidc.clientCredentialsGrant(billing.config)).access_token
    expect(await introspect(billing.config, own)).toEqual({
      active: true,
      scope: 'invoices:read invoices:write',
      client_id: billing.client.id,
      sub: billing.client.id,
      aud: tenantAudience,
      iss: world.issuer,
      exp: expect.any(Number),
      iat: expect.any(Number),
      jti: expect.any(String),
      token_type: 'Bearer',
    })
    expect(await introspect(reports.config, own)).toEqual({ active: false })
    const forApi = (await oidc.clientCredentialsGrant(billing.config, { resource: API })).access_token
    expect(await introspect(resourceServer.config, forApi, { token_type_hint: 'access_token' })).toMatchObject({ active: true, aud: API, client_id: billing.client.id })
    expect(await introspect(reports.config, forApi)).toEqual({ active: false })
  })

  it('tells a relying party its OpenID access and refresh tokens until the grant ends; then they are inactive', async () => {
    const { client, config } = await relyingParty(world)
    const tokens = await openIdGrant(config)
    const access = await introspect(config, tokens.access_token)
    expect(access).toMatchObject({ active: true, client_id: client.id, aud: world.issuer, iss: world.issuer, token_type: 'Bearer', scope: 'openid profile email offline_access' })
    expect(await introspect(config, tokens.refresh_token!)).toMatchObject({ active: true, client_id: client.id, sub: access.sub, token_type: 'refresh_token', scope: 'openid profile email offline_access' })
    // Another client of the tenant sees neither.
    const other = await serviceClient()
    expect(await introspect(other.config, tokens.access_token)).toEqual({ active: false })
    expect(await introspect(other.config, tokens.refresh_token!)).toEqual({ active: false })
    await oidc.tokenRevocation(config, tokens.refresh_token!)
    expect(await introspect(config, tokens.access_token)).toEqual({ active: false })
    expect(await introspect(config, tokens.refresh_token!)).toEqual({ active: false })
  })

  it('tells a client holding the tenant audience authd’s own API token while its session lives', async () => {
    const { email } = await world.ctx.addUser()
    const login = await loginFor(world.ctx, email)
    const token = login.json.data.response.accessToken as string
    const holder = await serviceClient({ audiences: [tenantAudience] })
    expect(await introspect(holder.config, token)).toMatchObject({ active: true, sub: expect.any(String), aud: tenantAudience, token_type: 'Bearer' })
    expect(await introspect((await serviceClient()).config, token)).toEqual({ active: false })
    await world.ctx.call('POST', '/api/v1/auth/logout', { cookie: `refreshToken=${login.refreshCookie}`, apiKey: null })
    expect(await introspect(holder.config, token)).toEqual({ active: false })
  })

  it('answers only {active: false} for an expired, malformed or another tenant’s token', async () => {
    const billing = await serviceClient({ tokenLifetime: '60' })
    const token = (await oidc.clientCredentialsGrant(billing.config)).access_token
    for (const garbage of ['garbage', 'a.b.c', `${token.slice(0, -4)}AAAA`, 'x'.repeat(9000)]) expect(await introspect(billing.config, garbage)).toEqual({ active: false })
    // Another tenant's service token, for an audience both tenants' clients hold.
    const beta = await createTenant(world.ctx.runtime, { name: 'Beta' })
    const betaIssuer = world.issuer.replace(world.ctx.tenantId, beta.id)
    const betaClient = await serviceClient({ tenantId: beta.id, issuer: betaIssuer })
    const betaToken = (await oidc.clientCredentialsGrant(betaClient.config, { resource: API })).access_token
    expect(await introspect(betaClient.config, betaToken)).toMatchObject({ active: true })
    expect(await introspect(billing.config, betaToken)).toEqual({ active: false })
    world.ctx.clock.advance(61)
    expect(await introspect(billing.config, token)).toEqual({ active: false })
  })

  it('is refused to a public client and to none (401 invalid_client)', async () => {
    const token = (await oidc.clientCredentialsGrant((await serviceClient()).config)).access_token
    const { config } = await relyingParty(world, { public: true })
    expect(await refusal(introspect(config, token))).toEqual({ error: 'invalid_client', status: 401 })
    const bare = await fetch(`${world.issuer}/introspect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${token}` })
    expect({ status: bare.status, body: await bare.json() }).toEqual({ status: 401, body: { error: 'invalid_client', error_description: 'client authentication failed' } })
  })
})

describe('service clients through the CLI and the admin API', () => {
  it('authd clients create --service --scopes --audience --token-lifetime; update replaces them; the client gets tokens', async () => {
    const authd = cliRunner(SOURCE_CLI, world.ctx.dir, { ...databaseEnv(world.ctx), AUTHD_PUBLIC_URL: world.ctx.runtime.config.publicUrl })
    const created = await authd(['--json', 'clients', 'create', '--tenant', world.ctx.tenantId, '--name', 'Billing', '--service', '--scopes', 'invoices:read,invoices:write', '--audience', API, '--audience', REPORTS, '--token-lifetime', '5m'])
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' })
    expect(created.json.client).toMatchObject({ type: 'confidential', service: true, redirectUris: [], scopes: ['invoices:read', 'invoices:write'], audiences: [API, REPORTS], tokenLifetime: 300 })
    expect(created.json.clientSecret).toStartWith('authd_cs_')
    const config = await oidc.discovery(new URL(world.issuer), created.json.client.clientId, undefined, oidc.ClientSecretBasic(created.json.clientSecret), { execute: [oidc.allowInsecureRequests] })
    expect((await oidc.clientCredentialsGrant(config, { resource: REPORTS })).expires_in).toBe(300)
    const updated = await authd(['--json', 'clients', 'update', created.json.client.clientId, '--scopes', 'invoices:read', '--no-audiences', '--token-lifetime', '1h'])
    expect(updated.json).toMatchObject({ scopes: ['invoices:read'], audiences: [], tokenLifetime: 3600 })
    expect(await refusal(oidc.clientCredentialsGrant(config, { resource: REPORTS }))).toEqual({ error: 'invalid_target', status: 400 })
    const human = await authd(['clients', 'create', '--tenant', world.ctx.tenantId, '--name', 'Cron', '--service'])
    expect(human.stdout).toContain('service client Cron')
    const both = await authd(['clients', 'create', '--tenant', world.ctx.tenantId, '--name', 'X', '--service', '--redirect-uri', CALLBACK])
    expect(both.code).toBe(2)
  })

  it('POST and PATCH /api/v1/admin/clients take service, scopes, audiences and tokenLifetime', async () => {
    const key = (await createApiKey(world.ctx.runtime, { tenantId: world.ctx.tenantId, name: 'ops', scope: 'admin' })).key
    const admin = (method: string, path: string, body?: unknown) => world.ctx.call(method, `/api/v1/admin${path}`, { apiKey: key, body })
    const created = await admin('POST', '/clients', { name: 'Billing', service: true, scopes: ['invoices:read'], audiences: [API], tokenLifetime: '10m' })
    expect(created.status).toBe(201)
    expect(created.json.data.client).toMatchObject({ service: true, redirectUris: [], scopes: ['invoices:read'], audiences: [API], tokenLifetime: 600 })
    const id = created.json.data.client.clientId
    expect((await admin('PATCH', `/clients/${id}`, { tokenLifetime: 120, audiences: [REPORTS] })).json.data).toMatchObject({ tokenLifetime: 120, audiences: [REPORTS] })
    const refused = await admin('PATCH', `/clients/${id}`, { redirectUris: [CALLBACK] })
    expect({ status: refused.status, message: refused.json.message }).toEqual({ status: 400, message: expect.stringContaining('not for a service client') })
    const rp = await admin('POST', '/clients', { name: 'Wiki', redirectUris: [CALLBACK], audiences: [API] })
    expect(rp.json.data.client).toMatchObject({ service: false, scopes: [], audiences: [API], tokenLifetime: 900 })
    expect((await admin('POST', '/clients', { name: 'Wiki', redirectUris: [CALLBACK], tokenLifetime: 60 })).status).toBe(400)
  })
})

describe('revoking a service token (RFC 7009)', () => {
  it('is refused as unsupported_token_type, never a 200 that leaves the token active; another client’s token is none of its business', async () => {
    const { config } = await serviceClient()
    const { access_token: token } = await oidc.clientCredentialsGrant(config, { resource: API })
    expect(await refusal(oidc.tokenRevocation(config, token))).toEqual({ error: 'unsupported_token_type', status: 400 })
    expect(await introspect(config, token)).toMatchObject({ active: true })
    // (a token that is not its own, or no token at all, is answered 200 as RFC 7009 §2.2 asks)
    const other = await serviceClient()
    expect(await refusal(oidc.tokenRevocation(other.config, token))).toBeNull()
    expect(await refusal(oidc.tokenRevocation(config, 'garbage'))).toBeNull()
    // At the tenant's other spelling (its slug) too: the token is judged at the issuer it names.
    await updateTenantPages(world.ctx.runtime, world.ctx.tenantId, { slug: 'acme' })
    const bySlug = await oidc.discovery(new URL(world.issuer.replace(world.ctx.tenantId, 'acme')), (config.clientMetadata().client_id as string), undefined, oidc.ClientSecretBasic(secretOf.get(config)!), { execute: [oidc.allowInsecureRequests] })
    expect(await refusal(oidc.tokenRevocation(bySlug, token))).toEqual({ error: 'unsupported_token_type', status: 400 })
  })
})
