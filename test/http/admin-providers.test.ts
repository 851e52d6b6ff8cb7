// Upstream identity providers and linked identities under the admin API (product spec §25): each
// preset with its defaults and the redirect URI to register upstream, a sentence naming what is
// wrong with a body, the client secret in no answer, log or audit row (stored sealed, opened only
// for the sign-in), updates that keep the type and refuse to move the issuer under linked
// identities, deletion that takes the identities with it, unlinking that never takes a user's
// last way in, and an admin key that sees nothing of another tenant (404).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { auditEvent, CLI_ACTOR } from '../../src/core/audit/audit'
import { createUser } from '../../src/core/accounts/users'
import { createProvider, MAX_PROVIDERS, providerSecretOf } from '../../src/core/federation/providers'
import type { Identity } from '../../src/core/federation/types'
import { createGroup } from '../../src/core/groups/groups'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { createTestContext, queryDatabase, type CallResult, type TestContext } from '../helpers'

const AUTHD = 'https://auth.example.com'
const SECRET = 'upstream-client-secret-5b1e9c'
let ctx: TestContext
let adminKey: string
let adminKeyId: string
beforeEach(async () => {
  ctx = await createTestContext({ AUTHD_PUBLIC_URL: AUTHD })
  const created = await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })
  adminKey = created.key
  adminKeyId = created.apiKey.id
})
afterEach(() => ctx.close())

const admin = (method: string, path: string, body?: unknown, key: string | null = adminKey) => ctx.call(method, `/api/v1/admin${path}`, { body, apiKey: key })
const refusal = (res: CallResult) => ({ status: res.status, message: res.json?.message })
const google = { type: 'google', clientId: 'web-app.apps.googleusercontent.com', clientSecret: SECRET }
const redirectUri = (tenantId: string, providerId: string) => `${AUTHD}/t/${tenantId}/login/${providerId}/callback`
const detailOf = (detail: unknown) => (typeof detail === 'string' ? JSON.parse(detail) : detail)
const auditRows = async (like: string) =>
  (await queryDatabase<{ type: string; detail: unknown; api_key_id: string | null; user_id: string | null }>(ctx, 'SELECT type, detail, api_key_id, user_id FROM audit_events WHERE type LIKE $1 ORDER BY id', [like])).map((row) => ({ ...row, detail: detailOf(row.detail) }))

/** Links an identity as the sign-in flow would (the store's own insert, with its event). */
async function link(fields: { tenantId?: string; providerId: string; userId: string; subject?: string; email?: string | null }): Promise<Identity> {
  const tenantId = fields.tenantId ?? ctx.tenantId
  const identity: Identity = { id: Bun.randomUUIDv7(), tenantId, providerId: fields.providerId, subject: fields.subject ?? Bun.randomUUIDv7(), userId: fields.userId, email: fields.email ?? null, emailVerified: true, createdAt: ctx.clock.now(), lastUsedAt: null }
  expect(await ctx.runtime.store.identities.insert(identity, auditEvent(ctx.runtime, 'identity.linked', CLI_ACTOR, { tenantId, userId: fields.userId, detail: { providerId: fields.providerId } }))).toBe(true)
  ctx.clock.advance(1)
  return identity
}

