// Managing a tenant's webhook endpoints (the CLI and the admin API call these): the secret is
// made here, shown once, and stored only sealed. An admin API key sees and changes only its
// own tenant's endpoints; another tenant's ids are answered as unknown ones.
import { actorSees, audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { badRequest, conflict, notFoundById } from '../errors'
import { checkEndpointUrl } from './address'
import { RETRY_FOR_MS } from './delivery'
import { parseEventPatterns } from './events'
import { newSecret, PREVIOUS_SECRET_WINDOW_MS, sealSecret } from './signing'
import type { WebhookDelivery, WebhookDeliveryStatus, WebhookEndpoint } from './types'

type EndpointDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'serverKeys'>

const MAX_DESCRIPTION = 200
const MAX_ENDPOINTS_PER_TENANT = 20
/** An endpoint's URL as the audit log keeps it: its origin only. A receiver may take a token of
 *  its own in the path or the query (Slack's and others' hook URLs are secrets in their path),
 *  which the audit log must not hold; the event names the endpoint by its id. */
const auditedUrl = (url: string) => `${new URL(url).origin}/…`
const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString())

/** An endpoint as the CLI and the API show it: never its secret. */
export interface EndpointView {
  id: string
  tenantId: string
  url: string
  events: string[]
  description: string
  enabled: boolean
  disabledAt: string | null
  disabledReason: string | null
  failingSince: string | null
  /** Until when the previous secret still signs too, after a rotation. */
  previousSecretUntil: string | null
  createdAt: string
  updatedAt: string
}

export const toEndpointView = (e: WebhookEndpoint, now: number): EndpointView => ({
  id: e.id,
  tenantId: e.tenantId,
  url: e.url,
  events: e.eventTypes,
  description: e.description,
  enabled: e.disabledAt === null,
  disabledAt: iso(e.disabledAt),
  disabledReason: e.disabledReason,
  failingSince: iso(e.failingSince),
  previousSecretUntil: e.previousSecretUntil !== null && e.previousSecretUntil > now ? iso(e.previousSecretUntil) : null,
  createdAt: iso(e.createdAt)!,
  updatedAt: iso(e.updatedAt)!,
})

export interface DeliveryView {
  id: string
  /** The `webhook-id` header: the event's id, the same on every attempt and every endpoint. */
  webhookId: string
  endpointId: string
  eventType: string
  status: WebhookDeliveryStatus
  attempts: number
  nextAttemptAt: string | null
  giveUpAt: string
  lastAttemptAt: string | null
  lastStatus: number | null
  lastError: string | null
  /** At most 1 KiB of the endpoint's last answer. */
  lastResponse: string | null
  createdAt: string
  deliveredAt: string | null
}

/** A stored error as the tenant may read it: attempts made before refusals stopped naming the
 *  address (issue 43) stored it ("x resolves to 10.0.0.1, a private address"), and before they
 *  said the same for a name that does not exist, the resolver's error ("cannot resolve: …");
 *  neither is shown. */
export const tenantReadable = (error: string | null) =>
  error
    ?.replace(/^refused: (\S+) resolves to (?:a non-public address|[^,\s]+, an? [a-z0-9-]+ address).*$/is, 'refused: $1 does not resolve to a public address')
    .replace(/^cannot resolve: .*$/s, 'refused: the host does not resolve to a public address') ?? null

const toDeliveryView = (d: WebhookDelivery & { eventType: string }): DeliveryView => ({
  id: d.id,
  webhookId: d.eventId,
  endpointId: d.endpointId,
  eventType: d.eventType,
  status: d.status,
  attempts: d.attempts,
  nextAttemptAt: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
  giveUpAt: iso(d.giveUpAt)!,
  lastAttemptAt: iso(d.lastAttemptAt),
  lastStatus: d.lastStatus,
  lastError: tenantReadable(d.lastError),
  lastResponse: d.lastResponse,
  createdAt: iso(d.createdAt)!,
  deliveredAt: iso(d.deliveredAt),
})

