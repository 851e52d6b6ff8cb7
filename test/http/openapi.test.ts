// The OpenAPI document is valid OpenAPI 3.1, covers the whole API, and describes what the
// endpoints really answer: real responses of every endpoint, success and errors, are
// validated against the schema the document gives for their status.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { setForwardAuthDomains } from '../../src/core/forward-auth/domains'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { setTenantSignup } from '../../src/core/signup/signup'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { createUser } from '../../src/core/accounts/users'
import { createTestContext, loginFor, PASSWORD, queryDatabase, type CallResult, type TestContext } from '../helpers'

let ctx: TestContext
let doc: any
beforeAll(async () => {
  ctx = await createTestContext()
  doc = (await ctx.call('GET', '/api/v1/auth/openapi.json', { apiKey: null })).json
})
afterAll(() => ctx.close())

const ajv = addFormats(new Ajv2020({ strict: false }))

/** Validates a real response against the document's schema for that path, method and status. */
function conforms(path: string, method: string, res: CallResult) {
  const operation = doc.paths[path]?.[method]
  expect({ path, method, documented: operation !== undefined }).toEqual({ path, method, documented: true })
  const schema = operation.responses[String(res.status)]?.content?.['application/json']?.schema
  expect({ path, status: res.status, documented: schema !== undefined }).toEqual({ path, status: res.status, documented: true })
  const validate = ajv.compile(schema)
  const valid = validate(res.json)
  expect({ path, status: res.status, errors: valid ? null : validate.errors }).toEqual({ path, status: res.status, errors: null })
}

