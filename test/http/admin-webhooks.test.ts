// Webhook endpoints under the admin API and the CLI (product spec §22): the secret is shown
// once, never listed; an admin key sees and changes only its own tenant's endpoints; bad input
// is a 4xx that says what is wrong.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { createEndpoint } from '../../src/core/webhooks/endpoints'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createTestContext, databaseEnv, queryDatabase, type TestContext } from '../helpers'

const WEBHOOKS = '/api/v1/admin/webhooks'
let ctx: TestContext
let adminKey: string
beforeEach(async () => {
  ctx = await createTestContext()
  adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })).key
})
afterEach(() => ctx.close())

const admin = (method: string, path: string, body?: unknown, key: string | null = adminKey) => ctx.call(method, `${WEBHOOKS}${path}`, { body, apiKey: key })

describe('the admin API', () => {
  it('creates an endpoint with its secret once, lists it without, updates, rotates and deletes it', async () => {
    const created = await admin('POST', '', { url: 'https://hooks.example.com/authd', events: 'user.*,session.created', description: 'CRM' })
    expect(created.status).toBe(201)
    const { secret, ...endpoint } = created.json.data
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(endpoint).toMatchObject({ url: 'https://hooks.example.com/authd', events: ['user.*', 'session.created'], description: 'CRM', enabled: true, tenantId: ctx.tenantId })

    const listed = await admin('GET', '')
    expect(listed.json.data).toEqual([endpoint])
    expect(listed.text).not.toContain(secret)
    const [stored] = await queryDatabase<{ sealed_secret: string }>(ctx, 'SELECT sealed_secret FROM webhook_endpoints')
    expect(stored!.sealed_secret).toStartWith('v1.')
    expect(stored!.sealed_secret).not.toContain(secret.slice(6, 20))

    const updated = await admin('PATCH', `/${endpoint.id}`, { events: ['*'], enabled: false })
    expect(updated.json.data).toMatchObject({ events: ['*'], enabled: false, disabledReason: 'disabled by an admin' })

    const rotated = await admin('POST', `/${endpoint.id}/rotate-secret`)
    expect(rotated.json.data.secret).toMatch(/^whsec_/)
    expect(rotated.json.data.secret).not.toBe(secret)
    expect(Date.parse(rotated.json.data.previousSecretUntil) - Date.now()).toBeGreaterThan(23 * 3600_000)

    expect((await admin('GET', `/${endpoint.id}/deliveries`)).json.data).toEqual([])
    expect((await admin('DELETE', `/${endpoint.id}`)).status).toBe(200)
    expect((await admin('GET', `/${endpoint.id}`)).status).toBe(404)
  })

  it.each([
    ['an http URL', { url: 'http://hooks.example.com/x', events: '*' }, 'url must be https'],
    ['a URL with a password', { url: 'https://u:p@hooks.example.com/x', events: '*' }, 'must not carry a user name or password'],
    ['no URL at all', { url: 'hooks', events: '*' }, 'absolute https URL'],
    ['an unknown event', { url: 'https://hooks.example.com/x', events: 'user.exploded' }, 'is no event type or pattern'],
    ['no events', { url: 'https://hooks.example.com/x', events: ' , ' }, 'at least one event type'],
  ])('answers 400 to %s, saying what is wrong', async (_, body, message) => {
    const res = await admin('POST', '', body)
    expect(res.status).toBe(400)
    expect(res.json.message).toContain(message)
  })

  it("keeps an endpoint URL's query (where a receiver may take a token) out of the audit log", async () => {
    const created = await admin('POST', '', { url: 'https://hooks.example.com/services/T0/SECRETPATH?key=receiver-token-123' })
    // (events default to every event, as in the CLI)
    expect(created.json.data).toMatchObject({ url: 'https://hooks.example.com/services/T0/SECRETPATH?key=receiver-token-123', events: ['*'] })
    expect((await admin('DELETE', `/${created.json.data.id}`)).status).toBe(200)
    const rows = await queryDatabase<{ type: string; detail: string }>(ctx, "SELECT type, detail FROM audit_events WHERE type LIKE 'webhook_endpoint.%' ORDER BY id")
    expect(rows.map((r) => r.type)).toEqual(['webhook_endpoint.created', 'webhook_endpoint.deleted'])
    for (const row of rows) {
      expect(String(row.detail)).not.toMatch(/receiver-token-123|SECRETPATH/)
      expect(String(row.detail)).toContain('https://hooks.example.com/…')
    }
  })

  it.each([
    ['a #fragment', 'https://hooks.example.com/authd#x', 'url must not have a #fragment (it is never sent)'],
    ['port 0', 'https://hooks.example.com:0/authd', 'url must not name port 0'],
    ['a path that percent-encoding makes too long', `https://hooks.example.com/${'é'.repeat(1000)}`, 'url must be at most 2048 characters'],
  ])('refuses a URL with %s', async (_, url, message) => {
    expect((await admin('POST', '', { url })).json).toEqual({ statusCode: 400, message, data: null })
  })

  it('says what events must be when it is neither a string nor a list', async () => {
    expect((await admin('POST', '', { url: 'https://hooks.example.com/authd', events: 5 })).json).toEqual({ statusCode: 400, message: 'events must be a string or array', data: null })
    // A list with something else in it: the element is named (the list is a list).
    expect((await admin('POST', '', { url: 'https://hooks.example.com/authd', events: [1] })).json).toEqual({ statusCode: 400, message: 'events.0 must be a string', data: null })
    expect((await admin('POST', '', { url: 'https://hooks.example.com/authd', events: ['user.created', null] })).json).toEqual({ statusCode: 400, message: 'events.1 must be a string', data: null })
  })

  it('answers 400 to a bad status or limit of deliveries, 409 to redelivering a pending delivery, 404 to an unknown one', async () => {
    const { endpoint } = await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: 'https://hooks.example.com/x', events: '*' })
    expect((await admin('GET', `/${endpoint.id}/deliveries?status=lost`)).status).toBe(400)
    expect((await admin('GET', `/${endpoint.id}/deliveries?limit=0`)).status).toBe(400)
    expect((await admin('GET', `/${endpoint.id}/deliveries?limit=x`)).status).toBe(400)
    expect((await admin('POST', '/deliveries/nope/redeliver')).status).toBe(404)
    await ctx.addUser()
    await ctx.runtime.store.webhooks.fanOut(10, Date.now(), (event, endpoints) => (endpoints.length ? [{ id: 'd1', tenantId: event.tenantId, endpointId: endpoint.id, eventId: event.id, status: 'pending', attempts: 0, nextAttemptAt: 0, leaseUntil: null, giveUpAt: 1, lastAttemptAt: null, lastStatus: null, lastError: null, lastResponse: null, createdAt: 0, deliveredAt: null }] : []))
    const res = await admin('POST', '/deliveries/d1/redeliver')
    expect(res.status).toBe(409)
    expect((await admin('GET', `/${endpoint.id}/deliveries`)).json.data).toMatchObject([{ id: 'd1', eventType: 'user.created', status: 'pending' }])
  })

  it("sees nothing of another tenant's endpoints, and refuses a client key", async () => {
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const { endpoint } = await createEndpoint(ctx.runtime, { tenantId: other.id, url: 'https://hooks.example.com/other', events: '*' })
    expect((await admin('GET', '')).json.data).toEqual([])
    for (const [method, path, body] of [
      ['GET', `/${endpoint.id}`],
      ['PATCH', `/${endpoint.id}`, { description: 'mine now' }],
      ['POST', `/${endpoint.id}/rotate-secret`],
      ['DELETE', `/${endpoint.id}`],
      ['GET', `/${endpoint.id}/deliveries`],
    ] as Array<[string, string, unknown?]>) {
      const res = await admin(method, path, body)
      expect(res.status).toBe(404)
    }
    expect((await ctx.runtime.store.webhooks.getEndpoint(endpoint.id))!.description).toBe('')
    expect((await admin('GET', '', undefined, ctx.apiKey)).status).toBe(403)
  })
})

