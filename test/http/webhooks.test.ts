// Webhooks (product spec §22), delivered to a real receiver on a socket that verifies every
// delivery with the Standard Webhooks library, as an operator's system would: each §22 event
// arrives for the change that made it, a change that rolls back sends nothing, an outage loses
// nothing, a never-answering endpoint delays no other, private addresses are refused, and no
// delivered body carries a secret.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { startReceiver, until } from '../webhook-receiver'
import { auditEvent, CLI_ACTOR } from '../../src/core/audit/audit'
import { newOutboxMessage } from '../../src/core/mail/outbox'
import { createClient, deleteClient } from '../../src/core/oidc/clients'
import { setTenantSignup } from '../../src/core/signup/signup'
import { addMembers, createGroup, deleteGroup, removeMembers, updateGroup } from '../../src/core/groups/groups'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { createUser, deleteUser, prepareUser, setUserDisabled, setUserPassword, updateUser } from '../../src/core/accounts/users'
import { createEndpoint, listDeliveries, redeliver, rotateSecret, updateEndpoint } from '../../src/core/webhooks/endpoints'
import { WEBHOOK_EVENT_TYPES } from '../../src/core/webhooks/events'
import { WebhookWorker } from '../../src/core/webhooks/worker'
import type { Resolver } from '../../src/core/webhooks/address'
import { silentLogger, type Logger } from '../../src/log'
import { openRuntime } from '../../src/runtime'
import { createMetrics } from '../../src/server/app'
import { createTestContext, loginFor, PASSWORD, queryDatabase, type TestContext } from '../helpers'

let ctx: TestContext
let worker: WebhookWorker | undefined
const receivers: Array<ReturnType<typeof startReceiver>> = []

beforeEach(async () => {
  ctx = await createTestContext({ AUTHD_WEBHOOKS_ALLOW_INSECURE: '1' })
})
afterEach(async () => {
  await worker?.stop()
  worker = undefined
  for (const receiver of receivers.splice(0)) receiver.stop()
  await ctx.close()
})

function startWorker(options: { resolve?: Resolver; timeoutMs?: number; logger?: Logger } = {}) {
  worker = new WebhookWorker(ctx.runtime, options.logger ?? silentLogger, { pollMs: 25, ...options })
  worker.start()
  return worker
}

async function subscribe(events: string, receiver = startReceiver()) {
  receivers.push(receiver)
  const { endpoint, secret } = await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: receiver.url, events })
  receiver.state.secrets.push(secret)
  return { receiver, endpoint, secret }
}

/** An IPv4 address, or an IPv6 one (hex groups and colons, :: among them): in a message, not in a JSON of times. */
const ANY_IP_ADDRESS = /\b\d{1,3}(\.\d{1,3}){3}\b|[0-9a-f]{0,4}::[0-9a-f]{0,4}|([0-9a-f]{1,4}:){3,}/i

const deliveryRows = (endpointId: string) =>
  queryDatabase<{ status: string; attempts: number; last_error: string | null; last_status: number | null; last_response: string | null; event_id: string }>(
    ctx,
    'SELECT status, attempts, last_error, last_status, last_response, event_id FROM webhook_deliveries WHERE endpoint_id = $1',
    [endpointId],
  )