describe('POST /providers', () => {
  it.each([
    ['google', google, { type: 'google', name: 'Google', issuer: 'https://accounts.google.com', scopes: 'openid email profile', linkByEmail: 'verified' }],
    ['microsoft (organizations)', { ...google, type: 'microsoft', entraTenant: 'organizations' }, { type: 'microsoft', name: 'Microsoft', issuer: 'https://login.microsoftonline.com/organizations/v2.0', scopes: 'openid email profile', linkByEmail: 'verified' }],
    ['microsoft (a tenant id)', { ...google, type: 'microsoft', name: 'Contoso', entraTenant: '72F988BF-86F1-41AF-91AB-2D7CD011DB47' }, { type: 'microsoft', name: 'Contoso', issuer: 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0', scopes: 'openid email profile', linkByEmail: 'verified' }],
    ['gitlab.com', { ...google, type: 'gitlab' }, { type: 'gitlab', name: 'GitLab', issuer: 'https://gitlab.com', scopes: 'openid email profile', linkByEmail: 'verified' }],
    ['a GitLab instance', { ...google, type: 'gitlab', name: 'Our GitLab', issuer: 'https://GitLab.Example.com/' }, { type: 'gitlab', name: 'Our GitLab', issuer: 'https://gitlab.example.com', scopes: 'openid email profile', linkByEmail: 'verified' }],
    ['github.com', { ...google, type: 'github' }, { type: 'github', name: 'GitHub', issuer: null, scopes: 'read:user user:email', linkByEmail: 'never' }],
    ['a GitHub Enterprise Server', { ...google, type: 'github', name: 'GitHub Enterprise', issuer: 'https://github.example.com' }, { type: 'github', name: 'GitHub Enterprise', issuer: 'https://github.example.com', scopes: 'read:user user:email', linkByEmail: 'never' }],
    ['any OpenID Provider', { ...google, type: 'oidc', name: 'Keycloak', issuer: 'https://sso.example.com/realms/staff' }, { type: 'oidc', name: 'Keycloak', issuer: 'https://sso.example.com/realms/staff', scopes: 'openid email profile', linkByEmail: 'never' }],
    ['a test upstream on this machine', { ...google, type: 'oidc', name: 'Local', issuer: 'http://127.0.0.1:4000/' }, { type: 'oidc', name: 'Local', issuer: 'http://127.0.0.1:4000', scopes: 'openid email profile', linkByEmail: 'never' }],
  ] as Array<[string, Record<string, unknown>, Record<string, unknown>]>)('creates a provider for %s with its defaults and the redirect URI to register upstream', async (_, body, expected) => {
    const created = await admin('POST', '/providers', body)
    expect(created.status).toBe(201)
    const providerId = created.json.data.providerId
    expect(created.json).toEqual({
      statusCode: 201,
      message: 'Identity provider created',
      data: {
        providerId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        tenantId: ctx.tenantId,
        ...expected,
        clientId: 'web-app.apps.googleusercontent.com',
        createUsers: null,
        trustUpstreamMfa: false,
        groupsClaim: null,
        groupMap: {},
        redirectUri: redirectUri(ctx.tenantId, providerId),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    })
    expect((await admin('GET', `/providers/${providerId}`)).json.data).toEqual(created.json.data)
    expect((await admin('GET', '/providers')).json.data).toEqual([created.json.data])
  })

  it('takes every setting: scopes, linking, who may sign up, upstream MFA and mapped groups', async () => {
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'staff' })
    const body = {
      ...google,
      type: 'oidc',
      name: 'Keycloak',
      issuer: 'https://sso.example.com/realms/staff',
      scopes: 'openid  email profile groups email',
      linkByEmail: 'verified',
      createUsers: 'domains:Example.com, example.org',
      trustUpstreamMfa: true,
      groupsClaim: 'https://example.com/claims/groups',
      groupMap: { '/Admins': 'Admins', 'cn=staff,ou=groups': 'staff', '/Everyone': 'staff' },
    }
    const created = await admin('POST', '/providers', body)
    expect(created.status).toBe(201)
    expect(created.json.data).toMatchObject({
      scopes: 'openid email profile groups',
      linkByEmail: 'verified',
      createUsers: 'domains:example.com,example.org',
      trustUpstreamMfa: true,
      groupsClaim: 'https://example.com/claims/groups',
      groupMap: { '/Admins': 'admins', '/Everyone': 'staff', 'cn=staff,ou=groups': 'staff' },
    })
  })

  it('lists by name, and refuses a name the tenant has (409) and a provider past the 20th (409)', async () => {
    await admin('POST', '/providers', { ...google, type: 'gitlab' })
    await admin('POST', '/providers', google)
    expect((await admin('GET', '/providers')).json.data.map((p: { name: string }) => p.name)).toEqual(['GitLab', 'Google'])
    expect(refusal(await admin('POST', '/providers', { ...google, type: 'oidc', name: 'google', issuer: 'https://accounts.example.com' }))).toEqual({ status: 409, message: 'The tenant has a provider named google' })
    for (let i = 3; i <= MAX_PROVIDERS; i++) expect((await admin('POST', '/providers', { ...google, type: 'oidc', name: `Provider ${i}`, issuer: `https://p${i}.example.com` })).status).toBe(201)
    expect(refusal(await admin('POST', '/providers', { ...google, type: 'oidc', name: 'One too many', issuer: 'https://p21.example.com' }))).toEqual({
      status: 409,
      message: `The tenant has ${MAX_PROVIDERS} identity providers, the most it may have (each is a button on its login page)`,
    })
  })

  it('says what is wrong with a body, creates nothing, and never repeats the secret', async () => {
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
    const oidc = { ...google, type: 'oidc', name: 'SSO', issuer: 'https://sso.example.com' }
    const issuerHint = 'issuer must be an https URL such as https://login.example.com (http only on localhost, 127.0.0.1 or [::1])'
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ clientId: 'x', clientSecret: SECRET }, 'type is required and must be a string'],
      [{ ...google, type: 'facebook' }, 'type must be one of oidc, google, microsoft, gitlab, github'],
      [{ ...oidc, name: undefined }, 'name is required for oidc: the login page shows "Continue with {name}"'],
      [{ ...oidc, issuer: undefined }, 'issuer is required for oidc: the URL of the OpenID Provider whose discovery document configures the sign-in'],
      [{ ...oidc, issuer: 'http://sso.example.com' }, issuerHint],
      [{ ...oidc, issuer: 'ftp://sso.example.com' }, issuerHint],
      [{ ...oidc, issuer: 'sso.example.com' }, issuerHint],
      [{ ...oidc, issuer: 'https://user:pass@sso.example.com' }, 'issuer must not carry a user name or password'],
      [{ ...oidc, issuer: 'https://sso.example.com/?tenant=1' }, 'issuer must not have a query or a fragment'],
      [{ ...oidc, issuer: 'https://sso.example.com/#x' }, 'issuer must not have a query or a fragment'],
      [{ ...google, issuer: 'https://evil.example.com' }, 'issuer is not taken for google: its issuer is https://accounts.google.com'],
      [{ ...google, type: 'microsoft' }, 'entraTenant is required for microsoft: organizations, common, or a Microsoft Entra tenant id'],
      [{ ...google, type: 'microsoft', entraTenant: 'contoso.onmicrosoft.com' }, 'entraTenant must be organizations, common, or a Microsoft Entra tenant id (a GUID such as 72f988bf-86f1-41af-91ab-2d7cd011db47)'],
      [{ ...google, type: 'microsoft', entraTenant: 'common', issuer: 'https://login.microsoftonline.com/x/v2.0' }, 'issuer is not taken for microsoft: give entraTenant (organizations, common or a tenant id), from which it follows'],
      [{ ...google, type: 'gitlab', entraTenant: 'common' }, 'entraTenant applies to microsoft only'],
      [{ ...oidc, name: 'x'.repeat(65) }, 'name must be 1 to 64 characters'],
      [{ ...oidc, name: 'Sign in\nhere' }, 'name must be a single line without control or formatting characters'],
      [{ ...google, clientId: ' ' }, 'clientId must be 1 to 255 characters without control characters'],
      [{ ...google, clientId: 'x'.repeat(256) }, 'clientId must be 1 to 255 characters without control characters'],
      [{ ...google, clientSecret: '' }, 'clientSecret must be 1 to 1024 characters without control characters'],
      [{ ...google, clientSecret: SECRET.repeat(40) }, 'clientSecret must be 1 to 1024 characters without control characters'],
      [{ ...google, clientSecret: `${SECRET}\n` }, 'clientSecret must be 1 to 1024 characters without control characters'],
      [{ ...google, scopes: 'email profile' }, 'scopes must include openid for an OpenID Connect provider'],
      [{ ...google, scopes: '  ' }, 'scopes must name at least one scope'],
      [{ ...google, scopes: 'openid "email"' }, 'scopes: "\\"email\\"" is not a scope (printable ASCII without " or \\)'],
      [{ ...google, linkByEmail: 'always' }, 'linkByEmail must be one of verified, never'],
      [{ ...google, createUsers: 'sometimes' }, 'createUsers must be closed, open, or domains: followed by 1 to 100 comma-separated e-mail domains (domains:a.example,b.example)'],
      [{ ...google, createUsers: 'domains:not a domain' }, 'createUsers: "not a domain" is not an e-mail domain (such as example.com)'],
      [{ ...google, groupsClaim: 'the groups' }, 'groupsClaim must be 1 to 64 characters of A-Z, a-z, 0-9, "_", ".", ":", "/" and "-"'],
      [{ ...google, groupMap: { '/Admins': 'admins' } }, "groupMap needs groupsClaim: the claim in which the upstream lists the person's groups"],
      [{ ...google, groupsClaim: 'groups', groupMap: { '/Admins': 'ghosts' } }, 'No group named ghosts in the tenant'],
      [{ ...google, groupsClaim: 'groups', groupMap: { '/Admins': '-admins' } }, 'groupMap: "-admins" (for "/Admins") is not a group name'],
      [{ ...google, groupsClaim: 'groups', groupMap: { '': 'admins' } }, 'groupMap: upstream group names must be 1 to 256 characters without control characters'],
      [{ ...google, groupsClaim: 'groups', groupMap: { '/Admins': 7 } }, 'groupMap: "7" (for "/Admins") is not a group name'],
      ...[['admins'], 'admins', 5].map((groupMap): [Record<string, unknown>, string] => [{ ...google, groupsClaim: 'groups', groupMap }, 'groupMap must be an object of upstream group names to local group names, or null']),
      [{ ...google, groupsClaim: 'groups', groupMap: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`g${i}`, 'admins'])) }, 'groupMap may map at most 100 upstream groups'],
      [{ ...google, type: 'github', trustUpstreamMfa: true }, 'trustUpstreamMfa applies to OpenID Connect providers: github sends no ID token, so no amr'],
      [{ ...google, type: 'github', groupsClaim: 'groups' }, 'groupsClaim applies to OpenID Connect providers: github sends no ID token'],
      [{ ...google, secret: 'x' }, 'Unknown field secret: this request takes type, name, issuer, entraTenant, clientId, clientSecret, scopes, linkByEmail, createUsers, trustUpstreamMfa, groupsClaim, groupMap'],
      [{ ...google, trustUpstreamMfa: 'yes' }, 'trustUpstreamMfa must be a boolean'],
      [{ ...google, clientSecret: 12345 }, 'clientSecret must be a string'],
    ]
    for (const [body, message] of cases) {
      const res = await admin('POST', '/providers', body)
      expect({ body, ...refusal(res) }).toEqual({ body, status: 400, message })
      expect(res.text).not.toContain(SECRET)
    }
    expect((await admin('GET', '/providers')).json.data).toEqual([])
    expect(await auditRows('provider.%')).toEqual([])
  })
})

