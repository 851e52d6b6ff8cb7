// The admin console's applications and identity providers (product spec §27), as a browser
// without JavaScript uses them: an admin's journey through both, a client secret drawn once (on
// the answer to the POST that made it, never on a later page) that works at the token endpoint,
// a provider's secret never drawn at all, another tenant's ids as unknown ones, step-up before a
// change, bad input as a page that names the problem, and each action the same domain function
// (same stored result, same audit event) as its admin API twin.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { auditEvent, CLI_ACTOR } from '../../src/core/audit/audit'
import { createProvider, providerSecretOf } from '../../src/core/federation/providers'
import { createGroup } from '../../src/core/groups/groups'
import { createClient, toClientView } from '../../src/core/oidc/clients'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { PASSWORD, type TestContext } from '../helpers'
import { consoleWorld, CONSOLE_ORIGIN as ORIGIN, FROM_AUTHD, signInAdmin, submitPairs } from '../console-journey'
import { formOn, noticeText, PageBrowser, problemText, type PageAnswer } from '../pages'

let ctx: TestContext
let browser: PageBrowser
let base: string
let admin: { userId: string; email: string }
beforeEach(async () => {
  ;({ ctx, admin, browser, base } = await consoleWorld())
})
afterEach(() => ctx.close())

const adminIn = async (): Promise<void> => void (await signInAdmin(ctx, browser, base, admin.email))
const submitAll = (page: PageAnswer, action: string, fields: Array<[string, string]>) => submitPairs(browser, page, action, fields)

/** The secret an answer page draws, if any. */
const secretOn = (html: string) => /<p class="secret" id="client-secret">([^<]+)<\/p>/.exec(html)?.[1] ?? null
const clientIdOn = (html: string) => /\/admin\/applications\/([0-9a-f-]{36})\/delete/.exec(html)?.[1] ?? null
const providerIdOn = (location: string | null) => /\/admin\/providers\/([0-9a-f-]{36})/.exec(location ?? '')?.[1] ?? null

/** A token from the tenant's token endpoint with the client credentials grant (HTTP Basic). */
const clientCredentials = (clientId: string, secret: string) =>
  ctx.call('POST', `/t/${ctx.tenantId}/token`, {
    apiKey: null,
    rawBody: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`)}` },
  })

const auditOf = async (type: string) => ctx.runtime.store.audit.query({ tenantId: ctx.tenantId, type })