describe('events', () => {
  it('every §22 event reaches a receiver that verifies it with the Standard Webhooks library, and no body carries a secret', async () => {
    const { receiver } = await subscribe('*')
    startWorker()
    const secrets: string[] = [PASSWORD]

    const { userId, email } = await ctx.addUser()
    await updateUser(ctx.runtime, userId, { firstName: 'Augusta' })
    const login = await loginFor(ctx, email)
    secrets.push(login.refreshCookie!, login.json.data.response.accessToken)
    await ctx.call('POST', '/api/v1/auth/logout', { cookie: `refreshToken=${login.refreshCookie}`, apiKey: null })
    await setUserDisabled(ctx.runtime, userId, true)
    await setUserDisabled(ctx.runtime, userId, false)
    await setUserPassword(ctx.runtime, userId, 'another long passphrase here')

    // A second factor and a passkey, through the store methods that write them.
    const now = Date.now()
    await ctx.runtime.store.mfa.beginTotp({ userId, sealedSecret: 'sealed', createdAt: now, confirmedAt: null, lastUsedStep: null })
    const mail = newOutboxMessage({ tenantId: ctx.tenantId, kind: 'mfa-enrolled', recipient: email, content: { subject: 's', text: 't', html: 'h' }, now })
    expect(await ctx.runtime.store.mfa.confirmTotp({ userId, step: 1, now, keepSessionId: 'none', recoveryCodes: [{ id: Bun.randomUUIDv7(), userId, codeHash: 'hash', usedAt: null }], mail, audit: auditEvent(ctx.runtime, 'mfa.enrolled', CLI_ACTOR, { userId }) })).toBe(true)
    expect(await ctx.runtime.store.mfa.removeTotp({ userId, audit: auditEvent(ctx.runtime, 'mfa.disabled', CLI_ACTOR, { userId }) })).toBe(true)
    const passkey = { id: 'pk-1', tenantId: ctx.tenantId, userId, credentialId: 'cred', publicKey: 'key', counter: 0, transports: '[]', deviceType: 'multiDevice', backedUp: true, aaguid: 'a', name: 'Laptop', createdAt: now, lastUsedAt: null }
    expect(await ctx.runtime.store.passkeys.insert({ passkey, max: 10, mail: { ...mail, id: Bun.randomUUIDv7(), kind: 'passkey-added' }, audit: auditEvent(ctx.runtime, 'passkey.added', CLI_ACTOR, { userId }) })).toBe('added')
    expect(await ctx.runtime.store.passkeys.remove('pk-1', userId, auditEvent(ctx.runtime, 'passkey.removed', CLI_ACTOR, { userId }))).toBe(true)

    // A sign-up, verified with the code from its mail.
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'open')
    await ctx.call('POST', '/api/v1/auth/signup', { body: { email: 'grace@example.com', password: 'a sign-up passphrase of mine', firstName: 'Grace', lastName: 'Hopper' }, peer: '198.51.100.7' })
    const [codeMail] = await queryDatabase<{ text_body: string }>(ctx, "SELECT text_body FROM mail_outbox WHERE kind = 'signup-code'")
    const code = /\b(\d{6})\b/.exec(codeMail!.text_body)![1]!
    secrets.push(code, 'a sign-up passphrase of mine')
    expect((await ctx.call('POST', '/api/v1/auth/verify-email', { body: { email: 'grace@example.com', otp: code } })).status).toBe(201)

    // A group's life, with the user as a member for a while.
    const group = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'ops' })
    await updateGroup(ctx.runtime, group.id, { description: 'On call' })
    await addMembers(ctx.runtime, group.id, [userId])
    await removeMembers(ctx.runtime, group.id, [userId])
    await deleteGroup(ctx.runtime, group.id)

    // An upstream identity linked and unlinked (product spec §25), through the store methods that write them.
    const provider = { id: 'idp-1', tenantId: ctx.tenantId, type: 'oidc' as const, name: 'Upstream', issuer: 'https://idp.example', clientId: 'authd', clientSecretSealed: 'v1.sealed-client-secret', scopes: 'openid email', linkByEmail: 'never' as const, createUsers: null, trustUpstreamMfa: false, groupsClaim: null, groupMap: null, createdAt: now, updatedAt: now }
    await ctx.runtime.store.providers.insert(provider)
    const identity = { id: 'ident-1', tenantId: ctx.tenantId, providerId: provider.id, subject: 'upstream-subject', userId, email, emailVerified: true, createdAt: now, lastUsedAt: null }
    expect(await ctx.runtime.store.identities.insert(identity, auditEvent(ctx.runtime, 'identity.linked', CLI_ACTOR, { userId }))).toBe(true)
    expect(await ctx.runtime.store.identities.deleteUnlessLast(identity.id, userId, auditEvent(ctx.runtime, 'identity.unlinked', CLI_ACTOR, { userId }))).toBe('deleted')
    secrets.push(provider.clientSecretSealed)

    const [hash] = await queryDatabase<{ password_hash: string }>(ctx, 'SELECT password_hash FROM users WHERE id = $1', [userId])
    secrets.push(hash!.password_hash)
    // (delivered before the erasure, which reduces the user's undelivered events to the id)
    await until('every event so far', () => WEBHOOK_EVENT_TYPES.every((type) => type === 'user.deleted' || receiver.received.some((r) => r.type === type)))
    await deleteUser(ctx.runtime, userId)

    await until('every event type', () => WEBHOOK_EVENT_TYPES.every((type) => receiver.received.some((r) => r.type === type)))
    expect(receiver.state.refused).toBe(0)
    const ofUser = receiver.received.filter((r) => r.data.user?.id === userId).map((r) => r.type)
    expect(ofUser).toEqual(expect.arrayContaining(['user.created', 'user.updated', 'session.created', 'session.ended', 'user.disabled', 'user.enabled', 'user.password_changed', 'user.mfa_enabled', 'user.mfa_disabled', 'passkey.added', 'passkey.removed', 'group.member_added', 'group.member_removed', 'identity.linked', 'identity.unlinked', 'user.deleted']))
    const created = receiver.received.find((r) => r.type === 'user.created' && r.data.user.id === userId)!
    expect(created.data).toEqual({ user: { id: userId, email, firstName: 'Ada', lastName: 'Lovelace', type: 'user' } })
    expect(receiver.received.find((r) => r.type === 'signup.verified')!.data.user).toMatchObject({ email: 'grace@example.com', firstName: 'Grace' })
    expect(receiver.received.find((r) => r.type === 'passkey.added')!.data).toEqual({ passkey: { id: 'pk-1', name: 'Laptop' }, user: { id: userId } })
    for (const type of ['identity.linked', 'identity.unlinked']) {
      expect(receiver.received.find((r) => r.type === type)!.data).toEqual({ identity: { id: 'ident-1', providerId: 'idp-1', subject: 'upstream-subject', email }, user: { id: userId } })
    }
    expect(secrets.every((secret) => typeof secret === 'string' && secret.length >= 6)).toBe(true)
    for (const delivered of receiver.received) for (const secret of secrets) expect(delivered.body).not.toContain(secret)
  })

  it('a session names the OpenID client it was granted to (clientId), and none for authd\'s own', async () => {
    const { receiver } = await subscribe('session.*')
    const { email, userId } = await ctx.addUser()
    await loginFor(ctx, email)
    const { client } = await createClient(ctx.runtime, ctx.tenantId, { name: 'Wiki', redirectUris: ['https://wiki.example/cb'] })
    const now = ctx.clock.now()
    const grant = { id: 'fam-grant', userId, tenantId: ctx.tenantId, rememberMe: false, createdAt: now, expiresAt: now + 60_000, revokedAt: null, revokedReason: null, amr: 'pwd', authAt: now, clientId: client.id, scope: 'openid' }
    const token = { id: 'tok-grant', familyId: 'fam-grant', tokenHash: 'not-a-real-hash', createdAt: now, expiresAt: now + 60_000, spentAt: null, accessKid: null, ip: null, userAgent: null }
    const code = { id: 'code-1', codeHash: 'not-a-real-hash', tenantId: ctx.tenantId, clientId: client.id, userId, sessionId: 'page-session', redirectUri: 'https://wiki.example/cb', codeChallenge: 'x', nonce: null, scope: 'openid', authAt: now, amr: 'pwd', userEpoch: 0, createdAt: now, expiresAt: now + 60_000, spentAt: null, familyId: null }
    await ctx.runtime.store.oidc.insertCode(code)
    const audit = auditEvent(ctx.runtime, 'oidc.grant_started', CLI_ACTOR, { tenantId: ctx.tenantId, userId })
    expect(await ctx.runtime.store.oidc.redeemCode({ codeId: code.id, now, family: grant, firstToken: token, userEpoch: 0, audit })).toBe('redeemed')
    // (a deleted client's grants end with it)
    await deleteClient(ctx.runtime, client.id)
    startWorker()
    await until('three session events', () => receiver.received.length === 3)
    expect(receiver.received.map((r) => [r.type, (r.data as { session: { clientId: string | null } }).session.clientId])).toEqual([
      ['session.created', null],
      ['session.created', client.id],
      ['session.ended', client.id],
    ])
  })

  it("erasing a user reduces their undelivered events to the user's id", async () => {
    const { receiver } = await subscribe('*')
    const { userId, email } = await ctx.addUser({ firstName: 'Erasable' })
    await loginFor(ctx, email)
    await deleteUser(ctx.runtime, userId)
    startWorker()
    await until('user.deleted', () => receiver.received.some((r) => r.type === 'user.deleted'))
    expect(receiver.received.map((r) => r.type)).toEqual(['user.created', 'session.created', 'user.deleted'])
    expect(receiver.received[0]!.data).toEqual({ user: { id: userId } })
    for (const delivered of receiver.received) expect(delivered.body).not.toMatch(/Erasable|user\d+@example/)
  })

  it('a rehash of the same password at login is no password change', async () => {
    const { userId } = await ctx.addUser()
    await ctx.runtime.store.users.setPasswordHash(userId, 'rehashed', Date.now())
    const events = await queryDatabase<{ type: string }>(ctx, 'SELECT type FROM webhook_events ORDER BY created_at')
    expect(events.map((e) => e.type)).toEqual(['user.created'])
  })

  it('a change that rolls back writes no event and sends nothing', async () => {
    const { receiver } = await subscribe('user.*')
    const { email } = await ctx.addUser()
    const tenant = (await ctx.runtime.store.tenants.get(ctx.tenantId))!
    const fresh = (await prepareUser(ctx.runtime, tenant, { email: 'new@example.com', firstName: 'N', lastName: 'N', password: PASSWORD })).user
    const taken = (await prepareUser(ctx.runtime, tenant, { email, firstName: 'T', lastName: 'T', password: PASSWORD })).user
    // The first user is inserted, then the second one's address is taken: the transaction rolls back.
    expect(await ctx.runtime.store.users.insertMany([fresh, taken], [])).toBe(false)
    startWorker()
    await until('the first user.created', () => receiver.received.length === 1)
    await worker!.stop()
    expect(receiver.received.map((r) => r.data.user.email)).toEqual([email])
    expect(await queryDatabase(ctx, "SELECT id FROM webhook_events WHERE data LIKE '%new@example.com%'")).toEqual([])
  })
})