function checkDescription(description: string | undefined): string | undefined {
  if (description !== undefined && description.length > MAX_DESCRIPTION) throw badRequest(`description must be at most ${MAX_DESCRIPTION} characters`)
  return description
}

async function visibleEndpoint(deps: EndpointDeps, id: string, actor: Actor): Promise<WebhookEndpoint> {
  const endpoint = await deps.store.webhooks.getEndpoint(id)
  if (!endpoint || !actorSees(actor, endpoint.tenantId)) throw notFoundById('Webhook endpoint', id)
  return endpoint
}

/** Creates an endpoint; the secret is in the answer and nowhere else, ever. */
export async function createEndpoint(deps: EndpointDeps, input: { tenantId: string; url: string; events?: string | string[]; description?: string }, actor: Actor = CLI_ACTOR): Promise<{ endpoint: EndpointView; secret: string }> {
  const tenant = await deps.store.tenants.get(input.tenantId)
  if (!tenant || !actorSees(actor, tenant.id)) throw notFoundById('Tenant', input.tenantId)
  const url = checkEndpointUrl(input.url, deps.config.webhooks)
  const eventTypes = parseEventPatterns(input.events ?? '*')
  const description = checkDescription(input.description) ?? ''
  if ((await deps.store.webhooks.listEndpoints(tenant.id)).length >= MAX_ENDPOINTS_PER_TENANT) throw conflict(`a tenant may have at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints`)
  const now = deps.clock.now()
  const id = Bun.randomUUIDv7()
  const secret = newSecret()
  const endpoint: WebhookEndpoint = {
    id,
    tenantId: tenant.id,
    url,
    eventTypes,
    description,
    sealedSecret: sealSecret(deps.serverKeys.sealing, id, secret),
    previousSealedSecret: null,
    previousSecretUntil: null,
    disabledAt: null,
    disabledReason: null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
  }
  await deps.store.webhooks.insertEndpoint(endpoint)
  await audit(deps, 'webhook_endpoint.created', actor, { tenantId: tenant.id, detail: { endpointId: id, url: auditedUrl(url), events: eventTypes } })
  return { endpoint: toEndpointView(endpoint, now), secret }
}

export async function listEndpoints(deps: EndpointDeps, filter: { tenantId?: string }, actor: Actor = CLI_ACTOR): Promise<EndpointView[]> {
  if (filter.tenantId !== undefined && !actorSees(actor, filter.tenantId)) throw notFoundById('Tenant', filter.tenantId)
  const now = deps.clock.now()
  return (await deps.store.webhooks.listEndpoints(actor.tenantId ?? filter.tenantId)).map((e) => toEndpointView(e, now))
}

export async function getEndpoint(deps: EndpointDeps, id: string, actor: Actor = CLI_ACTOR): Promise<EndpointView> {
  return toEndpointView(await visibleEndpoint(deps, id, actor), deps.clock.now())
}

/** Changes the URL, events or description, or enables/disables it (enabling clears its failing state). */
export async function updateEndpoint(deps: EndpointDeps, id: string, input: { url?: string; events?: string | string[]; description?: string; enabled?: boolean }, actor: Actor = CLI_ACTOR): Promise<EndpointView> {
  const endpoint = await visibleEndpoint(deps, id, actor)
  if (input.url === undefined && input.events === undefined && input.description === undefined && input.enabled === undefined) throw badRequest('nothing to change: give url, events, description or enabled')
  const now = deps.clock.now()
  const changes: Partial<WebhookEndpoint> = { updatedAt: now }
  if (input.url !== undefined) changes.url = checkEndpointUrl(input.url, deps.config.webhooks)
  if (input.events !== undefined) changes.eventTypes = parseEventPatterns(input.events)
  if (input.description !== undefined) changes.description = checkDescription(input.description)
  if (input.enabled === true && endpoint.disabledAt !== null) Object.assign(changes, { disabledAt: null, disabledReason: null, failingSince: null })
  if (input.enabled === false && endpoint.disabledAt === null) Object.assign(changes, { disabledAt: now, disabledReason: 'disabled by an admin' })
  const updated = await deps.store.webhooks.updateEndpoint(id, changes)
  if (!updated) throw notFoundById('Webhook endpoint', id)
  const fields = Object.keys(changes).filter((field) => field !== 'updatedAt')
  await audit(deps, 'webhook_endpoint.updated', actor, { tenantId: endpoint.tenantId, detail: { endpointId: id, fields } })
  return toEndpointView(updated, now)
}