describe('the client secret', () => {
  it('is in no answer and no audit row, is stored sealed, and opens for the sign-in flow alone', async () => {
    const answers: CallResult[] = []
    const created = await admin('POST', '/providers', google)
    answers.push(created)
    const { providerId } = created.json.data
    answers.push(await admin('GET', '/providers'), await admin('GET', `/providers/${providerId}`))
    const replaced = `${SECRET}-rotated`
    answers.push(await admin('PATCH', `/providers/${providerId}`, { clientSecret: replaced }))
    answers.push(await admin('PATCH', `/providers/${providerId}`, { clientSecret: replaced, scopes: 'email' }))
    for (const answer of answers) {
      expect(answer.text).not.toContain(SECRET)
      expect(answer.text).not.toContain('clientSecret')
    }

    const stored = (await ctx.runtime.store.providers.get(providerId))!
    expect(stored.clientSecretSealed).toStartWith('v1.')
    expect(stored.clientSecretSealed).not.toContain(SECRET)
    expect(providerSecretOf(ctx.runtime, stored)).toBe(replaced)

    const rows = await auditRows('provider.%')
    expect(rows.map((row) => [row.type, row.api_key_id])).toEqual([
      ['provider.created', adminKeyId],
      ['provider.updated', adminKeyId],
    ])
    expect(rows[0]!.detail).toEqual({ providerId, type: 'google', name: 'Google', issuer: 'https://accounts.google.com', clientId: google.clientId, linkByEmail: 'verified' })
    // (that the secret changed, never what it is)
    expect(rows[1]!.detail).toEqual({ providerId, type: 'google', name: 'Google', fields: ['clientSecret'] })
    const everything = await queryDatabase<Record<string, unknown>>(ctx, 'SELECT * FROM audit_events')
    expect(JSON.stringify(everything)).not.toContain(SECRET)
  })
})

