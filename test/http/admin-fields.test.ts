// Every admin API endpoint that takes a JSON body refuses a field it does not know with a 400
// naming it (it used to drop it: {"role":"admin"} made a plain user and said 201), and an
// ill-typed optional field is named with what it must be, not as "required". The five auth
// endpoints of the interface keep ignoring unknown fields: their clients are not ours to break.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { setForwardAuthDomains } from '../../src/core/forward-auth/domains'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTestContext, PASSWORD, queryDatabase, type TestContext } from '../helpers'

const ADMIN = '/api/v1/admin'
let ctx: TestContext
let adminKey: string
let ids: { userId: string; clientId: string; endpointId: string; providerId: string }
beforeEach(async () => {
  // (authd on a host of the tenant's forward-auth domain, so that access rules can be added)
  ctx = await createTestContext({ AUTHD_PUBLIC_URL: 'https://auth.example.com' })
  await setForwardAuthDomains(ctx.runtime, ctx.tenantId, ['example.com'])
  adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })).key
  const { userId } = await ctx.addUser()
  const client = await admin('POST', '/clients', { name: 'Wiki', redirectUris: ['https://wiki.example/cb'] })
  const endpoint = await admin('POST', '/webhooks', { url: 'https://hooks.example.com/authd', events: '*' })
  const provider = await admin('POST', '/providers', { type: 'gitlab', clientId: 'gitlab-app', clientSecret: 'a secret of gitlab' })
  ids = { userId, clientId: client.json.data.client.clientId, endpointId: endpoint.json.data.id, providerId: provider.json.data.providerId }
})
afterEach(() => ctx.close())

const admin = (method: string, path: string, body?: unknown) => ctx.call(method, `${ADMIN}${path}`, { body, apiKey: adminKey })

interface Endpoint {
  method: string
  path: (i: typeof ids) => string
  /** A body the endpoint accepts. */
  valid: Record<string, unknown>
  /** The fields it takes, as its 400 lists them. */
  takes: string
  /** An optional field sent with the wrong type, and what the answer says it must be. */
  illTyped: [Record<string, unknown>, string]
}

const ENDPOINTS: Endpoint[] = [
  {
    method: 'POST',
    path: () => '/users',
    valid: { email: 'new@example.com', firstName: 'Ada', lastName: 'Lovelace' },
    takes: 'email, firstName, lastName, type, password, invite, emailVerified',
    illTyped: [{ email: 'new@example.com', firstName: 'Ada', lastName: 'Lovelace', invite: 'yes' }, 'invite must be a boolean'],
  },
  { method: 'PATCH', path: (i) => `/users/${i.userId}`, valid: { firstName: 'Changed' }, takes: 'email, firstName, lastName, type, disabled, emailVerified', illTyped: [{ firstName: 42 }, 'firstName must be a string'] },
  {
    method: 'PATCH',
    path: () => '/tenant',
    valid: { displayName: 'Acme Corp' },
    takes: 'passkeyRpId, passkeyOrigins, slug, displayName, accentColor, logoUrl, signup',
    illTyped: [{ displayName: 42 }, 'displayName must be a string or null'],
  },
  {
    method: 'POST',
    path: () => '/clients',
    valid: { name: 'Blog', redirectUris: ['https://blog.example/cb'] },
    takes: 'name, redirectUris, postLogoutRedirectUris, public, firstParty, idTokenAlg, allowedGroups, groupsClaim, service, scopes, audiences, tokenLifetime, device, jwks',
    illTyped: [{ name: 'Blog', redirectUris: ['https://blog.example/cb'], public: 'no' }, 'public must be a boolean'],
  },
  { method: 'PATCH', path: (i) => `/clients/${i.clientId}`, valid: { name: 'Wiki 2' }, takes: 'name, redirectUris, postLogoutRedirectUris, firstParty, idTokenAlg, allowedGroups, groupsClaim, scopes, audiences, tokenLifetime, jwks', illTyped: [{ redirectUris: 'https://x.example/cb' }, 'redirectUris must be an array'] },
  {
    method: 'POST',
    path: () => '/webhooks',
    valid: { url: 'https://hooks.example.com/other', events: ['user.created'] },
    takes: 'url, events, description',
    illTyped: [{ url: 'https://hooks.example.com/other', description: 7 }, 'description must be a string'],
  },
  { method: 'PATCH', path: (i) => `/webhooks/${i.endpointId}`, valid: { description: 'CRM' }, takes: 'url, events, description, enabled', illTyped: [{ enabled: 'false' }, 'enabled must be a boolean'] },
  {
    method: 'POST',
    path: () => '/access-rules',
    valid: { domain: 'app.example.com', policy: 'one_factor' },
    takes: 'domain, paths, methods, policy, groups, position',
    illTyped: [{ domain: 'app.example.com', policy: 'one_factor', position: '1' }, 'position must be a number'],
  },
  {
    method: 'POST',
    path: () => '/providers',
    valid: { type: 'google', clientId: 'web.apps.googleusercontent.com', clientSecret: 'a secret of google' },
    takes: 'type, name, issuer, entraTenant, clientId, clientSecret, scopes, linkByEmail, createUsers, trustUpstreamMfa, groupsClaim, groupMap',
    illTyped: [{ type: 'google', clientId: 'web.apps.googleusercontent.com', clientSecret: 'a secret of google', trustUpstreamMfa: 'yes' }, 'trustUpstreamMfa must be a boolean'],
  },
  {
    method: 'PATCH',
    path: (i) => `/providers/${i.providerId}`,
    valid: { name: 'Our GitLab' },
    takes: 'name, issuer, entraTenant, clientId, clientSecret, scopes, linkByEmail, createUsers, trustUpstreamMfa, groupsClaim, groupMap',
    illTyped: [{ groupMap: ['admins'] }, 'groupMap must be an object of upstream group names to local group names, or null'],
  },
]

