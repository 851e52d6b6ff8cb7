// The admin console's webhooks, audit log and settings (product spec §27), as a browser without
// JavaScript uses them: a webhook secret shown once (on the answer of its creation or
// rotation, never on a page read later), a real delivery sent again, the audit log narrowed by
// its filters (the reading itself audited under the admin's name), the tenant's branding seen
// on its login page; another tenant's ids unknown, step-up asked, bad input a 4xx page; and
// each action the same stored result and audit event as its admin API twin.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { updateTenantPages } from '../../src/core/tenants/tenant-pages'
import { createTenant } from '../../src/core/tenants/tenants'
import { createEndpoint, getEndpoint, listDeliveries } from '../../src/core/webhooks/endpoints'
import { WebhookWorker } from '../../src/core/webhooks/worker'
import { silentLogger } from '../../src/log'
import { PASSWORD, type TestContext } from '../helpers'
import { consoleWorld, CONSOLE_ORIGIN as ORIGIN, FROM_AUTHD, signInAdmin } from '../console-journey'
import { fieldError, formOn, noticeText, PageBrowser, problemText, type PageAnswer } from '../pages'
import { startReceiver, until } from '../webhook-receiver'

let ctx: TestContext
let browser: PageBrowser
let base: string
let admin: { userId: string; email: string }
let worker: WebhookWorker | undefined
const receivers: Array<ReturnType<typeof startReceiver>> = []
beforeEach(async () => {
  ;({ ctx, admin, browser, base } = await consoleWorld({ AUTHD_WEBHOOKS_ALLOW_INSECURE: '1' }))
})
afterEach(async () => {
  await worker?.stop()
  worker = undefined
  for (const receiver of receivers.splice(0)) receiver.stop()
  await ctx.close()
})

const adminIn = async (): Promise<void> => void (await signInAdmin(ctx, browser, base, admin.email))

function startWorker() {
  worker = new WebhookWorker(ctx.runtime, silentLogger, { pollMs: 25 })
  worker.start()
}

