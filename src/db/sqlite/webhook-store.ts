// Webhooks over SQLite (core/webhooks/store.ts). The events are written by the triggers of
// the webhooks migration; this store fans them out and hands deliveries to one worker at a
// time, each claim a single UPDATE ... RETURNING (atomic in SQLite) under a lease.
import { and, asc, count, desc, eq, inArray, isNull, min, sql } from 'drizzle-orm'
import type { WebhookStore } from '../../core/webhooks/store'
import type { WebhookDelivery, WebhookEndpoint } from '../../core/webhooks/types'
import type { Db } from './client'
import { changesOf, immediate } from './helpers'
import { toAuditRow } from './limit-audit-stores'
import { auditEvents, mailOutbox, users, webhookDeliveries, webhookEndpoints, webhookEvents } from './schema'

type EndpointRow = typeof webhookEndpoints.$inferSelect

export const toEndpoint = (row: EndpointRow): WebhookEndpoint => ({ ...row, eventTypes: row.eventTypes.split(',') })
/** The events of a fan-out grouped by how many deliveries were made of each (webhook_events.deliveries). */
export function byDeliveriesMade(events: Array<{ id: string }>, deliveries: Array<{ eventId: string }>): Map<number, string[]> {
  const made = new Map<string, number>()
  for (const delivery of deliveries) made.set(delivery.eventId, (made.get(delivery.eventId) ?? 0) + 1)
  const groups = new Map<number, string[]>()
  for (const { id } of events) {
    const n = made.get(id) ?? 0
    groups.set(n, [...(groups.get(n) ?? []), id])
  }
  return groups
}

export const endpointFields = (changes: Partial<WebhookEndpoint>) => {
  const { eventTypes, ...rest } = changes
  return eventTypes === undefined ? rest : { ...rest, eventTypes: eventTypes.join(',') }
}