describe('groups', () => {
  /** The types of the events written so far, sorted (events of one millisecond have no order of their own). */
  const eventTypes = async () => (await queryDatabase<{ type: string }>(ctx, 'SELECT type FROM webhook_events')).map((e) => e.type).sort()
  const membershipsOf = async (userId: string) => queryDatabase<{ group_id: string }>(ctx, 'SELECT group_id FROM group_members WHERE user_id = $1', [userId])

  it("a group's creation, change, members and deletion reach the receiver with the group's id, name and description, and the member's id", async () => {
    const { receiver } = await subscribe('group.*')
    startWorker()
    const { userId } = await ctx.addUser()
    const group = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'Admins', description: 'People who run it' })
    await updateGroup(ctx.runtime, group.id, { name: 'ops', description: 'On call' })
    // No change, no event; adding a member twice or removing one who is not in it is none either.
    await updateGroup(ctx.runtime, group.id, { description: 'On call' })
    await addMembers(ctx.runtime, group.id, [userId])
    await addMembers(ctx.runtime, group.id, [userId])
    await removeMembers(ctx.runtime, group.id, [userId])
    await removeMembers(ctx.runtime, group.id, [userId])
    await deleteGroup(ctx.runtime, group.id)

    const types = ['group.created', 'group.updated', 'group.member_added', 'group.member_removed', 'group.deleted']
    await until('the five group events', () => receiver.received.length >= types.length)
    expect(await eventTypes()).toEqual([...types, 'user.created'].sort())
    expect(receiver.state.refused).toBe(0)
    const of = (type: string) => receiver.received.filter((r) => r.type === type).map((r) => r.data)
    expect(of('group.created')).toEqual([{ group: { id: group.id, name: 'admins', description: 'People who run it' } }])
    expect(of('group.updated')).toEqual([{ group: { id: group.id, name: 'ops', description: 'On call' } }])
    expect(of('group.member_added')).toEqual([{ group: { id: group.id, name: 'ops' }, user: { id: userId } }])
    expect(of('group.member_removed')).toEqual([{ group: { id: group.id, name: 'ops' }, user: { id: userId } }])
    expect(of('group.deleted')).toEqual([{ group: { id: group.id, name: 'ops', description: 'On call' } }])
  })

  it('erasing a user removes their memberships and sends user.deleted, no group.member_removed', async () => {
    const { receiver } = await subscribe('*')
    const { userId } = await ctx.addUser()
    const { userId: otherId } = await ctx.addUser()
    const admins = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
    const ops = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'ops' })
    await addMembers(ctx.runtime, admins.id, [userId, otherId])
    await addMembers(ctx.runtime, ops.id, [userId])
    expect(await membershipsOf(userId)).toHaveLength(2)

    await deleteUser(ctx.runtime, userId)
    expect(await membershipsOf(userId)).toEqual([])
    expect((await ctx.runtime.store.groups.members(admins.id, null, 10))).toEqual([otherId])
    expect(await eventTypes()).not.toContain('group.member_removed')
    startWorker()
    await until('user.deleted', () => receiver.received.some((r) => r.type === 'user.deleted'))
    expect(receiver.received.find((r) => r.type === 'user.deleted')!.data).toEqual({ user: { id: userId } })
    expect(receiver.received.map((r) => r.type)).not.toContain('group.member_removed')
  })

  it("deleting a group sends group.deleted and no group.member_removed for its members, who stay in their other groups", async () => {
    const { receiver } = await subscribe('group.*')
    const { userId } = await ctx.addUser()
    const { userId: otherId } = await ctx.addUser()
    const doomed = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'doomed', description: 'Soon gone' })
    const kept = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'kept' })
    await addMembers(ctx.runtime, doomed.id, [userId, otherId])
    await addMembers(ctx.runtime, kept.id, [userId])

    await deleteGroup(ctx.runtime, doomed.id)
    expect(await membershipsOf(userId)).toEqual([{ group_id: kept.id }])
    expect(await membershipsOf(otherId)).toEqual([])
    expect((await eventTypes()).filter((type) => type.startsWith('group.'))).toEqual(['group.created', 'group.created', 'group.deleted', 'group.member_added', 'group.member_added', 'group.member_added'])
    startWorker()
    await until('group.deleted', () => receiver.received.some((r) => r.type === 'group.deleted'))
    expect(receiver.received.find((r) => r.type === 'group.deleted')!.data).toEqual({ group: { id: doomed.id, name: 'doomed', description: 'Soon gone' } })
  })
})

