// The admin API's webhook endpoints (product spec §22), under /api/v1/admin/webhooks: the same
// domain functions as `authd webhooks`, with the admin key as the actor, confined to its tenant.
import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { createEndpoint, deleteEndpoint, getEndpoint, listDeliveries, listEndpoints, redeliver, rotateSecret, updateEndpoint } from '../../core/webhooks/endpoints'
import { WEBHOOK_EVENT_TYPES } from '../../core/webhooks/events'
import { envelope } from '../errors'
import { ADMIN_KEY, responses } from '../openapi'
import { adminKeyGuard } from '../plugins/admin-key'
import { strictBody } from '../plugins/strict-body'
import { ADMIN_PREFIX } from './admin'

const time = t.Union([t.String({ format: 'date-time' }), t.Null()])
const Endpoint = t.Object({
  id: t.String({ format: 'uuid' }),
  tenantId: t.String({ format: 'uuid' }),
  url: t.String(),
  events: t.Array(t.String(), { description: `Event types or patterns: ${WEBHOOK_EVENT_TYPES.join(', ')}; a family such as user.*; or *` }),
  description: t.String(),
  enabled: t.Boolean(),
  disabledAt: time,
  disabledReason: t.Union([t.String(), t.Null()], { description: "'failing for 5 days' when authd disabled it (the tenant's admins were mailed)" }),
  failingSince: time,
  previousSecretUntil: t.Union([t.String({ format: 'date-time' }), t.Null()], { description: 'After a rotation: until then each delivery is signed with the previous secret too' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})
const EndpointWithSecret = t.Composite([Endpoint, t.Object({ secret: t.String({ description: 'whsec_…: shown this once, never again. Verify each delivery with it (Standard Webhooks).' }) })])
const Delivery = t.Object({
  id: t.String({ format: 'uuid' }),
  webhookId: t.String({ description: 'The webhook-id header: the same on every attempt (deduplicate on it)' }),
  endpointId: t.String({ format: 'uuid' }),
  eventType: t.String(),
  status: t.Union([t.Literal('pending'), t.Literal('sending'), t.Literal('succeeded'), t.Literal('dead')]),
  attempts: t.Integer(),
  nextAttemptAt: time,
  giveUpAt: t.String({ format: 'date-time', description: 'Retries stop then (3 days after it was queued): the delivery is dead' }),
  lastAttemptAt: time,
  lastStatus: t.Union([t.Integer(), t.Null()]),
  lastError: t.Union([t.String(), t.Null()]),
  lastResponse: t.Union([t.String(), t.Null()], { description: 'At most 1 KiB of the last answer' }),
  createdAt: t.String({ format: 'date-time' }),
  deliveredAt: time,
})
const endpointIdParams = t.Object({ endpointId: t.String() })
const events = t.Union([t.String(), t.Array(t.String())], { description: 'Event types or patterns: an array, or one comma-separated string (user.*,session.created; * for all)' })
const toLimit = (raw: string | undefined) => (raw === undefined ? undefined : /^\d{1,6}$/.test(raw) ? Number(raw) : NaN)

export const adminWebhookRoutes = (deps: Deps) =>
  new Elysia({ prefix: `${ADMIN_PREFIX}/webhooks` })
    .use(adminKeyGuard(deps))
    .post(
      '',
      async ({ body, tenant, admin, set }) => {
        const { endpoint, secret } = await createEndpoint(deps, { ...body, tenantId: tenant.id }, admin)
        set.status = 201
        return envelope(201, 'Webhook endpoint created', { ...endpoint, secret })
      },
      {
        adminKey: true,
        parse: 'json',
        ...strictBody({ url: t.String(), events: t.Optional(events), description: t.Optional(t.String()) }),
        detail: {
          summary: 'Add a webhook endpoint',
          description: 'https only. events defaults to * (every event), as in the CLI. Each event is POSTed as Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). The secret is in this answer only.',
          security: ADMIN_KEY,
          responses: responses({ status: 201, description: 'Created, with its secret', data: EndpointWithSecret }, [400, 401, 403, 409, 413, 503]),
        },
      },
    )
    .get('', async ({ tenant, admin }) => envelope(200, 'Webhook endpoints', await listEndpoints(deps, { tenantId: tenant.id }, admin)), {
      adminKey: true,
      detail: { summary: "List the tenant's webhook endpoints", description: 'Never their secrets.', security: ADMIN_KEY, responses: responses({ status: 200, description: 'Endpoints, oldest first', data: t.Array(Endpoint) }, [401, 403, 503]) },
    })
    .get('/:endpointId', async ({ params, admin }) => envelope(200, 'Webhook endpoint', await getEndpoint(deps, params.endpointId, admin)), {
      adminKey: true,
      params: endpointIdParams,
      detail: { summary: 'A webhook endpoint', security: ADMIN_KEY, responses: responses({ status: 200, description: 'The endpoint', data: Endpoint }, [401, 403, 404, 503]) },
    })
    .patch('/:endpointId', async ({ params, body, admin }) => envelope(200, 'Webhook endpoint updated', await updateEndpoint(deps, params.endpointId, body, admin)), {
      adminKey: true,
      parse: 'json',
      params: endpointIdParams,
      ...strictBody({ url: t.Optional(t.String()), events: t.Optional(events), description: t.Optional(t.String()), enabled: t.Optional(t.Boolean()) }),
      detail: {
        summary: 'Change a webhook endpoint',
        description: 'URL, events, description; enabled: true sends to it again after it was disabled (its waiting deliveries resume), false stops sending (deliveries wait).',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'The endpoint after the change', data: Endpoint }, [400, 401, 403, 404, 413, 503]),
      },
    })
    .post('/:endpointId/rotate-secret', async ({ params, admin }) => envelope(200, 'Webhook secret rotated', await rotateSecret(deps, params.endpointId, admin).then(({ endpoint, secret }) => ({ ...endpoint, secret }))), {
      adminKey: true,
      params: endpointIdParams,
      detail: {
        summary: "Rotate a webhook endpoint's secret",
        description: 'A new secret, in this answer only; for 24 hours each delivery is signed with both, so the receiver can switch without losing one.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'The endpoint, with its new secret', data: EndpointWithSecret }, [401, 403, 404, 503]),
      },
    })
    .delete('/:endpointId', async ({ params, admin }) => envelope(200, 'Webhook endpoint deleted', await deleteEndpoint(deps, params.endpointId, admin).then(() => ({ id: params.endpointId }))), {
      adminKey: true,
      params: endpointIdParams,
      detail: { summary: 'Delete a webhook endpoint and its deliveries', security: ADMIN_KEY, responses: responses({ status: 200, description: 'Deleted', data: t.Object({ id: t.String() }) }, [401, 403, 404, 503]) },
    })
    .get(
      '/:endpointId/deliveries',
      async ({ params, query, admin }) => envelope(200, 'Webhook deliveries', await listDeliveries(deps, params.endpointId, { status: query.status, limit: toLimit(query.limit) }, admin)),
      {
        adminKey: true,
        params: endpointIdParams,
        query: t.Object({ status: t.Optional(t.String()), limit: t.Optional(t.String()) }),
        detail: {
          summary: "A webhook endpoint's deliveries",
          description: 'Newest first (limit 1-1000, default 50); status= pending, sending, succeeded or dead.',
          security: ADMIN_KEY,
          responses: responses({ status: 200, description: 'Deliveries', data: t.Array(Delivery) }, [400, 401, 403, 404, 503]),
        },
      },
    )
    .post('/deliveries/:deliveryId/redeliver', async ({ params, admin }) => envelope(200, 'Webhook delivery queued again', await redeliver(deps, params.deliveryId, admin)), {
      adminKey: true,
      params: t.Object({ deliveryId: t.String() }),
      detail: {
        summary: 'Send a delivery again',
        description: 'A dead (or delivered) delivery is queued again with the same webhook-id, for 3 more days; 409 while it is still pending.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'The delivery, queued', data: Delivery }, [401, 403, 404, 409, 503]),
      },
    })