export function createWebhookStore(db: Db): WebhookStore {
  // The oldest due delivery of an enabled endpoint with nothing in flight, of a tenant with
  // fewer than $perTenant in flight: one delivery per endpoint at a time, so a slow endpoint
  // holds one worker slot and its own queue only, and a tenant's share of slots is bounded, so
  // one tenant's slow endpoints cannot hold every slot while other tenants wait. A claimed
  // delivery's next_attempt_at is its lease's end, so "due" is one index range for both a
  // pending delivery and one whose worker died (webhook_deliveries_due_idx), and "in flight"
  // one look-up per endpoint (webhook_deliveries_in_flight_idx) and per tenant
  // (webhook_deliveries_tenant_in_flight_idx), however many deliveries are kept. A crashed
  // worker's delivery ('sending', its lease run out) goes first ('sending' sorts after
  // 'pending', hence DESC): its next_attempt_at is its lease's end, not when it was first due,
  // which was before any delivery now pending was claimable ahead of it. Ties (an event batch
  // is due at one instant) go by id, which is in the order the events were written. A finished
  // delivery's next_attempt_at is when it succeeded or died: retention's range of the same
  // index (retention-store.ts).
  const claim = db.$client.prepare(`
    UPDATE webhook_deliveries SET status = 'sending', attempts = attempts + 1, lease_until = $leaseUntil, next_attempt_at = $leaseUntil
    WHERE id = (
      SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.status IN ('pending', 'sending') AND d.next_attempt_at <= $now
        AND e.disabled_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries f WHERE f.endpoint_id = d.endpoint_id AND f.status = 'sending' AND f.next_attempt_at > $now)
        AND (SELECT count(*) FROM webhook_deliveries g WHERE g.tenant_id = d.tenant_id AND g.status = 'sending' AND g.next_attempt_at > $now) < $perTenant
      ORDER BY d.status DESC, d.next_attempt_at, d.id LIMIT 1
    )
    RETURNING id`)
  // An outcome is written only while the attempt's claim holds the delivery: still 'sending'
  // under the lease it was claimed with (a later claim, after the lease ran out, has a later one).
  const held = (id: string, leaseUntil: number) => and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'sending'), eq(webhookDeliveries.leaseUntil, leaseUntil))
  const anyWaiting = db.$client.prepare('SELECT 1 FROM webhook_events WHERE fanned_out_at IS NULL LIMIT 1')
  const deliveryById = (id: string) => db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get() ?? null
  const withType = (id: string) => {
    const row = db
      .select({ delivery: webhookDeliveries, eventType: webhookEvents.type })
      .from(webhookDeliveries)
      .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
      .where(eq(webhookDeliveries.id, id))
      .get()
    return row ? { ...row.delivery, eventType: row.eventType } : null
  }

  return {
    async insertEndpoint(endpoint) {
      await immediate(db, () => db.insert(webhookEndpoints).values(endpointFields(endpoint) as EndpointRow).run())
    },
    async getEndpoint(id) {
      const row = db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get()
      return row ? toEndpoint(row) : null
    },
    async listEndpoints(tenantId) {
      return db
        .select()
        .from(webhookEndpoints)
        .where(tenantId === undefined ? undefined : eq(webhookEndpoints.tenantId, tenantId))
        .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id))
        .all()
        .map(toEndpoint)
    },
    async updateEndpoint(id, changes) {
      const row = await immediate(db, () => db.update(webhookEndpoints).set(endpointFields(changes)).where(eq(webhookEndpoints.id, id)).returning().get())
      return row ? toEndpoint(row) : null
    },
    async deleteEndpoint(id) {
      return immediate(db, () => {
        db.delete(webhookDeliveries).where(eq(webhookDeliveries.endpointId, id)).run()
        return changesOf(db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).run()) === 1
      })
    },
    async fanOut(limit, now, route) {
      // Most rounds find nothing: they take no write lock.
      if (!anyWaiting.get()) return 0
      return immediate(db, () => {
        const events = db.select().from(webhookEvents).where(isNull(webhookEvents.fannedOutAt)).orderBy(asc(webhookEvents.createdAt)).limit(limit).all()
        if (events.length === 0) return 0
        const tenantIds = [...new Set(events.map((event) => event.tenantId))]
        const endpoints = db
          .select()
          .from(webhookEndpoints)
          .where(and(inArray(webhookEndpoints.tenantId, tenantIds), isNull(webhookEndpoints.disabledAt)))
          .all()
          .map(toEndpoint)
        const deliveries: WebhookDelivery[] = events.flatMap((event) => route(event, endpoints.filter((endpoint) => endpoint.tenantId === event.tenantId)))
        for (let i = 0; i < deliveries.length; i += 200) db.insert(webhookDeliveries).values(deliveries.slice(i, i + 200)).onConflictDoNothing().run()
        for (const [made, ids] of byDeliveriesMade(events, deliveries)) db.update(webhookEvents).set({ fannedOutAt: now, deliveries: made }).where(inArray(webhookEvents.id, ids)).run()
        return events.length
      })
    },
    async claimNext(now, leaseMs, perTenant) {
      const claimed = await immediate(db, () => claim.get({ now, leaseUntil: now + leaseMs, perTenant }) as { id: string } | null)
      if (!claimed) return null
      const row = db
        .select({ delivery: webhookDeliveries, event: webhookEvents, endpoint: webhookEndpoints })
        .from(webhookDeliveries)
        .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
        .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
        .where(eq(webhookDeliveries.id, claimed.id))
        .get()
      return row ? { delivery: row.delivery, event: row.event, endpoint: toEndpoint(row.endpoint) } : null
    },
    async recordSuccess(id, endpointId, leaseUntil, result) {
      return immediate(db, () => {
        const recorded = changesOf(
          db.update(webhookDeliveries)
            .set({ status: 'succeeded', nextAttemptAt: result.at, leaseUntil: null, deliveredAt: result.at, lastAttemptAt: result.at, lastStatus: result.status, lastError: null, lastResponse: result.response })
            .where(held(id, leaseUntil))
            .run(),
        ) === 1
        if (recorded) db.update(webhookEndpoints).set({ failingSince: null }).where(eq(webhookEndpoints.id, endpointId)).run()
        return recorded
      })
    },
    async recordFailure(id, endpointId, leaseUntil, result, retryAt) {
      return immediate(db, () => {
        const recorded = changesOf(
          db.update(webhookDeliveries)
            .set({ status: retryAt === null ? 'dead' : 'pending', nextAttemptAt: retryAt ?? result.at, leaseUntil: null, lastAttemptAt: result.at, lastStatus: result.status, lastError: result.error, lastResponse: result.response })
            .where(held(id, leaseUntil))
            .run(),
        ) === 1
        if (!recorded) return null
        const row = db
          .update(webhookEndpoints)
          .set({ failingSince: sql`coalesce(${webhookEndpoints.failingSince}, ${result.at})` })
          .where(eq(webhookEndpoints.id, endpointId))
          .returning({ failingSince: webhookEndpoints.failingSince })
          .get()
        return row?.failingSince ?? result.at
      })
    },
    async requeue(id, leaseUntil, at) {
      await immediate(db, () =>
        db.update(webhookDeliveries)
          .set({ status: 'pending', nextAttemptAt: at, leaseUntil: null, attempts: sql`max(${webhookDeliveries.attempts} - 1, 0)` })
          .where(held(id, leaseUntil))
          .run(),
      )
    },
    async disableEndpoint(id, now, reason, mails, audit) {
      return immediate(db, () => {
        const disabled = changesOf(db.update(webhookEndpoints).set({ disabledAt: now, disabledReason: reason, updatedAt: now }).where(and(eq(webhookEndpoints.id, id), isNull(webhookEndpoints.disabledAt))).run()) === 1
        if (disabled && mails.length > 0) db.insert(mailOutbox).values(mails).run()
        if (disabled) db.insert(auditEvents).values(toAuditRow(audit)).run()
        return disabled
      })
    },
    async adminAddresses(tenantId) {
      return db
        .select({ email: users.email, firstName: users.firstName })
        .from(users)
        .where(and(eq(users.tenantId, tenantId), eq(users.type, 'admin'), isNull(users.disabledAt)))
        .all()
    },
    async listDeliveries(endpointId, filter) {
      return db
        .select({ delivery: webhookDeliveries, eventType: webhookEvents.type })
        .from(webhookDeliveries)
        .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
        .where(and(eq(webhookDeliveries.endpointId, endpointId), filter.status === undefined ? undefined : eq(webhookDeliveries.status, filter.status)))
        .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
        .limit(filter.limit)
        .all()
        .map((row) => ({ ...row.delivery, eventType: row.eventType }))
    },
    async getDelivery(id) {
      return deliveryById(id)
    },
    async redeliver(id, now, giveUpAt) {
      const requeued = await immediate(
        db,
        () =>
          changesOf(
            db
              .update(webhookDeliveries)
              .set({ status: 'pending', nextAttemptAt: now, giveUpAt, leaseUntil: null })
              .where(and(eq(webhookDeliveries.id, id), inArray(webhookDeliveries.status, ['dead', 'succeeded'])))
              .run(),
          ) === 1,
      )
      return requeued ? withType(id) : null
    },
    async stats() {
      const byStatus = { pending: 0, sending: 0, succeeded: 0, dead: 0 }
      for (const row of db.select({ status: webhookDeliveries.status, n: count() }).from(webhookDeliveries).groupBy(webhookDeliveries.status).all()) byStatus[row.status] = row.n
      const oldest = db
        .select({ at: min(webhookDeliveries.createdAt) })
        .from(webhookDeliveries)
        .where(inArray(webhookDeliveries.status, ['pending', 'sending']))
        .get()
      const waiting = db.select({ n: count() }).from(webhookEvents).where(isNull(webhookEvents.fannedOutAt)).get()
      return { byStatus, oldestPendingAt: oldest?.at ?? null, eventsWaiting: waiting?.n ?? 0 }
    },
  }
}