describe('the console’s applications', () => {
  it('registers an OpenID client whose secret is drawn on the answer only, then edits, rotates and deletes it', async () => {
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'staff' })
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'ops' })
    await adminIn()
    const list = await browser.get(`${base}/admin/applications`)
    expect(list.html).toContain('No applications yet.')
    const created = await submitAll(list, '/admin/applications', [
      ['name', 'Wiki'],
      ['redirectUris', 'https://wiki.example.com/callback\r\n\r\n  http://localhost:3000/cb  '],
      ['type', 'confidential'],
      ['firstParty', 'on'],
      ['allowedGroups.0', 'ops'],
      ['allowedGroups.1', 'staff'],
    ])
    expect(created.status).toBe(201)
    const secret = secretOn(created.html)
    expect(secret).toStartWith('authd_cs_')
    expect(created.html).toContain('Store it now')
    const clientId = clientIdOn(created.html)!
    const stored = toClientView((await ctx.runtime.store.oidc.getClient(clientId))!)
    expect(stored).toMatchObject({ name: 'Wiki', type: 'confidential', authMethod: 'client_secret', redirectUris: ['https://wiki.example.com/callback', 'http://localhost:3000/cb'], firstParty: true, allowedGroups: ['ops', 'staff'] })
    const [event] = await auditOf('oidc_client.created')
    expect(event).toMatchObject({ actorUserId: admin.userId, detail: { clientId, name: 'Wiki' } })
    // Never again: not on the client's page, not in the list.
    const page = await browser.get(`${base}/admin/applications/${clientId}`)
    const again = await browser.get(`${base}/admin/applications`)
    for (const later of [page, again]) {
      expect(later.status).toBe(200)
      expect(later.html).not.toContain(secret!)
      expect(secretOn(later.html)).toBeNull()
    }
    expect(again.html).toContain(`href="${base}/admin/applications/${clientId}"`)
    expect(again.html).toContain('https://wiki.example.com/callback')
    expect(page.html).toContain(stored.secretPrefix!)

    // Edit: one redirect URI, only staff.
    const edited = await submitAll(page, `/admin/applications/${clientId}/edit`, [
      ['redirectUris', 'https://wiki.example.com/oidc'],
      ['allowedGroups.1', 'staff'],
    ])
    expect(edited.location).toBe(`${base}/admin/applications/${clientId}?done=updated`)
    expect(noticeText((await browser.get(edited.location!)).html)).toBe('The application was changed.')
    expect(toClientView((await ctx.runtime.store.oidc.getClient(clientId))!)).toMatchObject({ redirectUris: ['https://wiki.example.com/oidc'], allowedGroups: ['staff'] })
    // None ticked: anyone again.
    await submitAll(page, `/admin/applications/${clientId}/edit`, [['redirectUris', 'https://wiki.example.com/oidc']])
    expect((await ctx.runtime.store.oidc.getClient(clientId))!.allowedGroups).toBeNull()
    expect((await auditOf('oidc_client.updated')).every((e) => e.actorUserId === admin.userId)).toBe(true)

    // Rotate: a new secret, on the answer only.
    const rotated = await browser.submit(page, `/admin/applications/${clientId}/rotate`, {}, FROM_AUTHD)
    expect(rotated.status).toBe(200)
    const fresh = secretOn(rotated.html)!
    expect(fresh).toStartWith('authd_cs_')
    expect(fresh).not.toBe(secret)
    expect((await browser.get(`${base}/admin/applications/${clientId}`)).html).not.toContain(fresh)
    expect((await auditOf('oidc_client.secret_rotated'))[0]).toMatchObject({ actorUserId: admin.userId })

    // Delete: the name typed.
    const mistyped = await browser.submit(page, `/admin/applications/${clientId}/delete`, { confirm_name: 'wiki' }, FROM_AUTHD)
    expect(mistyped.status).toBe(400)
    expect(problemText(mistyped.html)).toContain('Type the application’s name exactly')
    expect(await ctx.runtime.store.oidc.getClient(clientId)).not.toBeNull()
    const deleted = await browser.submit(page, `/admin/applications/${clientId}/delete`, { confirm_name: 'Wiki' }, FROM_AUTHD)
    expect(deleted.location).toBe(`${base}/admin/applications?done=deleted`)
    expect(await ctx.runtime.store.oidc.getClient(clientId)).toBeNull()
    expect((await auditOf('oidc_client.deleted'))[0]).toMatchObject({ actorUserId: admin.userId, detail: { clientId } })
    expect((await browser.get(`${base}/admin/applications/${clientId}`)).status).toBe(404)
  })

  it('registers a service client whose secret, shown once, gets a token at the token endpoint', async () => {
    await adminIn()
    const list = await browser.get(`${base}/admin/applications`)
    const created = await browser.submit(list, '/admin/applications/service', { serviceName: 'Billing', scopes: 'invoices:read  invoices:write', audiences: 'https://api.example/\n' }, FROM_AUTHD)
    expect(created.status).toBe(201)
    const secret = secretOn(created.html)!
    const clientId = clientIdOn(created.html)!
    expect(toClientView((await ctx.runtime.store.oidc.getClient(clientId))!)).toMatchObject({ service: true, scopes: ['invoices:read', 'invoices:write'], audiences: ['https://api.example/'] })
    const token = await clientCredentials(clientId, secret)
    expect(token.status).toBe(200)
    expect(token.json).toMatchObject({ token_type: 'Bearer', scope: 'invoices:read invoices:write' })
    expect((await clientCredentials(clientId, 'authd_cs_wrong')).status).toBe(401)
    const listed = await browser.get(`${base}/admin/applications`)
    expect(listed.html).toContain('service (a machine: client credentials)')
    expect(listed.html).not.toContain(secret)
    expect((await browser.get(`${base}/admin/applications/${clientId}`)).html).not.toContain(secret)
    // A public client has none: no secret on its answer, no rotation on its page.
    const spa = await browser.submit(list, '/admin/applications', { name: 'SPA', redirectUris: 'https://spa.example.com/cb', type: 'public' }, FROM_AUTHD)
    expect(spa.status).toBe(201)
    expect(secretOn(spa.html)).toBeNull()
    expect(spa.html).not.toContain('/rotate"')
  })

  it('says what is wrong with the form, a 4xx and nothing made, never a 500', async () => {
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'staff' })
    await adminIn()
    const list = await browser.get(`${base}/admin/applications`)
    const cases: Array<[string, Array<[string, string]>, string]> = [
      ['no redirect URI', [['name', 'Wiki'], ['redirectUris', '  \n ']], 'redirectUris must be a list of 1 to 20 URIs'],
      ['http off localhost', [['name', 'Wiki'], ['redirectUris', 'http://wiki.example.com/cb']], 'redirectUris'],
      ['an unknown group', [['name', 'Wiki'], ['redirectUris', 'https://wiki.example.com/cb'], ['allowedGroups.0', 'ghosts']], 'ghosts'],
      ['no name', [['name', ''], ['redirectUris', 'https://wiki.example.com/cb']], 'name'],
      ['a type that is none', [['name', 'Wiki'], ['redirectUris', 'https://wiki.example.com/cb'], ['type', 'secret']], 'public must be true or false'],
    ]
    for (const [, fields, problem] of cases) {
      const answer = await submitAll(list, '/admin/applications', fields)
      expect({ status: answer.status, problem: problemText(answer.html)?.includes(problem) }).toEqual({ status: 400, problem: true })
      // (what was typed stays in the form)
      expect(answer.html).toContain(fields[1]![1].trim() === '' ? 'name="redirectUris"' : fields[1]![1])
    }
    const service = await browser.submit(list, '/admin/applications/service', { serviceName: 'Batch', scopes: 'openid', audiences: '' }, FROM_AUTHD)
    expect({ status: service.status, problem: problemText(service.html) }).toEqual({ status: 400, problem: expect.stringContaining('openid') })
    expect(await ctx.runtime.store.oidc.listClients(ctx.tenantId)).toEqual([])
    // On a client's page too.
    const { client } = await createClient(ctx.runtime, ctx.tenantId, { name: 'Wiki', redirectUris: ['https://wiki.example.com/cb'] })
    const page = await browser.get(`${base}/admin/applications/${client.id}`)
    const bad = await submitAll(page, `/admin/applications/${client.id}/edit`, [['redirectUris', 'http://wiki.example.com/cb']])
    expect(bad.status).toBe(400)
    expect(problemText(bad.html)).toContain('redirectUris')
    expect(bad.html).toContain('http://wiki.example.com/cb')
    expect((await ctx.runtime.store.oidc.getClient(client.id))!.redirectUris).toEqual(['https://wiki.example.com/cb'])
    const ghost = await submitAll(page, `/admin/applications/${client.id}/edit`, [['redirectUris', 'https://wiki.example.com/cb'], ['allowedGroups.0', 'ghosts']])
    expect({ status: ghost.status, problem: problemText(ghost.html)?.includes('ghosts') }).toEqual({ status: 400, problem: true })
  })

  it('never shows or changes another tenant’s client: a 404', async () => {
    await adminIn()
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const { client: stranger } = await createClient(ctx.runtime, other.id, { name: 'Theirs', redirectUris: ['https://theirs.example.com/cb'] })
    expect((await browser.get(`${base}/admin/applications/${stranger.id}`)).status).toBe(404)
    const hidden = formOn((await browser.get(`${base}/admin/applications`)).html, '/admin/applications').hidden
    for (const [action, fields] of [
      ['edit', { redirectUris: 'https://mine.example.com/cb' }],
      ['rotate', {}],
      ['delete', { confirm_name: 'Theirs' }],
    ] as const) {
      expect((await browser.post(`${base}/admin/applications/${stranger.id}/${action}`, { ...hidden, ...fields }, FROM_AUTHD)).status).toBe(404)
    }
    expect(await ctx.runtime.store.oidc.getClient(stranger.id)).toEqual(stranger)
    expect((await browser.get(`${base}/admin/applications`)).html).not.toContain('Theirs')
  })

  it('asks for a fresh confirmation before registering once 5 minutes have passed', async () => {
    await adminIn()
    ctx.clock.advance(6 * 60)
    const list = await browser.get(`${base}/admin/applications`)
    const asked = await browser.submit(list, '/admin/applications/service', { serviceName: 'Billing', scopes: '', audiences: '' }, FROM_AUTHD)
    expect(asked.status).toBe(403)
    expect(asked.html).toContain('Confirm it is you')
    expect(secretOn(asked.html)).toBeNull()
    expect(await ctx.runtime.store.oidc.listClients(ctx.tenantId)).toEqual([])
    const confirmed = await browser.submit(asked, '/admin/confirm', { password: PASSWORD }, FROM_AUTHD)
    expect(confirmed.location).toBe(`${base}/admin/applications`)
    const made = await browser.submit(await browser.get(confirmed.location!), '/admin/applications/service', { serviceName: 'Billing', scopes: '', audiences: '' }, FROM_AUTHD)
    expect(made.status).toBe(201)
  })
})