describe('delivery', () => {
  it('an outage of the receiver loses no event: each is retried until it is delivered, under the same webhook-id', async () => {
    const { receiver, endpoint } = await subscribe('user.created')
    receiver.state.mode = 'down'
    startWorker()
    for (let i = 0; i < 12; i++) await ctx.addUser()
    await until('a failed attempt of each', async () => (await deliveryRows(endpoint.id)).filter((d) => d.attempts >= 1 && d.last_status === 503).length === 12)
    receiver.state.mode = 'ok'
    ctx.clock.advance(3600)
    await until('all twelve', () => receiver.ids().size === 12)
    await until('all twelve recorded', async () => (await deliveryRows(endpoint.id)).every((d) => d.status === 'succeeded'))
    const rows = await deliveryRows(endpoint.id)
    expect(receiver.ids()).toEqual(new Set(rows.map((d) => d.event_id)))
  })

  it('an endpoint that never answers delays no other endpoint: it has one delivery in flight, the other gets all of theirs', async () => {
    const { receiver: stuck, endpoint: stuckEndpoint } = await subscribe('user.created')
    stuck.state.mode = 'hang'
    const { receiver: healthy } = await subscribe('user.created')
    // A long attempt timeout, so that the stuck endpoint is still stuck when the test looks.
    startWorker({ timeoutMs: 120_000 })
    for (let i = 0; i < 5; i++) await ctx.addUser()
    await until('the healthy endpoint has all five', () => healthy.ids().size === 5)
    // nor a login
    const { email } = await ctx.addUser()
    expect((await loginFor(ctx, email)).status).toBe(201)
    await until('the healthy endpoint has the sixth', () => healthy.ids().size === 6)
    expect(stuck.state.requests).toBe(1)
    const rows = await deliveryRows(stuckEndpoint.id)
    expect(rows.map((d) => d.status).sort()).toEqual(['pending', 'pending', 'pending', 'pending', 'pending', 'sending'])
  })

  it("one tenant's endpoints that never answer do not stall another tenant's deliveries: a tenant has 2 of the 8 slots", async () => {
    // A tenant whose 19 endpoints never answer, each with a delivery due before the other tenant's.
    const stuck = startReceiver()
    receivers.push(stuck)
    stuck.state.mode = 'hang'
    for (let i = 0; i < 19; i++) await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: `${stuck.url}?n=${i}`, events: 'user.created' })
    const other = await createTenant(ctx.runtime, { name: 'Beta' })
    const healthy = startReceiver()
    receivers.push(healthy)
    const { secret } = await createEndpoint(ctx.runtime, { tenantId: other.id, url: healthy.url, events: 'user.created' })
    healthy.state.secrets.push(secret)
    // A long attempt timeout, so that the stuck tenant's attempts are still in flight when the test looks.
    startWorker({ timeoutMs: 120_000 })
    await ctx.addUser()
    await until("the stuck tenant's attempts in flight", () => stuck.state.requests >= 2)
    const { user } = await createUser(ctx.runtime, { tenantId: other.id, email: 'beta@example.com', firstName: 'Bea', lastName: 'Ta', password: PASSWORD })
    await until("the other tenant's delivery", () => healthy.received.length === 1)
    expect(healthy.received[0]!.data.user.id).toBe(user.id)
    // It arrived while the stuck tenant held its share (2 of 8 slots), and no more.
    expect(stuck.state.requests).toBe(2)
    const rows = await queryDatabase<{ status: string }>(ctx, 'SELECT status FROM webhook_deliveries WHERE tenant_id = $1', [ctx.tenantId])
    expect(rows.filter((d) => d.status === 'sending')).toHaveLength(2)
    expect(rows.filter((d) => d.status === 'pending')).toHaveLength(17)
  })

  it('a slow DNS answer counts against the attempt\'s deadline: the attempt ends in time, failed, to be retried', async () => {
    const { endpoint } = await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: 'https://slow-dns.test/x', events: 'user.created' })
    const asked: string[] = []
    // (a resolver that never answers: the deadline alone ends the attempt)
    startWorker({ timeoutMs: 300, resolve: (name) => (asked.push(name), new Promise<string[]>(() => {})) })
    await ctx.addUser()
    await until('the attempt ended', async () => (await deliveryRows(endpoint.id)).some((d) => d.last_error !== null))
    const [row] = await deliveryRows(endpoint.id)
    expect(asked).toContain('slow-dns.test')
    expect({ status: row!.status, error: row!.last_error }).toEqual({ status: 'pending', error: 'no answer within 0.3 s (resolving slow-dns.test)' })
  })

  it('an attempt that outlasts its claim does not write its outcome over the attempt of the worker that took the delivery over', async () => {
    const receiver = startReceiver()
    receivers.push(receiver)
    const { endpoint, secret } = await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: receiver.url.replace('127.0.0.1', 'localhost'), events: 'user.created' })
    receiver.state.secrets.push(secret)
    // The first worker's attempt hangs in resolution until the test lets it fail; one slot, so
    // that it claims nothing else meanwhile.
    let failResolution = (_: Error) => {}
    const outcomes: string[] = []
    const slow = new WebhookWorker(ctx.runtime, silentLogger, {
      pollMs: 25,
      concurrency: 1,
      timeoutMs: 120_000,
      resolve: () => new Promise<string[]>((_, reject) => (failResolution = reject)),
      observe: (outcome) => outcomes.push(outcome),
    })
    slow.start()
    try {
      await ctx.addUser()
      await until('the slow attempt resolving', async () => (await deliveryRows(endpoint.id))[0]?.status === 'sending')
      // Its lease runs out: another instance's worker takes the delivery over and delivers it.
      ctx.clock.advance(16)
      startWorker({ resolve: async () => ['127.0.0.1'] })
      await until('delivered by the other worker', async () => (await deliveryRows(endpoint.id))[0]?.status === 'succeeded')
      // The slow attempt fails late: its failure is dropped, not recorded over the success.
      failResolution(new Error('getaddrinfo ENOTFOUND localhost'))
      await until('the slow attempt ended', () => outcomes.length === 1)
      expect(outcomes).toEqual(['lost'])
      const [row] = await deliveryRows(endpoint.id)
      expect({ status: row!.status, attempts: Number(row!.attempts), lastError: row!.last_error, lastStatus: row!.last_status }).toEqual({ status: 'succeeded', attempts: 2, lastError: null, lastStatus: 200 })
      expect((await ctx.runtime.store.webhooks.getEndpoint(endpoint.id))!.failingSince).toBeNull()
      expect(receiver.received).toHaveLength(1)
    } finally {
      await slow.stop()
    }
  })

  it('queues nothing for a disabled endpoint, and sends to it again once it is enabled', async () => {
    const { receiver, endpoint } = await subscribe('user.created')
    await updateEndpoint(ctx.runtime, endpoint.id, { enabled: false })
    await ctx.addUser()
    await ctx.addUser()
    startWorker()
    await until('fanned out', async () => (await deliveryRows(endpoint.id)).length === 0 && (await ctx.runtime.store.webhooks.stats()).eventsWaiting === 0)
    // events written while it was disabled are not queued for it
    await updateEndpoint(ctx.runtime, endpoint.id, { enabled: true })
    const { userId } = await ctx.addUser()
    await until('delivered', () => receiver.received.length === 1)
    expect(receiver.received[0]!.data.user.id).toBe(userId)
  })

  it('reaches a receiver named localhost through the system resolver, trying each loopback address it has', async () => {
    const receiver = startReceiver()
    receivers.push(receiver)
    const { secret } = await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: receiver.url.replace('127.0.0.1', 'localhost'), events: 'user.created' })
    receiver.state.secrets.push(secret)
    startWorker()
    await ctx.addUser()
    await until('delivered', () => receiver.received.length === 1)
  })

  it('puts back an attempt cut short by a shutdown, uncounted, and the endpoint not failing', async () => {
    const { receiver, endpoint } = await subscribe('user.created')
    receiver.state.mode = 'hang'
    startWorker({ timeoutMs: 120_000 })
    await ctx.addUser()
    await until('in flight', () => receiver.state.requests === 1)
    await worker!.stop()
    const [row] = await deliveryRows(endpoint.id)
    expect({ status: row!.status, attempts: Number(row!.attempts), lastError: row!.last_error }).toEqual({ status: 'pending', attempts: 0, lastError: null })
    expect((await ctx.runtime.store.webhooks.getEndpoint(endpoint.id))!.failingSince).toBeNull()
    receiver.state.mode = 'ok'
    startWorker()
    await until('delivered after the restart', () => receiver.received.length === 1)
  })

  it('does not follow a redirect, and keeps at most 1 KiB of the answer', async () => {
    const { receiver, endpoint } = await subscribe('user.created')
    receiver.state.mode = 'redirect'
    startWorker()
    await ctx.addUser()
    await until('a failed attempt', async () => (await deliveryRows(endpoint.id)).some((d) => d.last_status === 302))
    const [row] = await deliveryRows(endpoint.id)
    expect(row!.status).toBe('pending')
    expect(row!.last_error).toContain('redirect')
    expect(new TextEncoder().encode(row!.last_response!).length).toBe(1024)
    expect(receiver.state.requests).toBe(1)
  })

  it('a delivery failing for 3 days is dead; redeliver sends it again with the same webhook-id', async () => {
    const { receiver, endpoint } = await subscribe('user.created')
    receiver.state.mode = 'down'
    startWorker()
    await ctx.addUser()
    await until('a failed attempt', async () => (await deliveryRows(endpoint.id)).some((d) => d.attempts === 1 && d.status === 'pending'))
    ctx.clock.advance(3 * 86400 + 60)
    await until('dead', async () => (await deliveryRows(endpoint.id))[0]!.status === 'dead')
    await worker!.stop()
    receiver.state.mode = 'ok'
    const [dead] = await listDeliveries(ctx.runtime, endpoint.id, { status: 'dead' })
    expect((await redeliver(ctx.runtime, dead!.id)).status).toBe('pending')
    await expect(redeliver(ctx.runtime, dead!.id)).rejects.toThrow('still pending')
    startWorker()
    await until('delivered', () => receiver.received.length === 1)
    expect(receiver.received[0]!.id).toBe(dead!.webhookId)
  })

  it('an endpoint failing for 5 days is disabled and the tenant admins are mailed', async () => {
    await ctx.addUser({ type: 'admin', email: 'admin@example.com', firstName: 'Ada' })
    const { receiver, endpoint } = await subscribe('user.created')
    receiver.state.mode = 'down'
    startWorker()
    await ctx.addUser()
    await until('a failed attempt', async () => (await deliveryRows(endpoint.id)).some((d) => d.last_status === 503))
    ctx.clock.advance(5 * 86400)
    await ctx.addUser()
    await until('disabled', async () => (await ctx.runtime.store.webhooks.getEndpoint(endpoint.id))!.disabledAt !== null)
    const mails = await queryDatabase<{ recipient: string; subject: string }>(ctx, "SELECT recipient, subject FROM mail_outbox WHERE kind = 'webhook-disabled'")
    expect(mails).toEqual([{ recipient: 'admin@example.com', subject: 'Acme: a webhook endpoint was disabled' }])
    const [audited] = await ctx.runtime.store.audit.query({ type: 'webhook_endpoint.disabled' })
    expect(audited!.detail).toMatchObject({ endpointId: endpoint.id, adminsMailed: 1 })
  })

  it('after a secret rotation each delivery carries both signatures, each verifying with its own secret', async () => {
    const { receiver, endpoint, secret: previous } = await subscribe('user.created')
    const { secret } = await rotateSecret(ctx.runtime, endpoint.id)
    receiver.state.secrets = [secret]
    startWorker()
    await ctx.addUser()
    await until('delivered', () => receiver.received.length === 1)
    const [delivered] = receiver.received
    expect(delivered!.signatures).toHaveLength(2)
    const headers = (signature: string) => ({ 'webhook-id': delivered!.id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': signature })
    expect(() => new Webhook(previous).verify(delivered!.body, headers(delivered!.signatures.join(' ')))).not.toThrow()
    expect(() => new Webhook(secret).verify(delivered!.body, headers(delivered!.signatures[0]!))).not.toThrow()
    // After 24 hours the previous secret signs no more.
    ctx.clock.advance(24 * 3600 + 1)
    await ctx.addUser()
    await until('delivered', () => receiver.received.length === 2)
    expect(receiver.received[1]!.signatures).toHaveLength(1)
  })

  it('is measured: attempts by outcome, the queue, and the age of the oldest undelivered delivery', async () => {
    const { receiver } = await subscribe('user.created')
    receiver.state.mode = 'down'
    const metrics = createMetrics(ctx.runtime)
    worker = new WebhookWorker(ctx.runtime, silentLogger, { pollMs: 25, observe: (outcome) => metrics.webhookDeliveries.inc({ outcome }) })
    worker.start()
    await ctx.addUser()
    await until('a failed attempt', () => receiver.state.requests >= 1)
    ctx.clock.advance(120)
    await until('counted', async () => (await metrics.render()).includes('authd_webhook_deliveries_total{outcome="failed"}'))
    await worker.stop() // (an attempt cut short by the stop is queued again: still pending)
    const text = await metrics.render()
    expect(text).toMatch(/^authd_webhook_deliveries\{status="pending"\} 1$/m)
    expect(Number(/^authd_webhook_oldest_pending_age_seconds (\S+)$/m.exec(text)![1])).toBeGreaterThanOrEqual(120)
    expect(text).toMatch(/^authd_webhook_events_waiting 0$/m)
  })
})