describe('GET /api/v1/auth/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document of every endpoint, with its security schemes', async () => {
    const result = await new Validator().validate(doc)
    expect(result).toEqual({ valid: true })
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v1/admin/access-rules',
      '/api/v1/admin/access-rules/{ruleId}',
      '/api/v1/admin/audit',
      '/api/v1/admin/clients',
      '/api/v1/admin/clients/{clientId}',
      '/api/v1/admin/clients/{clientId}/rotate-secret',
      '/api/v1/admin/groups',
      '/api/v1/admin/groups/{groupId}',
      '/api/v1/admin/groups/{groupId}/members',
      '/api/v1/admin/groups/{groupId}/members/{userId}',
      '/api/v1/admin/providers',
      '/api/v1/admin/providers/{providerId}',
      '/api/v1/admin/tenant',
      '/api/v1/admin/users',
      '/api/v1/admin/users/{userId}',
      '/api/v1/admin/users/{userId}/grants',
      '/api/v1/admin/users/{userId}/grants/{clientId}',
      '/api/v1/admin/users/{userId}/groups',
      '/api/v1/admin/users/{userId}/identities',
      '/api/v1/admin/users/{userId}/identities/{identityId}',
      '/api/v1/admin/users/{userId}/invite',
      '/api/v1/admin/users/{userId}/mfa',
      '/api/v1/admin/users/{userId}/passkeys',
      '/api/v1/admin/users/{userId}/passkeys/{passkeyId}',
      '/api/v1/admin/users/{userId}/sessions',
      '/api/v1/admin/webhooks',
      '/api/v1/admin/webhooks/deliveries/{deliveryId}/redeliver',
      '/api/v1/admin/webhooks/{endpointId}',
      '/api/v1/admin/webhooks/{endpointId}/deliveries',
      '/api/v1/admin/webhooks/{endpointId}/rotate-secret',
      '/api/v1/auth/.well-known/jwks.json',
      '/api/v1/auth/change-password',
      '/api/v1/auth/forgot-password/{email}',
      '/api/v1/auth/login',
      '/api/v1/auth/logout',
      '/api/v1/auth/logout-all',
      '/api/v1/auth/me',
      '/api/v1/auth/me/password',
      '/api/v1/auth/mfa/totp',
      '/api/v1/auth/mfa/totp/confirm',
      '/api/v1/auth/mfa/verify',
      '/api/v1/auth/passkeys',
      '/api/v1/auth/passkeys/login',
      '/api/v1/auth/passkeys/login/options',
      '/api/v1/auth/passkeys/register',
      '/api/v1/auth/passkeys/register/options',
      '/api/v1/auth/passkeys/{passkeyId}',
      '/api/v1/auth/reauthenticate',
      '/api/v1/auth/refresh-token',
      '/api/v1/auth/sessions',
      '/api/v1/auth/sessions/{sessionId}',
      '/api/v1/auth/setup-password',
      '/api/v1/auth/signup',
      '/api/v1/auth/verify-email',
      '/healthz',
      '/readyz',
    ])
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['accessToken', 'adminKey', 'apiKey', 'refreshCookie', 'setupToken'])
    expect(doc.paths['/api/v1/auth/login'].post.requestBody.content['application/json'].schema.required).toEqual(['email', 'password'])
  })

  it('says that the admin API refuses fields its bodies do not name (additionalProperties: false)', () => {
    const bodies = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => path.startsWith('/api/v1/admin/') && operation.requestBody)
        .map(([method, operation]) => ({ method, path, additionalProperties: operation.requestBody.content['application/json']?.schema?.additionalProperties })),
    )
    expect(bodies.length).toBeGreaterThanOrEqual(7)
    expect(bodies).toEqual(bodies.map((body) => ({ ...body, additionalProperties: false })))
  })

  it('serves a docs page beside it that runs no third-party code', async () => {
    const res = await ctx.call('GET', '/api/v1/auth/docs', { apiKey: null })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(res.text).toContain('<script src="docs.js"></script>')
    expect(res.text).not.toMatch(/https?:\/\//)
    const script = await ctx.call('GET', '/api/v1/auth/docs.js', { apiKey: null })
    expect(script.headers.get('content-type')).toContain('javascript')
    expect(script.text).toContain("fetch('openapi.json')")
  })

  it('describes the real responses of every endpoint, success and errors', async () => {
    const { email } = await ctx.addUser()
    const login = await loginFor(ctx, email)
    conforms('/api/v1/auth/login', 'post', login)
    conforms('/api/v1/auth/login', 'post', await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: 'wrong password here' } }))
    conforms('/api/v1/auth/login', 'post', await ctx.call('POST', '/api/v1/auth/login', { body: { email } }))
    conforms('/api/v1/auth/login', 'post', await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, apiKey: null }))

    const refreshed = await ctx.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${login.refreshCookie}`, apiKey: null })
    conforms('/api/v1/auth/refresh-token', 'get', refreshed)
    conforms('/api/v1/auth/refresh-token', 'get', await ctx.call('GET', '/api/v1/auth/refresh-token', { apiKey: null }))
    conforms('/api/v1/auth/refresh-token', 'get', await ctx.call('GET', '/api/v1/auth/refresh-token', { apiKey: null, headers: { origin: 'https://evil.example' } }))

    conforms('/api/v1/auth/forgot-password/{email}', 'get', await ctx.call('GET', `/api/v1/auth/forgot-password/${email}`))
    conforms('/api/v1/auth/forgot-password/{email}', 'get', await ctx.call('GET', '/api/v1/auth/forgot-password/nope'))

    conforms('/api/v1/auth/change-password', 'post', await ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp: '000000', newPassword: 'a new passphrase here' } }))

    const { setupToken } = await createUser(ctx.runtime, { tenantId: ctx.tenantId, email: 'new@example.com', firstName: 'N', lastName: 'P' })
    const setup = (password: string) => ctx.call('POST', '/api/v1/auth/setup-password', { body: { password }, headers: { authorization: `Bearer ${setupToken!.token}` } })
    conforms('/api/v1/auth/setup-password', 'post', await setup('short'))
    conforms('/api/v1/auth/setup-password', 'post', await setup(PASSWORD))
    conforms('/api/v1/auth/setup-password', 'post', await setup(PASSWORD))

    const bearer = { apiKey: null, headers: { authorization: `Bearer ${refreshed.json.data.response.accessToken}` } }
    conforms('/api/v1/auth/me', 'get', await ctx.call('GET', '/api/v1/auth/me', bearer))
    conforms('/api/v1/auth/me', 'get', await ctx.call('GET', '/api/v1/auth/me', { apiKey: null }))
    conforms('/api/v1/auth/sessions', 'get', await ctx.call('GET', '/api/v1/auth/sessions', bearer))
    conforms('/api/v1/auth/sessions', 'get', await ctx.call('GET', '/api/v1/auth/sessions', { apiKey: null }))
    const other = await loginFor(ctx, email)
    const otherSession = JSON.parse(Buffer.from(other.json.data.response.accessToken.split('.')[1], 'base64url').toString()).sid
    conforms('/api/v1/auth/sessions/{sessionId}', 'delete', await ctx.call('DELETE', `/api/v1/auth/sessions/${otherSession}`, bearer))
    conforms('/api/v1/auth/sessions/{sessionId}', 'delete', await ctx.call('DELETE', `/api/v1/auth/sessions/${otherSession}`, bearer))
    conforms('/api/v1/auth/logout-all', 'post', await ctx.call('POST', '/api/v1/auth/logout-all', bearer))
    conforms('/api/v1/auth/logout-all', 'post', await ctx.call('POST', '/api/v1/auth/logout-all', bearer))

    conforms('/api/v1/auth/logout', 'post', await ctx.call('POST', '/api/v1/auth/logout', { cookie: `refreshToken=${refreshed.refreshCookie}`, apiKey: null }))
    conforms('/api/v1/auth/.well-known/jwks.json', 'get', await ctx.call('GET', '/api/v1/auth/.well-known/jwks.json', { apiKey: null }))
  })

  it('describes the real responses of the admin API, success and errors', async () => {
    const adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })).key
    const admin = (method: string, path: string, init: { body?: unknown; key?: string | null; headers?: Record<string, string> } = {}) =>
      ctx.call(method, `/api/v1/admin${path}`, { body: init.body, headers: init.headers, apiKey: init.key === undefined ? adminKey : init.key })
    const body = { email: 'made@example.com', firstName: 'M', lastName: 'A' }
    const created = await admin('POST', '/users', { body, headers: { 'idempotency-key': 'one' } })
    conforms('/api/v1/admin/users', 'post', created)
    conforms('/api/v1/admin/users', 'post', await admin('POST', '/users', { body, headers: { 'idempotency-key': 'one' } }))
    conforms('/api/v1/admin/users', 'post', await admin('POST', '/users', { body }))
    conforms('/api/v1/admin/users', 'post', await admin('POST', '/users', { body: { ...body, email: 'x' } }))
    conforms('/api/v1/admin/users', 'post', await admin('POST', '/users', { body, key: ctx.apiKey }))
    conforms('/api/v1/admin/users', 'post', await admin('POST', '/users', { body, key: null }))
    conforms('/api/v1/admin/users', 'get', await admin('GET', '/users?limit=1'))
    conforms('/api/v1/admin/users', 'get', await admin('GET', '/users?limit=0'))
    const userId = created.json.data.userId
    conforms('/api/v1/admin/users/{userId}', 'get', await admin('GET', `/users/${userId}`))
    conforms('/api/v1/admin/users/{userId}', 'get', await admin('GET', '/users/nobody'))
    conforms('/api/v1/admin/users/{userId}', 'patch', await admin('PATCH', `/users/${userId}`, { body: { lastName: 'B' } }))
    conforms('/api/v1/admin/users/{userId}', 'patch', await admin('PATCH', `/users/${userId}`, { body: {} }))
    conforms('/api/v1/admin/users/{userId}/invite', 'post', await admin('POST', `/users/${userId}/invite`))
    conforms('/api/v1/admin/users/{userId}/sessions', 'get', await admin('GET', `/users/${userId}/sessions`))
    conforms('/api/v1/admin/users/{userId}/sessions', 'delete', await admin('DELETE', `/users/${userId}/sessions`))
    conforms('/api/v1/admin/audit', 'get', await admin('GET', '/audit?limit=5'))
    conforms('/api/v1/admin/audit', 'get', await admin('GET', '/audit?since=never'))
    const group = await admin('POST', '/groups', { body: { name: 'admins', description: 'Who runs things' } })
    conforms('/api/v1/admin/groups', 'post', group)
    conforms('/api/v1/admin/groups', 'post', await admin('POST', '/groups', { body: { name: 'admins' } }))
    conforms('/api/v1/admin/groups', 'post', await admin('POST', '/groups', { body: { name: '-bad' } }))
    const groupId = group.json.data.groupId
    conforms('/api/v1/admin/groups', 'get', await admin('GET', '/groups'))
    conforms('/api/v1/admin/groups/{groupId}', 'get', await admin('GET', `/groups/${groupId}`))
    conforms('/api/v1/admin/groups/{groupId}', 'get', await admin('GET', '/groups/nothing'))
    conforms('/api/v1/admin/groups/{groupId}', 'patch', await admin('PATCH', `/groups/${groupId}`, { body: { description: null } }))
    conforms('/api/v1/admin/groups/{groupId}/members/{userId}', 'put', await admin('PUT', `/groups/${groupId}/members/${userId}`))
    conforms('/api/v1/admin/groups/{groupId}/members', 'get', await admin('GET', `/groups/${groupId}/members?limit=1`))
    conforms('/api/v1/admin/groups/{groupId}/members', 'get', await admin('GET', `/groups/${groupId}/members?limit=0`))
    conforms('/api/v1/admin/users/{userId}/groups', 'get', await admin('GET', `/users/${userId}/groups`))
    conforms('/api/v1/admin/users/{userId}', 'get', await admin('GET', `/users/${userId}`))
    conforms('/api/v1/admin/groups/{groupId}/members/{userId}', 'delete', await admin('DELETE', `/groups/${groupId}/members/${userId}`))
    conforms('/api/v1/admin/groups/{groupId}', 'delete', await admin('DELETE', `/groups/${groupId}`))
    conforms('/api/v1/admin/groups/{groupId}', 'delete', await admin('DELETE', `/groups/${groupId}`))
    conforms('/api/v1/admin/users/{userId}', 'delete', await admin('DELETE', `/users/${userId}`))
    conforms('/api/v1/admin/users/{userId}', 'delete', await admin('DELETE', `/users/${userId}`))

    conforms('/api/v1/admin/tenant', 'get', await admin('GET', '/tenant'))
    conforms('/api/v1/admin/tenant', 'patch', await admin('PATCH', '/tenant', { body: { forwardAuthDomains: ['example.com'] } }))
    const rule = { domain: 'app.example.com', policy: 'one_factor' }
    conforms('/api/v1/admin/access-rules', 'post', await admin('POST', '/access-rules', { body: rule }))
    // (as if authd served at auth.example.com: the CLI checks the domains against the public URL)
    await setForwardAuthDomains({ ...ctx.runtime, config: { ...ctx.runtime.config, publicUrl: 'https://auth.example.com' } }, ctx.tenantId, ['example.com'])
    conforms('/api/v1/admin/tenant', 'get', await admin('GET', '/tenant'))
    const added = await admin('POST', '/access-rules', { body: { ...rule, paths: ['/admin'], methods: ['GET'], position: 1 } })
    conforms('/api/v1/admin/access-rules', 'post', added)
    conforms('/api/v1/admin/access-rules', 'post', await admin('POST', '/access-rules', { body: { ...rule, position: 0 } }))
    conforms('/api/v1/admin/access-rules', 'post', await admin('POST', '/access-rules', { body: rule, key: ctx.apiKey }))
    conforms('/api/v1/admin/access-rules', 'get', await admin('GET', '/access-rules'))
    conforms('/api/v1/admin/access-rules/{ruleId}', 'get', await admin('GET', `/access-rules/${added.json.data.ruleId}`))
    conforms('/api/v1/admin/access-rules/{ruleId}', 'get', await admin('GET', '/access-rules/nothing'))
    conforms('/api/v1/admin/access-rules/{ruleId}', 'delete', await admin('DELETE', `/access-rules/${added.json.data.ruleId}`))
    conforms('/api/v1/admin/access-rules/{ruleId}', 'delete', await admin('DELETE', `/access-rules/${added.json.data.ruleId}`))
  })

  it('describes the real responses of the admin API for identity providers and identities, success and errors', async () => {
    const adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })).key
    const admin = (method: string, path: string, body?: unknown, key: string | null = adminKey) => ctx.call(method, `/api/v1/admin${path}`, { body, apiKey: key })
    const body = { type: 'google', clientId: 'an-id.apps.googleusercontent.com', clientSecret: 'a-secret-of-google' }
    const created = await admin('POST', '/providers', body)
    conforms('/api/v1/admin/providers', 'post', created)
    conforms('/api/v1/admin/providers', 'post', await admin('POST', '/providers', body))
    conforms('/api/v1/admin/providers', 'post', await admin('POST', '/providers', { ...body, type: 'facebook' }))
    conforms('/api/v1/admin/providers', 'post', await admin('POST', '/providers', body, ctx.apiKey))
    conforms('/api/v1/admin/providers', 'post', await admin('POST', '/providers', body, null))
    const providerId = created.json.data.providerId
    conforms('/api/v1/admin/providers', 'get', await admin('GET', '/providers'))
    conforms('/api/v1/admin/providers/{providerId}', 'get', await admin('GET', `/providers/${providerId}`))
    conforms('/api/v1/admin/providers/{providerId}', 'get', await admin('GET', '/providers/nothing'))
    conforms('/api/v1/admin/providers/{providerId}', 'patch', await admin('PATCH', `/providers/${providerId}`, { name: 'Google Workspace', createUsers: 'domains:example.com' }))
    conforms('/api/v1/admin/providers/{providerId}', 'patch', await admin('PATCH', `/providers/${providerId}`, { scopes: 'email' }))

    const { userId } = await ctx.addUser({ email: 'linked@example.com' })
    const now = ctx.clock.now()
    const identity = { id: Bun.randomUUIDv7(), tenantId: ctx.tenantId, providerId, subject: '1234', userId, email: 'linked@example.com', emailVerified: true, createdAt: now, lastUsedAt: null }
    const linked = { at: now, type: 'identity.linked' as const, tenantId: ctx.tenantId, userId, ip: null, userAgent: null, apiKeyId: null, detail: null }
    expect(await ctx.runtime.store.identities.insert(identity, linked)).toBe(true)
    conforms('/api/v1/admin/users/{userId}/identities', 'get', await admin('GET', `/users/${userId}/identities`))
    conforms('/api/v1/admin/users/{userId}/identities', 'get', await admin('GET', '/users/nobody/identities'))
    await admin('POST', '/providers', { type: 'gitlab', clientId: 'gitlab-app', clientSecret: 'a-secret-of-gitlab' })
    conforms('/api/v1/admin/providers/{providerId}', 'patch', await admin('PATCH', `/providers/${providerId}`, { name: 'gitlab' }))
    conforms('/api/v1/admin/users/{userId}/identities/{identityId}', 'delete', await admin('DELETE', `/users/${userId}/identities/${identity.id}`))
    conforms('/api/v1/admin/users/{userId}/identities/{identityId}', 'delete', await admin('DELETE', `/users/${userId}/identities/${identity.id}`))
    conforms('/api/v1/admin/providers/{providerId}', 'delete', await admin('DELETE', `/providers/${providerId}`))
    conforms('/api/v1/admin/providers/{providerId}', 'delete', await admin('DELETE', `/providers/${providerId}`))
  })

  it('describes the real responses of sign-up and verification, success and errors', async () => {
    const body = { email: 'joiner@example.com', password: 'a sign-up passphrase of mine', firstName: 'J', lastName: 'O' }
    conforms('/api/v1/auth/signup', 'post', await ctx.call('POST', '/api/v1/auth/signup', { body }))
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'open')
    conforms('/api/v1/auth/signup', 'post', await ctx.call('POST', '/api/v1/auth/signup', { body }))
    conforms('/api/v1/auth/signup', 'post', await ctx.call('POST', '/api/v1/auth/signup', { body: { ...body, password: 'short' } }))
    conforms('/api/v1/auth/signup', 'post', await ctx.call('POST', '/api/v1/auth/signup', { body, apiKey: null }))
    const [mail] = await queryDatabase<{ text_body: string }>(ctx, "SELECT text_body FROM mail_outbox WHERE kind = 'signup-code'")
    const otp = /\b(\d{6})\b/.exec(mail!.text_body)![1]!
    conforms('/api/v1/auth/verify-email', 'post', await ctx.call('POST', '/api/v1/auth/verify-email', { body: { email: body.email, otp: otp === '000000' ? '000001' : '000000' } }))
    conforms('/api/v1/auth/verify-email', 'post', await ctx.call('POST', '/api/v1/auth/verify-email', { body: { email: body.email, otp } }))
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'closed')
    conforms('/api/v1/auth/verify-email', 'post', await ctx.call('POST', '/api/v1/auth/verify-email', { body: { email: body.email, otp } }))
  })

  it('describes the real responses of two-factor authentication, success and errors', async () => {
    const { email } = await ctx.addUser({ email: 'two.factor@example.com' })
    const login = () => ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })
    const token = (await login()).json.data.response.accessToken
    const bearer = { authorization: `Bearer ${token}` }
    const started = await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer })
    conforms('/api/v1/auth/mfa/totp', 'post', started)
    const secret = started.json.data.secret
    const code = (drift = 0) => totpCode(secret, totpStep(ctx.clock.now()) + drift)
    conforms('/api/v1/auth/mfa/totp/confirm', 'post', await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: code(5) } }))
    conforms('/api/v1/auth/mfa/totp/confirm', 'post', await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: code() } }))
    conforms('/api/v1/auth/mfa/totp', 'post', await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer }))
    const challenged = await login()
    conforms('/api/v1/auth/login', 'post', challenged)
    const challengeToken = challenged.json.data.response.challengeToken
    conforms('/api/v1/auth/mfa/verify', 'post', await ctx.call('POST', '/api/v1/auth/mfa/verify', { body: { challengeToken, code: code(5) } }))
    ctx.clock.advance(30)
    conforms('/api/v1/auth/mfa/verify', 'post', await ctx.call('POST', '/api/v1/auth/mfa/verify', { body: { challengeToken, code: code() } }))
    conforms('/api/v1/auth/mfa/totp', 'delete', await ctx.call('DELETE', '/api/v1/auth/mfa/totp', { headers: bearer, body: { code: code(5) } }))
    ctx.clock.advance(30)
    conforms('/api/v1/auth/mfa/totp', 'delete', await ctx.call('DELETE', '/api/v1/auth/mfa/totp', { headers: bearer, body: { code: code() } }))
    const adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })).key
    const userId = challenged.json.data.response.user?.userId ?? (await ctx.call('GET', '/api/v1/auth/me', { headers: bearer })).json.data.userId
    conforms('/api/v1/admin/users/{userId}/mfa', 'delete', await ctx.call('DELETE', `/api/v1/admin/users/${userId}/mfa`, { apiKey: adminKey }))
    conforms('/api/v1/admin/users/{userId}/mfa', 'delete', await ctx.call('DELETE', '/api/v1/admin/users/nobody/mfa', { apiKey: adminKey }))
  })
})