const SECRET = 'upstream-client-secret-5b1e9c'

/** Links an identity as the sign-in flow would (the store's own insert, with its event). */
async function link(providerId: string, userId: string) {
  const identity = { id: Bun.randomUUIDv7(), tenantId: ctx.tenantId, providerId, subject: Bun.randomUUIDv7(), userId, email: null, emailVerified: true, createdAt: ctx.clock.now(), lastUsedAt: null }
  expect(await ctx.runtime.store.identities.insert(identity, auditEvent(ctx.runtime, 'identity.linked', CLI_ACTOR, { tenantId: ctx.tenantId, userId, detail: { providerId } }))).toBe(true)
}

describe('the console’s identity providers', () => {
  it('adds a provider, shows the redirect URI to register and never the secret, changes it and deletes it with its identities', async () => {
    await adminIn()
    const list = await browser.get(`${base}/admin/providers`)
    expect(list.html).toContain('No identity providers yet')
    expect(list.html).toContain('type="password"')
    const created = await browser.submit(list, '/admin/providers', { type: 'google', name: '', issuer: '', entraTenant: '', clientId: 'web.apps.googleusercontent.com', clientSecret: SECRET }, FROM_AUTHD)
    expect(created.status).toBe(303)
    expect(created.html).not.toContain(SECRET)
    const providerId = providerIdOn(created.location)!
    const page = await browser.get(created.location!)
    expect(noticeText(page.html)).toStartWith('The identity provider was added.')
    expect(page.html).toContain(`${ORIGIN}/t/${ctx.tenantId}/login/${providerId}/callback`)
    const listed = await browser.get(`${base}/admin/providers`)
    for (const later of [page, listed]) expect(later.html).not.toContain(SECRET)
    expect(listed.html).toContain(`href="${base}/admin/providers/${providerId}"`)
    const stored = (await ctx.runtime.store.providers.get(providerId))!
    expect({ name: stored.name, issuer: stored.issuer, secret: providerSecretOf(ctx.runtime, stored) }).toEqual({ name: 'Google', issuer: 'https://accounts.google.com', secret: SECRET })
    expect((await auditOf('provider.created'))[0]).toMatchObject({ actorUserId: admin.userId, detail: { providerId, type: 'google' } })

    // Only what changed is changed: the name and a new secret (an empty secret field keeps the old one).
    const edited = await browser.submit(page, `/admin/providers/${providerId}/edit`, { name: 'Google Workspace', clientId: 'web.apps.googleusercontent.com', clientSecret: 'a-new-secret' }, FROM_AUTHD)
    expect(edited.location).toBe(`${base}/admin/providers/${providerId}?done=updated`)
    const after = (await ctx.runtime.store.providers.get(providerId))!
    expect({ name: after.name, secret: providerSecretOf(ctx.runtime, after) }).toEqual({ name: 'Google Workspace', secret: 'a-new-secret' })
    expect((await auditOf('provider.updated'))[0]).toMatchObject({ actorUserId: admin.userId, detail: { fields: ['name', 'clientSecret'] } })
    expect((await browser.get(edited.location!)).html).not.toContain('a-new-secret')
    const nothing = await browser.submit(page, `/admin/providers/${providerId}/edit`, { name: 'Google Workspace', clientId: 'web.apps.googleusercontent.com', clientSecret: '' }, FROM_AUTHD)
    expect({ status: nothing.status, problem: problemText(nothing.html)?.includes('Nothing to change') }).toEqual({ status: 400, problem: true })

    // Delete: says how many identities go, asks for the name.
    const ada = await ctx.addUser({ email: 'ada@example.com' })
    await link(providerId, ada.userId)
    await link(providerId, admin.userId)
    const before = await browser.get(`${base}/admin/providers/${providerId}`)
    expect(before.html).toContain('the 2 identities linked through it are deleted')
    const mistyped = await browser.submit(before, `/admin/providers/${providerId}/delete`, { confirm_name: 'Google' }, FROM_AUTHD)
    expect(mistyped.status).toBe(400)
    expect(problemText(mistyped.html)).toContain('Type the identity provider’s name exactly')
    const deleted = await browser.submit(before, `/admin/providers/${providerId}/delete`, { confirm_name: 'Google Workspace' }, FROM_AUTHD)
    expect(deleted.location).toBe(`${base}/admin/providers?done=deleted&count=2`)
    expect(noticeText((await browser.get(deleted.location!)).html)).toBe('The identity provider was deleted, and 2 linked identities with it.')
    expect(await ctx.runtime.store.providers.get(providerId)).toBeNull()
    expect(await ctx.runtime.store.identities.listByUser(ada.userId)).toEqual([])
    expect((await auditOf('provider.deleted'))[0]).toMatchObject({ actorUserId: admin.userId, detail: { identitiesDeleted: 2 } })
  })

  it('says what is wrong with the form, keeps what was typed but the secret, and adds nothing', async () => {
    await adminIn()
    const list = await browser.get(`${base}/admin/providers`)
    const cases: Array<[Record<string, string>, string]> = [
      [{ type: 'oidc', name: '', issuer: 'https://sso.example.com' }, 'name is required for oidc'],
      [{ type: 'oidc', name: 'Keycloak', issuer: 'http://sso.example.com' }, 'issuer must be an https URL'],
      [{ type: 'microsoft', name: '', entraTenant: 'everyone' }, 'entraTenant must be'],
      [{ type: 'google', issuer: 'https://accounts.example.com' }, 'issuer is not taken for google'],
      [{ type: 'saml' }, 'type must be one of'],
    ]
    for (const [fields, problem] of cases) {
      const answer = await browser.submit(list, '/admin/providers', { clientId: 'the-client', clientSecret: SECRET, ...fields }, FROM_AUTHD)
      expect({ status: answer.status, problem: problemText(answer.html)?.includes(problem) }).toEqual({ status: 400, problem: true })
      expect(answer.html).toContain('value="the-client"')
      expect(answer.html).not.toContain(SECRET)
    }
    const noSecret = await browser.submit(list, '/admin/providers', { type: 'github', clientId: 'the-client', clientSecret: '' }, FROM_AUTHD)
    expect(noSecret.status).toBe(400)
    expect(await ctx.runtime.store.providers.list(ctx.tenantId)).toEqual([])
  })

  it('never shows or changes another tenant’s provider: a 404', async () => {
    await adminIn()
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const { provider } = await createProvider(ctx.runtime, other.id, { type: 'github', clientId: 'theirs', clientSecret: SECRET })
    expect((await browser.get(`${base}/admin/providers/${provider.providerId}`)).status).toBe(404)
    const hidden = formOn((await browser.get(`${base}/admin/providers`)).html, '/admin/providers').hidden
    expect((await browser.post(`${base}/admin/providers/${provider.providerId}/edit`, { ...hidden, name: 'Mine', clientId: 'theirs' }, FROM_AUTHD)).status).toBe(404)
    expect((await browser.post(`${base}/admin/providers/${provider.providerId}/delete`, { ...hidden, confirm_name: 'GitHub' }, FROM_AUTHD)).status).toBe(404)
    expect((await ctx.runtime.store.providers.get(provider.providerId))?.name).toBe('GitHub')
  })
})