const secretOn = (html: string) => /<p class="secret">(whsec_[^<]+)<\/p>/.exec(html)?.[1]
const lastAudit = async (type: string) => (await ctx.runtime.store.audit.query({ tenantId: ctx.tenantId, type, limit: 1 }))[0]
/** The audit table's rows: [time, type, user, actor, ip, detail] as text. */
const auditRows = (html: string) =>
  [...(/<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '').matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => [...row[1]!.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((cell) => cell[1]!.replace(/<[^>]+>/g, '').replace(/&quot;/g, '"')))

/** Adds an endpoint on the console's form: the answer page. */
async function addEndpoint(url: string, events: string[], description = ''): Promise<PageAnswer> {
  const page = await browser.get(`${base}/admin/webhooks`)
  const form = formOn(page.html, '/admin/webhooks')
  const body = new URLSearchParams({ ...form.hidden, url, description })
  for (const event of events) body.append(`event:${event}`, 'on')
  return browser.send('POST', form.action, body.toString(), FROM_AUTHD)
}

describe('the console’s webhooks', () => {
  it('shows the signing secret once, on the answer of its creation and of its rotation, never on a page read later', async () => {
    await adminIn()
    const created = await addEndpoint('https://hooks.example.com/authd?token=abc', ['user.created', 'session.created'], 'CRM')
    expect(created.status).toBe(200)
    const secret = secretOn(created.html)!
    expect(secret).toMatch(/^whsec_/)
    expect(created.html).toContain('Store it now')
    expect(created.headers.get('cache-control')).toBe('no-store')
    const [endpoint] = await ctx.runtime.store.webhooks.listEndpoints(ctx.tenantId)
    expect(endpoint).toMatchObject({ url: 'https://hooks.example.com/authd?token=abc', eventTypes: ['user.created', 'session.created'], description: 'CRM' })
    expect(await lastAudit('webhook_endpoint.created')).toMatchObject({ actorUserId: admin.userId, detail: { endpointId: endpoint!.id } })
    expect(created.html).toContain(`href="${base}/admin/webhooks/${endpoint!.id}"`)

    const list = await browser.get(`${base}/admin/webhooks`)
    const page = await browser.get(`${base}/admin/webhooks/${endpoint!.id}`)
    for (const later of [list, page]) {
      expect(later.status).toBe(200)
      expect(later.html).not.toContain(secret)
      expect(later.html).not.toContain('class="secret"')
    }
    expect(page.html).toContain('user.created, session.created')

    const rotated = await browser.submit(page, `/admin/webhooks/${endpoint!.id}/rotate`, {}, FROM_AUTHD)
    const newSecret = secretOn(rotated.html)!
    expect(newSecret).toMatch(/^whsec_/)
    expect(newSecret).not.toBe(secret)
    expect(await lastAudit('webhook_endpoint.secret_rotated')).toMatchObject({ actorUserId: admin.userId })
    const after = await browser.get(`${base}/admin/webhooks/${endpoint!.id}`)
    expect(after.html).not.toContain(newSecret)
    expect(after.html).toContain('The previous secret signs too until')
  })

  it('shows a real delivery and sends it again with the same webhook-id; stops, resumes and deletes with the URL typed', async () => {
    await adminIn()
    const receiver = startReceiver()
    receivers.push(receiver)
    const created = await addEndpoint(receiver.url, ['user.created'])
    receiver.state.secrets.push(secretOn(created.html)!)
    const [endpoint] = await ctx.runtime.store.webhooks.listEndpoints(ctx.tenantId)
    startWorker()
    await ctx.addUser({ email: 'ada@example.com' })
    // (the admin's own creation, still waiting to be fanned out, goes too)
    await until('delivered', async () => receiver.received.some((r) => r.data.user.email === 'ada@example.com') && (await listDeliveries(ctx.runtime, endpoint!.id, {})).every((d) => d.status === 'succeeded'))
    const sent = receiver.received.length
    const page = await browser.get(`${base}/admin/webhooks/${endpoint!.id}`)
    expect(page.html).toMatch(/<td>user\.created<\/td><td>succeeded<\/td><td>1<\/td><td>200<\/td>/)
    const [delivery] = await listDeliveries(ctx.runtime, endpoint!.id, {})

    const again = await browser.submit(page, `/admin/webhooks/${endpoint!.id}/deliveries/${delivery!.id}/redeliver`, {}, FROM_AUTHD)
    expect(again.location).toBe(`${base}/admin/webhooks/${endpoint!.id}?done=redelivered`)
    expect(noticeText((await browser.get(again.location!)).html)).toBe('The delivery was queued again.')
    await until('delivered again', () => receiver.received.length === sent + 1)
    expect(receiver.received.at(-1)!.id).toBe(delivery!.webhookId)
    expect(receiver.received.at(-1)!.data.user.email).toBe('ada@example.com')
    expect(await lastAudit('webhook_delivery.redelivered')).toMatchObject({ actorUserId: admin.userId, detail: { deliveryId: delivery!.id } })

    const stopped = await browser.submit(page, `/admin/webhooks/${endpoint!.id}/disable`, {}, FROM_AUTHD)
    expect(stopped.location).toBe(`${base}/admin/webhooks/${endpoint!.id}?done=disabled`)
    expect((await getEndpoint(ctx.runtime, endpoint!.id)).enabled).toBe(false)
    const disabledPage = await browser.get(stopped.location!)
    expect(disabledPage.html).toContain('disabled by an admin')
    await browser.submit(disabledPage, `/admin/webhooks/${endpoint!.id}/enable`, {}, FROM_AUTHD)
    expect((await getEndpoint(ctx.runtime, endpoint!.id)).enabled).toBe(true)

    const mistyped = await browser.submit(page, `/admin/webhooks/${endpoint!.id}/delete`, { confirm_url: 'https://elsewhere.example' }, FROM_AUTHD)
    expect(mistyped.status).toBe(400)
    expect(problemText(mistyped.html)).toContain('Type the endpoint’s URL exactly')
    const deleted = await browser.submit(page, `/admin/webhooks/${endpoint!.id}/delete`, { confirm_url: ` ${receiver.url} ` }, FROM_AUTHD)
    expect(deleted.location).toBe(`${base}/admin/webhooks?done=deleted`)
    expect(await ctx.runtime.store.webhooks.getEndpoint(endpoint!.id)).toBeNull()
    expect(await lastAudit('webhook_endpoint.deleted')).toMatchObject({ actorUserId: admin.userId })
  })

  it('answers bad input with a 4xx page that says what is wrong, nothing created', async () => {
    await adminIn()
    const noUrl = await addEndpoint('hooks', ['*'])
    expect(noUrl.status).toBe(400)
    expect(fieldError(noUrl.html, 'url')).toContain('absolute https URL')
    const plain = await addEndpoint('http://hooks.example.com/x', ['*'])
    expect(plain.status).toBe(400)
    expect(fieldError(plain.html, 'url')).toContain('url must be https')
    const noEvents = await addEndpoint('https://hooks.example.com/x', [])
    expect(noEvents.status).toBe(400)
    expect(problemText(noEvents.html)).toContain('at least one event type')
    // (what was typed stays)
    expect(noEvents.html).toContain('value="https://hooks.example.com/x"')
    const unknown = await addEndpoint('https://hooks.example.com/x', ['user.exploded'])
    expect(unknown.status).toBe(400)
    expect(await ctx.runtime.store.webhooks.listEndpoints(ctx.tenantId)).toEqual([])
    const { endpoint } = await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: 'https://hooks.example.com/y' })
    const page = await browser.get(`${base}/admin/webhooks/${endpoint.id}`)
    const hidden = formOn(page.html, `/admin/webhooks/${endpoint.id}/rotate`).hidden
    expect((await browser.post(`${base}/admin/webhooks/${endpoint.id}/deliveries/nope/redeliver`, hidden, FROM_AUTHD)).status).toBe(404)
  })

  it('never shows or changes another tenant’s endpoint: a 404', async () => {
    await adminIn()
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const { endpoint } = await createEndpoint(ctx.runtime, { tenantId: other.id, url: 'https://hooks.example.com/other' })
    expect((await browser.get(`${base}/admin/webhooks/${endpoint.id}`)).status).toBe(404)
    expect((await browser.get(`${base}/admin/webhooks`)).html).not.toContain('hooks.example.com/other')
    const hidden = formOn((await browser.get(`${base}/admin/webhooks`)).html, '/admin/webhooks').hidden
    for (const path of ['rotate', 'disable', 'delete']) {
      const answer = await browser.post(`${base}/admin/webhooks/${endpoint.id}/${path}`, { ...hidden, confirm_url: endpoint.url }, FROM_AUTHD)
      expect(answer.status).toBe(404)
      expect(answer.html).not.toContain('whsec_')
    }
    expect(await ctx.runtime.store.webhooks.getEndpoint(endpoint.id)).toMatchObject({ disabledAt: null, previousSealedSecret: null })
  })

  it('asks for a fresh confirmation before a rotation once 5 minutes have passed, showing no secret until then', async () => {
    await adminIn()
    const { endpoint } = await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: 'https://hooks.example.com/z' })
    ctx.clock.advance(6 * 60)
    const page = await browser.get(`${base}/admin/webhooks/${endpoint.id}`)
    const asked = await browser.submit(page, `/admin/webhooks/${endpoint.id}/rotate`, {}, FROM_AUTHD)
    expect(asked.status).toBe(403)
    expect(asked.html).toContain('Confirm it is you')
    expect(asked.html).not.toContain('whsec_')
    expect(await lastAudit('webhook_endpoint.secret_rotated')).toBeUndefined()
    const confirmed = await browser.submit(asked, '/admin/confirm', { password: PASSWORD }, FROM_AUTHD)
    expect(confirmed.location).toBe(`${base}/admin/webhooks/${endpoint.id}`)
    const rotated = await browser.submit(await browser.get(confirmed.location!), `/admin/webhooks/${endpoint.id}/rotate`, {}, FROM_AUTHD)
    expect(secretOn(rotated.html)).toMatch(/^whsec_/)
  })
})