describe('authd webhooks', () => {
  it('creates (printing the secret once), lists, updates, rotates, shows deliveries and deletes, as the API does', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, databaseEnv(ctx))
    const created = await authd(['--json', 'webhooks', 'create', '--tenant', ctx.tenantId, '--url', 'https://hooks.example.com/cli', '--events', 'user.*,session.created'])
    expect(created.code).toBe(0)
    expect(created.json.secret).toMatch(/^whsec_/)
    const id = created.json.id
    const listed = await authd(['--json', 'webhooks', 'list', '--tenant', ctx.tenantId])
    expect(listed.json).toEqual((await admin('GET', '')).json.data)
    expect(listed.stdout).not.toContain(created.json.secret)
    expect((await authd(['--json', 'webhooks', 'update', id, '--events', 'user.created'])).json.events).toEqual(['user.created'])
    const rotated = await authd(['webhooks', 'rotate-secret', id])
    expect(rotated.stdout).toMatch(/secret: whsec_/)
    expect((await authd(['--json', 'webhooks', 'deliveries', id])).json).toEqual([])
    const bad = await authd(['webhooks', 'create', '--tenant', ctx.tenantId, '--url', 'http://hooks.example.com/x'])
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toContain('url must be https')
    expect((await authd(['--json', 'webhooks', 'delete', id])).json).toEqual({ id })
    expect((await admin('GET', '')).json.data).toEqual([])
  })
})