describe('PATCH /providers/{id}', () => {
  it('changes what is given and keeps the rest; the type never changes', async () => {
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
    const created = (await admin('POST', '/providers', { ...google, type: 'gitlab' })).json.data
    ctx.clock.advance(60)
    const changed = await admin('PATCH', `/providers/${created.providerId}`, {
      name: 'Company GitLab',
      issuer: 'https://gitlab.example.com/',
      clientId: 'other-app',
      scopes: 'openid email',
      linkByEmail: 'never',
      createUsers: 'closed',
      trustUpstreamMfa: true,
      groupsClaim: 'groups_direct',
      groupMap: { 'acme/ops': 'admins' },
    })
    expect(changed.status).toBe(200)
    expect(changed.json).toEqual({
      statusCode: 200,
      message: 'Identity provider updated',
      data: {
        ...created,
        name: 'Company GitLab',
        issuer: 'https://gitlab.example.com',
        clientId: 'other-app',
        scopes: 'openid email',
        linkByEmail: 'never',
        createUsers: 'closed',
        trustUpstreamMfa: true,
        groupsClaim: 'groups_direct',
        groupMap: { 'acme/ops': 'admins' },
        updatedAt: expect.any(String),
      },
    })
    expect(changed.json.data.updatedAt > created.updatedAt).toBe(true)

    // null and "" clear: back to the tenant's sign-up policy, no map, no claim; a null issuer is gitlab.com again
    const cleared = await admin('PATCH', `/providers/${created.providerId}`, { createUsers: null, groupMap: null, groupsClaim: '', trustUpstreamMfa: false, issuer: null })
    expect(cleared.json.data).toMatchObject({ createUsers: null, groupMap: {}, groupsClaim: null, trustUpstreamMfa: false, issuer: 'https://gitlab.com' })
    expect((await admin('GET', `/providers/${created.providerId}`)).json.data).toEqual(cleared.json.data)

    for (const [body, message] of [
      [{ type: 'github' }, 'type cannot change: create another provider (and delete this one)'],
      [{}, 'Nothing to change: give name, issuer, entraTenant, clientId, clientSecret, scopes, linkByEmail, createUsers, trustUpstreamMfa, groupsClaim or groupMap'],
      [{ entraTenant: 'common' }, 'entraTenant applies to microsoft only'],
      [{ scopes: 'email' }, 'scopes must include openid for an OpenID Connect provider'],
      [{ groupMap: { 'acme/ops': 'admins' } }, "groupMap needs groupsClaim: the claim in which the upstream lists the person's groups"],
    ] as Array<[Record<string, unknown>, string]>) {
      expect({ body, ...refusal(await admin('PATCH', `/providers/${created.providerId}`, body)) }).toEqual({ body, status: 400, message })
    }
    expect((await admin('GET', `/providers/${created.providerId}`)).json.data).toEqual(cleared.json.data)
  })

  it("moves a Microsoft provider to another Entra tenant, and refuses a name another provider has", async () => {
    const microsoft = (await admin('POST', '/providers', { ...google, type: 'microsoft', entraTenant: 'common' })).json.data
    await admin('POST', '/providers', google)
    const moved = await admin('PATCH', `/providers/${microsoft.providerId}`, { entraTenant: 'organizations' })
    expect(moved.json.data.issuer).toBe('https://login.microsoftonline.com/organizations/v2.0')
    expect(refusal(await admin('PATCH', `/providers/${microsoft.providerId}`, { issuer: 'https://login.microsoftonline.com/common/v2.0' }))).toEqual({
      status: 400,
      message: 'issuer is not taken for microsoft: give entraTenant (organizations, common or a tenant id), from which it follows',
    })
    expect(refusal(await admin('PATCH', `/providers/${microsoft.providerId}`, { name: 'GOOGLE' }))).toEqual({ status: 409, message: 'The tenant has a provider named GOOGLE' })
    // its own name, in another case, is no clash
    expect((await admin('PATCH', `/providers/${microsoft.providerId}`, { name: 'MICROSOFT' })).json.data.name).toBe('MICROSOFT')
  })

  it('refuses to move the issuer while identities are linked through the provider (a subject is unique only at its issuer)', async () => {
    const gitlab = (await admin('POST', '/providers', { ...google, type: 'gitlab' })).json.data
    const { userId } = await ctx.addUser()
    await link({ providerId: gitlab.providerId, userId, subject: '42' })
    expect(refusal(await admin('PATCH', `/providers/${gitlab.providerId}`, { issuer: 'https://gitlab.evil.example' }))).toEqual({
      status: 409,
      message: 'The issuer of provider GitLab cannot change while 1 identity is linked through it (a subject is unique only at its issuer): create another provider instead',
    })
    expect((await admin('GET', `/providers/${gitlab.providerId}`)).json.data.issuer).toBe('https://gitlab.com')
    // the same issuer written otherwise is no move; other settings still change
    expect((await admin('PATCH', `/providers/${gitlab.providerId}`, { issuer: 'https://gitlab.com/', clientId: 'rotated-app' })).json.data).toMatchObject({ issuer: 'https://gitlab.com', clientId: 'rotated-app' })
  })
})