describe('the console’s audit log', () => {
  it('narrows by type, user and time, newest first, names the console’s admin, and records its own reading', async () => {
    await adminIn()
    const ada = await ctx.addUser({ email: 'ada@example.com' })
    // A change made in the console: its actor is the admin.
    const profile = await browser.get(`${base}/admin/users/${ada.userId}`)
    expect((await browser.submit(profile, `/admin/users/${ada.userId}/disable`, {}, FROM_AUTHD)).status).toBe(303)
    ctx.clock.advance(3600)
    const mark = new Date(ctx.clock.now()).toISOString().slice(0, 16)
    ctx.clock.advance(60)
    const bob = await ctx.addUser({ email: 'bob@example.com' })

    const all = auditRows((await browser.get(`${base}/admin/audit?type=user.created`)).html)
    expect(all.map((row) => row[1])).toEqual(['user.created', 'user.created', 'user.created'])
    expect(all.map((row) => row[2])).toEqual([bob.userId, ada.userId, admin.userId])
    const family = auditRows((await browser.get(`${base}/admin/audit?type=user.*`)).html)
    expect(new Set(family.map((row) => row[1]))).toEqual(new Set(['user.created', 'user.viewed', 'user.disabled']))

    const byAddress = auditRows((await browser.get(`${base}/admin/audit?${new URLSearchParams({ user: 'ADA@example.com' })}`)).html)
    // (the profile's page read its sessions and passkeys too)
    expect(byAddress.map((row) => row[1])).toEqual(['user.disabled', 'passkeys.listed', 'sessions.listed', 'user.viewed', 'user.created'])
    expect(byAddress.map((row) => row[3])).toEqual([...Array(4).fill('console: root@example.com'), 'authd-cli'])
    const byId = auditRows((await browser.get(`${base}/admin/audit?${new URLSearchParams({ user: bob.userId })}`)).html)
    expect(byId.map((row) => row[1])).toEqual(['user.created'])

    const since = auditRows((await browser.get(`${base}/admin/audit?${new URLSearchParams({ type: 'user.created', since: mark })}`)).html)
    expect(since.map((row) => row[2])).toEqual([bob.userId])
    const one = auditRows((await browser.get(`${base}/admin/audit?type=user.created&limit=25`)).html)
    expect(one).toHaveLength(3)

    const read = await lastAudit('audit.read')
    expect(read).toMatchObject({ actorUserId: admin.userId, apiKeyId: null, tenantId: ctx.tenantId })
    // An admin API key's reading is named by its key.
    const { key, apiKey } = await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })
    expect((await ctx.call('GET', '/api/v1/admin/audit?type=audit.read', { apiKey: key })).status).toBe(200)
    const reads = auditRows((await browser.get(`${base}/admin/audit?type=audit.read`)).html)
    // (newest first; this reading is recorded after it read)
    expect(reads[0]![3]).toBe(`API key ${apiKey.id}`)
    expect(reads[1]![3]).toBe('console: root@example.com')
  })

  it('answers a filter it cannot read with a 400 page, an unknown address said on its field, another tenant’s user a 404', async () => {
    await adminIn()
    const badSince = await browser.get(`${base}/admin/audit?since=yesterday`)
    expect(badSince.status).toBe(400)
    expect(fieldError(badSince.html, 'since')).toBe('Give a date and time, such as 2026-11-01T12:00.')
    const badAddress = await browser.get(`${base}/admin/audit?user=${encodeURIComponent('not@an@address')}`)
    expect(badAddress.status).toBe(400)
    const unknown = await browser.get(`${base}/admin/audit?user=${encodeURIComponent('nobody@example.com')}`)
    expect(unknown.status).toBe(400)
    expect(fieldError(unknown.html, 'user')).toBe('No user of this tenant has this address.')
    // A page size it does not offer is the default; a type it does not know matches nothing.
    expect((await browser.get(`${base}/admin/audit?limit=100000`)).status).toBe(200)
    const odd = await browser.get(`${base}/admin/audit?type=${encodeURIComponent('<b>x</b>')}`)
    expect({ status: odd.status, none: odd.html.includes('No events match.'), raw: odd.html.includes('<b>x</b>') }).toEqual({ status: 200, none: true, raw: false })
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const { createUser } = await import('../../src/core/accounts/users')
    const stranger = (await createUser(ctx.runtime, { tenantId: other.id, email: 'x@other.example', firstName: 'X', lastName: 'Y' })).user
    expect((await browser.get(`${base}/admin/audit?user=${stranger.id}`)).status).toBe(404)
  })
})