// Each console action and its admin API twin, done once each way on the same fixture: the
// same stored result and the same audit event (its type and detail, ids aside), so the two
// can never drift into two sets of rules.
describe('the console and the admin API stay one', () => {
  const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
  const normal = (value: unknown) => JSON.parse(JSON.stringify(value ?? null).replace(UUID, '<id>').replace(/authd_cs_[A-Za-z0-9_-]+/g, '<secret>').replace(/"(createdAt|updatedAt)":"[^"]+"/g, '"$1":"<time>"'))
  const clientOf = async (id: string) => { const c = await ctx.runtime.store.oidc.getClient(id); return c && toClientView(c) }
  const providerOf = async (id: string) => { const p = await ctx.runtime.store.providers.get(id); return p && { ...p, clientSecretSealed: providerSecretOf(ctx.runtime, p), createdAt: '<time>', updatedAt: '<time>' } }
  const newClient = async () => (await createClient(ctx.runtime, ctx.tenantId, { name: 'Wiki', redirectUris: ['https://wiki.example.com/cb'] })).client.id
  const newProvider = async () => (await createProvider(ctx.runtime, ctx.tenantId, { type: 'oidc', name: 'Keycloak', issuer: 'https://sso.example.com', clientId: 'kc', clientSecret: SECRET })).provider.providerId
  const form = async (path: string, action: string, fields: Array<[string, string]>) => (await submitAll(await browser.get(`${base}/admin${path}`), action, fields)).status

  type Twin = { action: string; audit: string; setup?: () => Promise<string>; api: (id: string) => Promise<unknown>; console: (id: string) => Promise<number>; stored: (id: string) => Promise<unknown> }
  const twins: Twin[] = [
    {
      action: 'register an OpenID client',
      audit: 'oidc_client.created',
      api: () => adminApi('POST', '/clients', { name: 'Wiki', redirectUris: ['https://wiki.example.com/cb'], public: false, firstParty: true, allowedGroups: ['staff'] }),
      console: () => form('/applications', '/admin/applications', [['name', 'Wiki'], ['redirectUris', 'https://wiki.example.com/cb'], ['type', 'confidential'], ['firstParty', 'on'], ['allowedGroups.0', 'staff']]),
      stored: clientOf,
    },
    {
      action: 'register a public client',
      audit: 'oidc_client.created',
      api: () => adminApi('POST', '/clients', { name: 'SPA', redirectUris: ['https://spa.example.com/cb'], public: true }),
      console: () => form('/applications', '/admin/applications', [['name', 'SPA'], ['redirectUris', 'https://spa.example.com/cb'], ['type', 'public']]),
      stored: clientOf,
    },
    {
      action: 'register a service client',
      audit: 'oidc_client.created',
      api: () => adminApi('POST', '/clients', { name: 'Billing', service: true, scopes: ['invoices:read'], audiences: ['https://api.example/'] }),
      console: () => form('/applications', '/admin/applications/service', [['serviceName', 'Billing'], ['scopes', 'invoices:read'], ['audiences', 'https://api.example/']]),
      stored: clientOf,
    },
    {
      action: 'change redirect URIs and allowed groups',
      audit: 'oidc_client.updated',
      setup: newClient,
      api: (id) => adminApi('PATCH', `/clients/${id}`, { redirectUris: ['https://wiki.example.com/new'], allowedGroups: ['staff'] }),
      console: (id) => form(`/applications/${id}`, `/admin/applications/${id}/edit`, [['redirectUris', 'https://wiki.example.com/new'], ['allowedGroups.0', 'staff']]),
      stored: clientOf,
    },
    { action: 'rotate a secret', audit: 'oidc_client.secret_rotated', setup: newClient, api: (id) => adminApi('POST', `/clients/${id}/rotate-secret`), console: (id) => form(`/applications/${id}`, `/admin/applications/${id}/rotate`, []), stored: clientOf },
    { action: 'delete a client', audit: 'oidc_client.deleted', setup: newClient, api: (id) => adminApi('DELETE', `/clients/${id}`), console: (id) => form(`/applications/${id}`, `/admin/applications/${id}/delete`, [['confirm_name', 'Wiki']]), stored: clientOf },
    {
      action: 'add a provider',
      audit: 'provider.created',
      api: () => adminApi('POST', '/providers', { type: 'microsoft', entraTenant: 'organizations', clientId: 'ms', clientSecret: SECRET }),
      console: () => form('/providers', '/admin/providers', [['type', 'microsoft'], ['name', ''], ['issuer', ''], ['entraTenant', 'organizations'], ['clientId', 'ms'], ['clientSecret', SECRET]]),
      stored: providerOf,
    },
    {
      action: 'change a provider',
      audit: 'provider.updated',
      setup: newProvider,
      api: (id) => adminApi('PATCH', `/providers/${id}`, { issuer: 'https://sso2.example.com', clientSecret: 'new' }),
      console: (id) => form(`/providers/${id}`, `/admin/providers/${id}/edit`, [['name', 'Keycloak'], ['issuer', 'https://sso2.example.com'], ['clientId', 'kc'], ['clientSecret', 'new']]),
      stored: providerOf,
    },
    { action: 'delete a provider', audit: 'provider.deleted', setup: newProvider, api: (id) => adminApi('DELETE', `/providers/${id}`), console: (id) => form(`/providers/${id}`, `/admin/providers/${id}/delete`, [['confirm_name', 'Keycloak']]), stored: providerOf },
  ]

  let adminKey: string
  const adminApi = async (method: string, path: string, body?: unknown) => {
    const res = await ctx.call(method, `/api/v1/admin${path}`, { body, apiKey: adminKey })
    expect(res.status).toBeLessThan(300)
    return res
  }

  it.each(twins.map((twin) => [twin.action, twin] as const))('%s: the same stored result and audit event both ways', async (_, twin) => {
    adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })).key
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'staff' })
    await adminIn()
    const results = []
    for (const way of ['api', 'console'] as const) {
      const id = (await twin.setup?.()) ?? ''
      if (way === 'api') await twin.api(id)
      else expect(await twin.console(id)).toBeOneOf([200, 201, 303])
      const [event] = await auditOf(twin.audit)
      const made = (event!.detail as { clientId?: string; providerId?: string })
      results.push({ actor: way === 'api' ? event!.apiKeyId !== undefined && event!.apiKeyId !== null : event!.actorUserId === admin.userId, detail: normal(event!.detail), stored: normal(await twin.stored(made.clientId ?? made.providerId ?? id)) })
      // (a provider's name is the tenant's once: the second way starts without the first's)
      for (const p of await ctx.runtime.store.providers.list(ctx.tenantId)) await ctx.runtime.store.providers.delete(p.id)
    }
    expect(results[0]!.actor).toBe(true)
    expect(results[1]!.actor).toBe(true)
    expect(results[1]!.detail).toEqual(results[0]!.detail)
    expect(results[1]!.stored).toEqual(results[0]!.stored)
  })
})