/** A new secret, shown once; the previous one keeps signing too for 24 hours, so receivers can switch without losing a delivery. */
export async function rotateSecret(deps: EndpointDeps, id: string, actor: Actor = CLI_ACTOR): Promise<{ endpoint: EndpointView; secret: string }> {
  const endpoint = await visibleEndpoint(deps, id, actor)
  const now = deps.clock.now()
  const secret = newSecret()
  const updated = await deps.store.webhooks.updateEndpoint(id, {
    sealedSecret: sealSecret(deps.serverKeys.sealing, id, secret),
    previousSealedSecret: endpoint.sealedSecret,
    previousSecretUntil: now + PREVIOUS_SECRET_WINDOW_MS,
    updatedAt: now,
  })
  if (!updated) throw notFoundById('Webhook endpoint', id)
  await audit(deps, 'webhook_endpoint.secret_rotated', actor, { tenantId: endpoint.tenantId, detail: { endpointId: id } })
  return { endpoint: toEndpointView(updated, now), secret }
}

export async function deleteEndpoint(deps: EndpointDeps, id: string, actor: Actor = CLI_ACTOR): Promise<void> {
  const endpoint = await visibleEndpoint(deps, id, actor)
  if (!(await deps.store.webhooks.deleteEndpoint(id))) throw notFoundById('Webhook endpoint', id)
  await audit(deps, 'webhook_endpoint.deleted', actor, { tenantId: endpoint.tenantId, detail: { endpointId: id, url: auditedUrl(endpoint.url) } })
}

const STATUSES: WebhookDeliveryStatus[] = ['pending', 'sending', 'succeeded', 'dead']

export async function listDeliveries(deps: EndpointDeps, endpointId: string, filter: { status?: string; limit?: number }, actor: Actor = CLI_ACTOR): Promise<DeliveryView[]> {
  await visibleEndpoint(deps, endpointId, actor)
  const limit = filter.limit ?? 50
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badRequest('limit must be an integer from 1 to 1000')
  if (filter.status !== undefined && !STATUSES.includes(filter.status as WebhookDeliveryStatus)) throw badRequest(`status must be one of ${STATUSES.join(', ')}`)
  const rows = await deps.store.webhooks.listDeliveries(endpointId, { status: filter.status as WebhookDeliveryStatus | undefined, limit })
  return rows.map(toDeliveryView)
}

/** Queues a dead (or succeeded) delivery again, with the same webhook-id, for three more days. */
export async function redeliver(deps: EndpointDeps, deliveryId: string, actor: Actor = CLI_ACTOR): Promise<DeliveryView> {
  const delivery = await deps.store.webhooks.getDelivery(deliveryId)
  if (!delivery || !actorSees(actor, delivery.tenantId)) throw notFoundById('Webhook delivery', deliveryId)
  const now = deps.clock.now()
  const queued = await deps.store.webhooks.redeliver(deliveryId, now, now + RETRY_FOR_MS)
  if (!queued) throw conflict('the delivery is still pending or being sent')
  await audit(deps, 'webhook_delivery.redelivered', actor, { tenantId: delivery.tenantId, detail: { deliveryId, endpointId: delivery.endpointId } })
  return toDeliveryView(queued)
}