describe('DELETE /providers/{id}', () => {
  it('deletes the provider and every identity linked through it, says how many, and keeps their users', async () => {
    const provider = (await admin('POST', '/providers', google)).json.data
    const kept = (await admin('POST', '/providers', { ...google, type: 'gitlab' })).json.data
    const [a, b] = [await ctx.addUser(), await ctx.addUser()]
    await link({ providerId: provider.providerId, userId: a.userId })
    await link({ providerId: provider.providerId, userId: b.userId })
    const other = await link({ providerId: kept.providerId, userId: a.userId })

    const deleted = await admin('DELETE', `/providers/${provider.providerId}`)
    expect(deleted.json).toEqual({ statusCode: 200, message: 'Identity provider deleted', data: { providerId: provider.providerId, identitiesDeleted: 2 } })
    expect((await admin('GET', `/providers/${provider.providerId}`)).status).toBe(404)
    expect((await admin('DELETE', `/providers/${provider.providerId}`)).status).toBe(404)
    expect((await admin('GET', `/users/${a.userId}/identities`)).json.data.map((i: { identityId: string }) => i.identityId)).toEqual([other.id])
    expect((await admin('GET', `/users/${b.userId}/identities`)).json.data).toEqual([])
    expect((await admin('GET', `/users/${b.userId}`)).status).toBe(200)
    const [event] = await auditRows('provider.deleted')
    expect(event).toMatchObject({ api_key_id: adminKeyId, detail: { providerId: provider.providerId, type: 'google', name: 'Google', identitiesDeleted: 2 } })
  })
})