/** What the endpoint's objects look like now: a refused request must leave them as they were. */
const state = async () => ({
  users: await queryDatabase(ctx, 'SELECT id, first_name, type FROM users ORDER BY id'),
  tenant: await queryDatabase(ctx, 'SELECT display_name, passkey_origins, forward_auth_domains FROM tenants'),
  clients: await queryDatabase(ctx, 'SELECT id, name, redirect_uris FROM oidc_clients ORDER BY id'),
  endpoints: await queryDatabase(ctx, 'SELECT id, description, event_types, disabled_at FROM webhook_endpoints ORDER BY id'),
  rules: await queryDatabase(ctx, 'SELECT id, position, domain FROM access_rules ORDER BY id'),
  providers: (await admin('GET', '/providers')).json.data,
})

describe('admin API bodies', () => {
  it.each(ENDPOINTS.map((e) => [`${e.method} ${e.path({ userId: ':userId', clientId: ':clientId', endpointId: ':endpointId', providerId: ':providerId' })}`, e] as const))(
    '%s refuses an unknown field with a 400 naming it, changes nothing, and accepts the same body without it',
    async (_, { method, path, valid, takes }) => {
      const before = await state()
      const refused = await admin(method, path(ids), { ...valid, role: 'admin' })
      expect({ status: refused.status, json: refused.json }).toEqual({ status: 400, json: { statusCode: 400, message: `Unknown field role: this request takes ${takes}`, data: null } })
      expect(await state()).toEqual(before)
      expect((await admin(method, path(ids), valid)).status).toBeOneOf([200, 201])
    },
  )

  it.each(ENDPOINTS.map((e) => [`${e.method} ${e.path({ userId: ':userId', clientId: ':clientId', endpointId: ':endpointId', providerId: ':providerId' })}`, e] as const))(
    '%s names an ill-typed optional field with what it must be, not as missing',
    async (_, { method, path, illTyped: [body, message] }) => {
      const res = await admin(method, path(ids), body)
      expect({ status: res.status, json: res.json }).toEqual({ status: 400, json: { statusCode: 400, message, data: null } })
    },
  )

  it('the reported cases: POST /users {"role":"admin"} creates no one; PATCH /tenant {"returnToOrigins"} or {"forwardAuthDomains"} changes nothing', async () => {
    const before = await state()
    const role = await admin('POST', '/users', { email: 'eve@example.com', firstName: 'Eve', lastName: 'E', role: 'admin' })
    expect(role.json.message).toStartWith('Unknown field role:')
    const origins = await admin('PATCH', '/tenant', { returnToOrigins: ['https://evil.example'] })
    expect(origins.json.message).toStartWith('returnToOrigins is set by the operator')
    const domains = await admin('PATCH', '/tenant', { forwardAuthDomains: ['evil.example'] })
    expect({ status: domains.status, message: domains.json.message }).toEqual({ status: 400, message: 'forwardAuthDomains is set by the operator (authd tenants update --forward-auth-domain), not through the admin API' })
    expect(await state()).toEqual(before)
  })

  it('cuts a long unknown name, and still says a missing required field is required', async () => {
    const long = await admin('POST', '/webhooks', { url: 'https://hooks.example.com/x', ['x'.repeat(5000)]: 1 })
    expect(long.json.message).toBe(`Unknown field ${'x'.repeat(64)}…: this request takes url, events, description`)
    expect((await admin('POST', '/users', { email: 'a@example.com', lastName: 'L' })).json.message).toBe('firstName is required and must be a string')
  })
})

describe('the auth endpoints of the interface', () => {
  it('still ignore fields they do not know (their clients may send more than the interface lists)', async () => {
    const { email } = await ctx.addUser({ email: 'grace@example.com' })
    const login = await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD, rememberMe: false, captcha: 'x' } })
    expect(login.status).toBe(201)
  })
})