describe('address safety', () => {
  it('refuses http to anything but loopback, and http at all without AUTHD_WEBHOOKS_ALLOW_INSECURE', async () => {
    await expect(createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: 'http://hooks.example.com/x', events: '*' })).rejects.toThrow('url must be https')
    await expect(createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: 'ftp://hooks.example.com/x', events: '*' })).rejects.toThrow('https')
    await expect(createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: 'https://hooks.example.com/x', events: 'user.nope' })).rejects.toThrow('no event type')
    const strict = await createTestContext()
    try {
      await expect(createEndpoint(strict.runtime, { tenantId: strict.tenantId, url: 'http://127.0.0.1:9/x', events: '*' })).rejects.toThrow('url must be https')
    } finally {
      await strict.close()
    }
  })

  it.each([
    ['a private address', '10.1.2.3'],
    ['the cloud metadata address', '169.254.169.254'],
    ['loopback', '127.0.0.1'],
    ['IPv6 loopback', '::1'],
  ])('refuses a name that resolves to %s, at delivery, and tells the tenant no address: only the log has it', async (_, address) => {
    const adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })).key
    // (from a public peer: the audit log records the caller's address, which is no resolved one)
    const created = await ctx.call('POST', '/api/v1/admin/webhooks', { apiKey: adminKey, body: { url: 'https://hooks.attacker.test/x', events: 'user.created' }, peer: '198.51.100.7' })
    const endpointId = created.json.data.id as string
    const asked: string[] = []
    const logged: Array<Record<string, unknown>> = []
    startWorker({ resolve: async (name) => (asked.push(name), [address]), logger: { log: (level, msg, fields) => logged.push({ level, msg, ...fields }) } })
    await ctx.addUser()
    await until('a refused attempt', async () => (await deliveryRows(endpointId)).some((d) => d.last_error !== null))
    expect(asked).toContain('hooks.attacker.test')
    // What the tenant reads: the deliveries it lists (the stored error), its audit log.
    const listed = await ctx.call('GET', `/api/v1/admin/webhooks/${endpointId}/deliveries`, { apiKey: adminKey })
    expect(listed.json.data[0].lastError).toBe('refused: hooks.attacker.test does not resolve to a public address')
    const audit = await ctx.call('GET', '/api/v1/admin/audit?limit=1000', { apiKey: adminKey })
    expect(listed.json.data[0].lastError).not.toMatch(ANY_IP_ADDRESS)
    for (const text of [listed.text, audit.text, JSON.stringify(await deliveryRows(endpointId))]) expect(text).not.toContain(address)
    // What the operator reads: the log line names it.
    expect(logged.find((line) => line.deliveryId !== undefined && line.refusedAddress !== undefined)).toMatchObject({ level: 'warn', error: listed.json.data[0].lastError, refusedAddress: address, refusedRange: expect.any(String) })
  })

  it('tells the tenant the same for a name that does not exist as for an internal one: it cannot learn which names the operator\'s DNS has', async () => {
    const adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })).key
    const endpointOf = async (url: string) => (await ctx.call('POST', '/api/v1/admin/webhooks', { apiKey: adminKey, body: { url, events: 'user.created' } })).json.data.id as string
    const internal = await endpointOf('https://vm.test/x')
    const missing = await endpointOf('https://nosuch.test/x')
    const logged: Array<Record<string, unknown>> = []
    const resolve = async (name: string) => {
      if (name === 'vm.test') return ['10.1.2.3']
      throw new Error(`getaddrinfo ENOTFOUND ${name}`)
    }
    startWorker({ resolve, logger: { log: (level, msg, fields) => logged.push({ level, msg, ...fields }) } })
    await ctx.addUser()
    await until('both refused', async () => (await deliveryRows(internal))[0]?.last_error != null && (await deliveryRows(missing))[0]?.last_error != null)
    const lastError = async (id: string) => (await ctx.call('GET', `/api/v1/admin/webhooks/${id}/deliveries`, { apiKey: adminKey })).json.data[0].lastError
    expect([await lastError(internal), await lastError(missing)]).toEqual(['refused: vm.test does not resolve to a public address', 'refused: nosuch.test does not resolve to a public address'])
    // The operator's log says why.
    expect(logged.find((line) => line.error === 'refused: nosuch.test does not resolve to a public address')).toMatchObject({ refusedBecause: 'cannot resolve: getaddrinfo ENOTFOUND nosuch.test' })
  })

  it('refuses, at delivery, an http endpoint made while AUTHD_WEBHOOKS_ALLOW_INSECURE was on, once it is off: nothing reaches the receiver', async () => {
    const { receiver, endpoint } = await subscribe('user.created')
    expect(endpoint.url).toStartWith('http://127.0.0.1:')
    // authd started again with the setting off: a runtime of its own on the same database.
    const strict = await openRuntime({ ...ctx.runtime.config, webhooks: { ...ctx.runtime.config.webhooks, allowInsecure: false } }, { clock: ctx.clock })
    const strictWorker = new WebhookWorker(strict, silentLogger, { pollMs: 25 })
    try {
      strictWorker.start()
      await ctx.addUser()
      await until('an attempt', async () => (await deliveryRows(endpoint.id)).some((d) => d.attempts > 0 && d.status !== 'sending'))
      expect((await deliveryRows(endpoint.id))[0]).toMatchObject({ status: 'pending', last_status: null, last_error: 'refused: http is allowed only to loopback, with AUTHD_WEBHOOKS_ALLOW_INSECURE=1' })
      expect({ requests: receiver.state.requests, received: receiver.received.length }).toEqual({ requests: 0, received: 0 })
    } finally {
      await strictWorker.stop()
      strict.close()
    }
  })

  it('tells the tenant no address when it refuses to create an endpoint', async () => {
    const adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })).key
    for (const url of ['http://hooks.attacker.test/x', 'http://10.1.2.3/x', 'ftp://169.254.169.254/x']) {
      const refused = await ctx.call('POST', '/api/v1/admin/webhooks', { apiKey: adminKey, body: { url, events: '*' } })
      expect(refused.status).toBe(400)
      expect(refused.json.message).not.toMatch(ANY_IP_ADDRESS)
    }
  })

  it('lets AUTHD_WEBHOOKS_ALLOW_PRIVATE allow the ranges it names, and only those', async () => {
    const { loadConfig } = await import('../../src/config')
    expect(() => loadConfig({ AUTHD_WEBHOOKS_ALLOW_PRIVATE: 'intranet' })).toThrow('AUTHD_WEBHOOKS_ALLOW_PRIVATE must list IP addresses or CIDRs')
    expect(() => loadConfig({ AUTHD_WEBHOOKS_ALLOW_INSECURE: 'yes' })).toThrow('AUTHD_WEBHOOKS_ALLOW_INSECURE must be 1 or 0')
    const allowing = await createTestContext({ AUTHD_WEBHOOKS_ALLOW_PRIVATE: '10.0.0.0/8' })
    const local = new WebhookWorker(allowing.runtime, silentLogger, { pollMs: 25, timeoutMs: 300, resolve: async (name) => [name === 'crm.internal.test' ? '10.1.2.3' : '169.254.169.254'] })
    try {
      const inside = (await createEndpoint(allowing.runtime, { tenantId: allowing.tenantId, url: 'https://crm.internal.test/x', events: 'user.created' })).endpoint
      const metadata = (await createEndpoint(allowing.runtime, { tenantId: allowing.tenantId, url: 'https://metadata.test/x', events: 'user.created' })).endpoint
      local.start()
      await allowing.addUser()
      const lastError = async (id: string) => (await queryDatabase<{ last_error: string | null }>(allowing, 'SELECT last_error FROM webhook_deliveries WHERE endpoint_id = $1', [id]))[0]?.last_error ?? null
      await until('both attempted', async () => (await lastError(inside.id)) !== null && (await lastError(metadata.id)) !== null)
      expect(await lastError(inside.id)).not.toContain('refused')
      expect(await lastError(metadata.id)).toBe('refused: metadata.test does not resolve to a public address')
    } finally {
      await local.stop()
      await allowing.close()
    }
  })
})