describe('the console’s settings', () => {
  it('sets the sign-up policy as PATCH /admin/tenant does (signup), a wrong one said on its field', async () => {
    await adminIn()
    const page = await browser.get(`${base}/admin/settings`)
    expect(page.html).toContain('value="closed"')
    const fields = { slug: '', displayName: '', accentColor: '', logoUrl: '', passkeyRpId: 'auth.example.com', passkeyOrigins: ORIGIN }
    const wrong = await browser.submit(page, '/admin/settings', { ...fields, signup: 'sometimes' }, FROM_AUTHD)
    expect({ status: wrong.status, onField: fieldError(wrong.html, 'signup') !== null }).toEqual({ status: 400, onField: true })
    const saved = await browser.submit(page, '/admin/settings', { ...fields, signup: 'domains:acme.example' }, FROM_AUTHD)
    expect(saved.location).toBe(`${base}/admin/settings?done=saved`)
    expect((await ctx.runtime.store.tenants.get(ctx.tenantId))?.signup).toBe('domains:acme.example')
    const [event] = await ctx.runtime.store.audit.query({ tenantId: ctx.tenantId, type: 'tenant.updated' })
    expect(event).toMatchObject({ actorUserId: admin.userId, detail: { signup: 'domains:acme.example' } })
    // The admin API's twin.
    const key = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'ops', scope: 'admin' })).key
    const patched = await ctx.call('PATCH', '/api/v1/admin/tenant', { apiKey: key, body: { signup: 'open' } })
    expect({ status: patched.status, signup: patched.json.data.signup }).toEqual({ status: 200, signup: 'open' })
    expect((await ctx.call('PATCH', '/api/v1/admin/tenant', { apiKey: key, body: { signup: 'sometimes' } })).status).toBe(400)
  })

  it('changes nothing when one field is refused: a new slug and display name stay unwritten beside a wrong sign-up policy (the admin API alike)', async () => {
    await adminIn()
    const fields = { slug: 'moved', displayName: 'Renamed', accentColor: '', logoUrl: '', passkeyRpId: 'auth.example.com', passkeyOrigins: ORIGIN }
    const refused = await browser.submit(await browser.get(`${base}/admin/settings`), '/admin/settings', { ...fields, signup: 'bogus' }, FROM_AUTHD)
    expect(refused.status).toBe(400)
    expect(await ctx.runtime.store.tenants.get(ctx.tenantId)).toMatchObject({ slug: null, displayName: null, signup: 'closed' })
    expect((await new PageBrowser(ctx).get(`${base}/login`)).status).toBe(200)
    expect(await lastAudit('tenant.updated')).toBeUndefined()
    const key = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'ops', scope: 'admin' })).key
    expect((await ctx.call('PATCH', '/api/v1/admin/tenant', { apiKey: key, body: { slug: 'moved', passkeyRpId: 'elsewhere.example' } })).status).toBe(400)
    expect(await ctx.runtime.store.tenants.get(ctx.tenantId)).toMatchObject({ slug: null })
  })

  it('brands the tenant’s pages and moves them to a new slug; the login page shows it', async () => {
    await adminIn()
    const page = await browser.get(`${base}/admin/settings`)
    expect(page.html).toContain(`authd tenants update ${ctx.tenantId} --return-to-origin`)
    expect(page.html).toContain('--forward-auth-domain')
    const saved = await browser.submit(page, '/admin/settings', { slug: 'Acme-Corp', displayName: 'Acme Corporation', accentColor: '#FFD700', logoUrl: '', passkeyRpId: 'auth.example.com', passkeyOrigins: ORIGIN }, FROM_AUTHD)
    expect(saved.location).toBe(`${base}/admin/settings?done=saved`)
    expect(noticeText((await browser.get(saved.location!)).html)).toBe('The settings were saved.')
    const login = await new PageBrowser(ctx).get('/t/acme-corp/login')
    expect(login.html).toContain('<h1>Sign in to Acme Corporation</h1>')
    expect(login.html).toContain('--accent: #ffd700;')
    expect(await lastAudit('tenant.updated')).toMatchObject({ actorUserId: admin.userId, detail: { slug: 'acme-corp', displayName: 'Acme Corporation', accentColor: '#ffd700' } })
    // Reached by its slug, the console follows a new one.
    const bySlug = await browser.get('/t/acme-corp/admin/settings')
    const moved = await browser.submit(bySlug, '/admin/settings', { slug: 'acme', displayName: 'Acme Corporation', accentColor: '#ffd700', logoUrl: '', passkeyRpId: 'auth.example.com', passkeyOrigins: ORIGIN }, FROM_AUTHD)
    expect(moved.location).toBe('/t/acme/admin/settings?done=saved')
    // An emptied field is the default again.
    const cleared = await browser.submit(await browser.get(moved.location!), '/admin/settings', { slug: 'acme', displayName: '', accentColor: '', logoUrl: '', passkeyRpId: 'auth.example.com', passkeyOrigins: ORIGIN }, FROM_AUTHD)
    expect(cleared.status).toBe(303)
    expect(await ctx.runtime.store.tenants.get(ctx.tenantId)).toMatchObject({ slug: 'acme', displayName: null, accentColor: null })
  })

  it('shows a slug taken by another tenant as a 409 on its field, and bad values as 400s, nothing changed', async () => {
    await adminIn()
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    await updateTenantPages(ctx.runtime, other.id, { slug: 'taken' })
    const page = await browser.get(`${base}/admin/settings`)
    const fields = { slug: '', displayName: '', accentColor: '', logoUrl: '', passkeyRpId: 'auth.example.com', passkeyOrigins: ORIGIN }
    const taken = await browser.submit(page, '/admin/settings', { ...fields, slug: 'taken' }, FROM_AUTHD)
    expect(taken.status).toBe(409)
    expect(fieldError(taken.html, 'slug')).toBe('The slug taken belongs to another tenant')
    expect(taken.html).toContain('value="taken"')
    const red = await browser.submit(page, '/admin/settings', { ...fields, accentColor: 'red; } body { display: none' }, FROM_AUTHD)
    expect(red.status).toBe(400)
    expect(fieldError(red.html, 'accentColor')).toBe('accentColor must be a colour written as #rrggbb, such as #0b5fff')
    const logo = await browser.submit(page, '/admin/settings', { ...fields, logoUrl: 'javascript:alert(1)' }, FROM_AUTHD)
    expect(logo.status).toBe(400)
    expect(fieldError(logo.html, 'logoUrl')).toContain('logoUrl must be an https URL')
    const misfit = await browser.submit(page, '/admin/settings', { ...fields, passkeyOrigins: 'https://elsewhere.example' }, FROM_AUTHD)
    expect(misfit.status).toBe(400)
    expect(fieldError(misfit.html, 'passkeyRpId')).toContain('is not the host of https://elsewhere.example')
    expect(await ctx.runtime.store.tenants.get(ctx.tenantId)).toMatchObject({ slug: null, accentColor: null, logoUrl: null, passkeyOrigins: null })
    expect(await lastAudit('tenant.updated')).toBeUndefined()
  })
})