describe('a group an upstream provider maps to', () => {
  it('is neither renamed nor deleted, naming the provider, until the map lets it go', async () => {
    const group = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
    const provider = (await admin('POST', '/providers', { ...google, groupsClaim: 'groups', groupMap: { 'admins@example.com': 'admins' } })).json.data
    const message = (change: string) => `Group admins cannot be ${change}: identity provider Google (${provider.providerId}) maps upstream groups to it`
    expect(refusal(await admin('DELETE', `/groups/${group.id}`))).toEqual({ status: 409, message: message('deleted') })
    expect(refusal(await admin('PATCH', `/groups/${group.id}`, { name: 'ops' }))).toEqual({ status: 409, message: message('renamed') })
    await admin('PATCH', `/providers/${provider.providerId}`, { groupMap: null })
    expect((await admin('DELETE', `/groups/${group.id}`)).status).toBe(200)
  })
})

describe('a user\'s identities', () => {
  it('are listed oldest first with their provider, and one is unlinked with its audit event', async () => {
    const g = (await admin('POST', '/providers', google)).json.data
    const gh = (await admin('POST', '/providers', { ...google, type: 'github' })).json.data
    const { userId } = await ctx.addUser({ email: 'ada@example.com' })
    const first = await link({ providerId: g.providerId, userId, subject: '1077', email: 'ada@example.com' })
    const second = await link({ providerId: gh.providerId, userId, subject: '583231', email: null })
    const usedAt = ctx.clock.now()
    await ctx.runtime.store.identities.recordUse(first.id, 'ada@gmail.example', true, usedAt)

    const listed = await admin('GET', `/users/${userId}/identities`)
    expect(listed.json).toEqual({
      statusCode: 200,
      message: 'Identities',
      data: [
        { identityId: first.id, providerId: g.providerId, providerName: 'Google', providerType: 'google', subject: '1077', email: 'ada@gmail.example', linkedAt: new Date(first.createdAt).toISOString(), lastUsedAt: new Date(usedAt).toISOString() },
        { identityId: second.id, providerId: gh.providerId, providerName: 'GitHub', providerType: 'github', subject: '583231', email: null, linkedAt: new Date(second.createdAt).toISOString(), lastUsedAt: null },
      ],
    })

    const unlinked = await admin('DELETE', `/users/${userId}/identities/${first.id}`)
    expect(unlinked.json).toEqual({ statusCode: 200, message: 'Identity unlinked', data: { userId, identityId: first.id } })
    expect((await admin('GET', `/users/${userId}/identities`)).json.data.map((i: { identityId: string }) => i.identityId)).toEqual([second.id])
    expect((await admin('DELETE', `/users/${userId}/identities/${first.id}`)).status).toBe(404)
    const [event] = await auditRows('identity.unlinked')
    expect(event).toMatchObject({ user_id: userId, api_key_id: adminKeyId, detail: { identityId: first.id, providerId: g.providerId, provider: 'Google', email: 'a***@gmail.example' } })
  })

  it("never unlinks the user's last way to sign in (409), and unlinks it once they have another", async () => {
    const provider = (await admin('POST', '/providers', google)).json.data
    const backup = (await admin('POST', '/providers', { ...google, type: 'gitlab' })).json.data
    // (created by an upstream sign-in: no password, no passkey)
    const { user } = await createUser(ctx.runtime, { tenantId: ctx.tenantId, email: 'upstream@example.com', firstName: 'Up', lastName: 'Stream' })
    const only = await link({ providerId: provider.providerId, userId: user.id })
    expect(refusal(await admin('DELETE', `/users/${user.id}/identities/${only.id}`))).toEqual({
      status: 409,
      message: "This identity is the user's last way to sign in (no password, no passkey, no other identity): it cannot be unlinked until they have another",
    })
    expect((await admin('GET', `/users/${user.id}/identities`)).json.data).toHaveLength(1)
    expect(await auditRows('identity.unlinked')).toEqual([])

    await link({ providerId: backup.providerId, userId: user.id })
    expect((await admin('DELETE', `/users/${user.id}/identities/${only.id}`)).status).toBe(200)
  })

  it("unlinks none of another user's identities through this user's path (404)", async () => {
    const provider = (await admin('POST', '/providers', google)).json.data
    const [a, b] = [await ctx.addUser(), await ctx.addUser()]
    const theirs = await link({ providerId: provider.providerId, userId: b.userId })
    expect((await admin('DELETE', `/users/${a.userId}/identities/${theirs.id}`)).status).toBe(404)
    expect((await admin('DELETE', `/users/${a.userId}/identities/nothing`)).status).toBe(404)
    expect((await admin('GET', `/users/${b.userId}/identities`)).json.data).toHaveLength(1)
  })
})

describe('another tenant', () => {
  it("is invisible to an admin key: its providers, users and identities are 404s, and nothing of theirs changes", async () => {
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const { provider: theirs } = await createProvider(ctx.runtime, other.id, { ...google, type: 'gitlab' })
    const { user: stranger } = await createUser(ctx.runtime, { tenantId: other.id, email: 'stranger@example.com', firstName: 'S', lastName: 'T', password: 'a long enough passphrase' })
    const strangers = await link({ tenantId: other.id, providerId: theirs.providerId, userId: stranger.id })
    const mine = (await admin('POST', '/providers', google)).json.data
    const me = await ctx.addUser()

    expect((await admin('GET', '/providers')).json.data.map((p: { providerId: string }) => p.providerId)).toEqual([mine.providerId])
    for (const [method, path, body] of [
      ['GET', `/providers/${theirs.providerId}`],
      ['PATCH', `/providers/${theirs.providerId}`, { name: 'Taken over', clientSecret: 'attacker-secret' }],
      ['DELETE', `/providers/${theirs.providerId}`],
      ['GET', `/users/${stranger.id}/identities`],
      ['DELETE', `/users/${stranger.id}/identities/${strangers.id}`],
      ['DELETE', `/users/${me.userId}/identities/${strangers.id}`],
    ] as Array<[string, string, unknown?]>) {
      const res = await admin(method, path, body)
      expect({ method, path, ...refusal(res) }).toEqual({ method, path, status: 404, message: 'Resource not found' })
    }
    const stored = (await ctx.runtime.store.providers.get(theirs.providerId))!
    expect({ name: stored.name, secret: providerSecretOf(ctx.runtime, stored) }).toEqual({ name: 'GitLab', secret: SECRET })
    expect((await ctx.runtime.store.identities.listByUser(stranger.id)).map((i) => i.id)).toEqual([strangers.id])
    expect(await auditRows('provider.updated')).toEqual([])
  })

  it('is not reached by a client key (403) or without a key (401)', async () => {
    expect(refusal(await admin('GET', '/providers', undefined, ctx.apiKey))).toEqual({ status: 403, message: 'API key lacks the admin scope' })
    expect((await admin('POST', '/providers', google, null)).status).toBe(401)
  })
})