describe('the console and the admin API stay one', () => {
  /** Each action done once in the console and once through its admin API twin: the same stored result, the same audit event type, its actor the admin or the key. */
  const cases: Array<{ name: string; type: string; prepare: () => Promise<string>; console: (id: string) => Promise<unknown>; api: (id: string, key: string) => Promise<unknown>; stored: (id: string) => Promise<unknown> }> = [
    {
      name: 'add an endpoint',
      type: 'webhook_endpoint.created',
      prepare: async () => '',
      console: () => addEndpoint('https://hooks.example.com/twin', ['user.created', 'group.created'], 'twin'),
      api: (_, key) => ctx.call('POST', '/api/v1/admin/webhooks', { apiKey: key, body: { url: 'https://hooks.example.com/twin', events: ['user.created', 'group.created'], description: 'twin' } }),
      stored: async () => (await ctx.runtime.store.webhooks.listEndpoints(ctx.tenantId)).map(({ url, eventTypes, description, disabledAt }) => ({ url, eventTypes, description, disabledAt })),
    },
    ...(['disable', 'enable'] as const).map((action) => ({
      name: `${action} an endpoint`,
      type: 'webhook_endpoint.updated',
      prepare: async () => {
        const { endpoint } = await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: 'https://hooks.example.com/twin' })
        if (action === 'enable') await ctx.runtime.store.webhooks.updateEndpoint(endpoint.id, { disabledAt: 1, disabledReason: 'failing for 5 days' })
        return endpoint.id
      },
      console: async (id: string) => browser.submit(await browser.get(`${base}/admin/webhooks/${id}`), `/admin/webhooks/${id}/${action}`, {}, FROM_AUTHD),
      api: (id: string, key: string) => ctx.call('PATCH', `/api/v1/admin/webhooks/${id}`, { apiKey: key, body: { enabled: action === 'enable' } }),
      stored: async (id: string) => {
        const { enabled, disabledReason, failingSince } = await getEndpoint(ctx.runtime, id)
        return { enabled, disabledReason, failingSince }
      },
    })),
    {
      name: 'rotate a secret',
      type: 'webhook_endpoint.secret_rotated',
      prepare: async () => (await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: 'https://hooks.example.com/twin' })).endpoint.id,
      console: async (id) => browser.submit(await browser.get(`${base}/admin/webhooks/${id}`), `/admin/webhooks/${id}/rotate`, {}, FROM_AUTHD),
      api: (id, key) => ctx.call('POST', `/api/v1/admin/webhooks/${id}/rotate-secret`, { apiKey: key }),
      stored: async (id) => ({ previousSecretUntil: (await getEndpoint(ctx.runtime, id)).previousSecretUntil !== null }),
    },
    {
      name: 'delete an endpoint',
      type: 'webhook_endpoint.deleted',
      prepare: async () => (await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: 'https://hooks.example.com/twin' })).endpoint.id,
      console: async (id) => browser.submit(await browser.get(`${base}/admin/webhooks/${id}`), `/admin/webhooks/${id}/delete`, { confirm_url: 'https://hooks.example.com/twin' }, FROM_AUTHD),
      api: (id, key) => ctx.call('DELETE', `/api/v1/admin/webhooks/${id}`, { apiKey: key }),
      stored: async () => ctx.runtime.store.webhooks.listEndpoints(ctx.tenantId),
    },
    {
      name: 'send a delivery again',
      type: 'webhook_delivery.redelivered',
      prepare: async () => {
        const { endpoint } = await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: 'https://hooks.example.com/twin', events: 'user.created' })
        await ctx.addUser()
        await ctx.runtime.store.webhooks.fanOut(10, ctx.clock.now(), (event) => [{ id: `d-${event.id}`, tenantId: event.tenantId, endpointId: endpoint.id, eventId: event.id, status: 'dead', attempts: 9, nextAttemptAt: 0, leaseUntil: null, giveUpAt: 1, lastAttemptAt: 1, lastStatus: 503, lastError: null, lastResponse: null, createdAt: 0, deliveredAt: null }])
        return endpoint.id
      },
      console: async (id) => {
        const [delivery] = await listDeliveries(ctx.runtime, id, {})
        return browser.submit(await browser.get(`${base}/admin/webhooks/${id}`), `/admin/webhooks/${id}/deliveries/${delivery!.id}/redeliver`, {}, FROM_AUTHD)
      },
      api: async (id, key) => ctx.call('POST', `/api/v1/admin/webhooks/deliveries/${(await listDeliveries(ctx.runtime, id, {}))[0]!.id}/redeliver`, { apiKey: key }),
      stored: async (id) => (await listDeliveries(ctx.runtime, id, {})).filter((d) => d.status !== 'dead').map(({ status, attempts }) => ({ status, attempts })),
    },
    {
      name: 'read the audit log',
      type: 'audit.read',
      prepare: async () => '',
      console: () => browser.get(`${base}/admin/audit?type=user.created&limit=25`),
      api: (_, key) => ctx.call('GET', '/api/v1/admin/audit?type=user.created&limit=25', { apiKey: key }),
      stored: async () => null,
    },
    {
      name: 'change the branding',
      type: 'tenant.updated',
      prepare: async () => '',
      console: async () => browser.submit(await browser.get(`${base}/admin/settings`), '/admin/settings', { slug: 'twin', displayName: 'Twin', accentColor: '#0B6E4F', logoUrl: 'https://cdn.example.com/logo.png', passkeyRpId: 'auth.example.com', passkeyOrigins: ORIGIN }, FROM_AUTHD),
      api: (_, key) => ctx.call('PATCH', '/api/v1/admin/tenant', { apiKey: key, body: { slug: 'twin', displayName: 'Twin', accentColor: '#0B6E4F', logoUrl: 'https://cdn.example.com/logo.png' } }),
      stored: async () => {
        const { slug, displayName, accentColor, logoUrl } = (await ctx.runtime.store.tenants.get(ctx.tenantId))!
        return { slug, displayName, accentColor, logoUrl }
      },
    },
  ]

  for (const action of cases) {
    it(`${action.name}: the same stored result and audit event`, async () => {
      await adminIn()
      const { key, apiKey } = await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'twin', scope: 'admin' })
      const results: Array<{ stored: unknown; event: unknown }> = []
      for (const by of ['console', 'api'] as const) {
        await ctx.runtime.store.webhooks.listEndpoints(ctx.tenantId).then((all) => Promise.all(all.map((e) => ctx.runtime.store.webhooks.deleteEndpoint(e.id))))
        if (action.type === 'tenant.updated') await updateTenantPages(ctx.runtime, ctx.tenantId, { slug: null, displayName: null, accentColor: null, logoUrl: null })
        const id = await action.prepare()
        const answer = (await (by === 'console' ? action.console(id) : action.api(id, key))) as { status: number }
        expect(answer.status).toBeLessThan(400)
        const event = (await lastAudit(action.type))!
        expect(by === 'console' ? { actorUserId: event.actorUserId, apiKeyId: event.apiKeyId } : { actorUserId: event.actorUserId, apiKeyId: event.apiKeyId }).toEqual(by === 'console' ? { actorUserId: admin.userId, apiKeyId: null } : { actorUserId: null, apiKeyId: apiKey.id })
        const detail = { ...(event.detail as Record<string, unknown>) }
        for (const idField of ['endpointId', 'deliveryId']) delete detail[idField]
        results.push({ stored: await action.stored(id), event: { type: event.type, detail } })
      }
      expect(results[0]).toEqual(results[1]!)
    })
  }
})
