// Webhooks over PostgreSQL (core/webhooks/store.ts). Several instances fan out and claim at
// once: events are taken FOR UPDATE SKIP LOCKED, so each is fanned out by one instance; a
// claim first locks the endpoint (SKIP LOCKED), then, in a fresh statement that sees every
// committed claim, takes its oldest due delivery if none of its deliveries is in flight: each
// delivery goes to one worker, and an endpoint has one delivery in flight across instances.
// A tenant's claims are serialised by a transaction-scoped advisory lock on the tenant, so
// its share of deliveries in flight (perTenant) holds across instances too.
import { and, asc, count, desc, eq, inArray, isNull, min, sql } from 'drizzle-orm'
import type { WebhookStore } from '../../core/webhooks/store'
import type { WebhookDelivery } from '../../core/webhooks/types'
import { byDeliveriesMade, endpointFields, toEndpoint } from '../sqlite/webhook-store'
import type { PgDb } from './client'
import { toAuditRow } from './limit-audit-stores'
import { auditEvents, mailOutbox, users, webhookDeliveries, webhookEndpoints, webhookEvents } from './schema'

type EndpointRow = typeof webhookEndpoints.$inferSelect

export function createPgWebhookStore(db: PgDb): WebhookStore {
  const withType = async (id: string) => {
    const [row] = await db
      .select({ delivery: webhookDeliveries, eventType: webhookEvents.type })
      .from(webhookDeliveries)
      .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
      .where(eq(webhookDeliveries.id, id))
    return row ? { ...row.delivery, eventType: row.eventType } : null
  }
  // A claimed delivery's next_attempt_at is its lease's end (as on SQLite, ../webhook-store.ts):
  // "due" and "in flight" are each one index range; a crashed worker's delivery ('sending',
  // lease run out) goes first (status DESC), as it was due before its lease's end. A finished
  // delivery's next_attempt_at is when it succeeded or died (retention's range).
  const due = (now: number) => sql`(d.status IN ('pending', 'sending') AND d.next_attempt_at <= ${now}::bigint)`
  const noneInFlight = (now: number) => sql`NOT EXISTS (SELECT 1 FROM webhook_deliveries f WHERE f.endpoint_id = d.endpoint_id AND f.status = 'sending' AND f.next_attempt_at > ${now}::bigint)`
  // (webhook_deliveries_tenant_in_flight_idx)
  const tenantHasRoom = (now: number, perTenant: number) =>
    sql`(SELECT count(*) FROM webhook_deliveries g WHERE g.tenant_id = d.tenant_id AND g.status = 'sending' AND g.next_attempt_at > ${now}::bigint) < ${perTenant}`
  // An outcome is written only while the attempt's claim holds the delivery: still 'sending'
  // under the lease it was claimed with (a later claim, after the lease ran out, has a later one).
  const held = (id: string, leaseUntil: number) => and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'sending'), eq(webhookDeliveries.leaseUntil, leaseUntil))

  /** One claim: the id claimed, null if the endpoint found has nothing to give after all, 'none' if nothing is due. */
  const claimOnce = (now: number, leaseMs: number, perTenant: number) =>
    db.transaction(async (tx): Promise<string | null | 'none'> => {
      const [endpoint] = (await tx.execute(sql`SELECT e.id, e.tenant_id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE ${due(now)} AND e.disabled_at IS NULL AND ${noneInFlight(now)} AND ${tenantHasRoom(now, perTenant)}
        ORDER BY d.status DESC, d.next_attempt_at, d.id LIMIT 1 FOR UPDATE OF e SKIP LOCKED`)) as unknown as Array<{ id: string; tenant_id: string }>
      if (!endpoint) return 'none'
      // Claims of one tenant's endpoints one after another (held to the commit), so the next
      // statement's count sees every committed claim of the tenant.
      await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`authd.webhooks.tenant:${endpoint.tenant_id}`}))`)
      const [claimed] = (await tx.execute(sql`UPDATE webhook_deliveries SET status = 'sending', attempts = attempts + 1, lease_until = ${now + leaseMs}::bigint, next_attempt_at = ${now + leaseMs}::bigint
        WHERE id = (SELECT d.id FROM webhook_deliveries d WHERE d.endpoint_id = ${endpoint.id} AND ${due(now)} AND ${noneInFlight(now)} AND ${tenantHasRoom(now, perTenant)}
          ORDER BY d.status DESC, d.next_attempt_at, d.id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id`)) as unknown as Array<{ id: string }>
      return claimed?.id ?? null
    })

  return {
    async insertEndpoint(endpoint) {
      await db.insert(webhookEndpoints).values(endpointFields(endpoint) as EndpointRow)
    },
    async getEndpoint(id) {
      const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id))
      return row ? toEndpoint(row) : null
    },
    async listEndpoints(tenantId) {
      const rows = await db
        .select()
        .from(webhookEndpoints)
        .where(tenantId === undefined ? undefined : eq(webhookEndpoints.tenantId, tenantId))
        .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id))
      return rows.map(toEndpoint)
    },
    async updateEndpoint(id, changes) {
      const [row] = await db.update(webhookEndpoints).set(endpointFields(changes)).where(eq(webhookEndpoints.id, id)).returning()
      return row ? toEndpoint(row) : null
    },
    async deleteEndpoint(id) {
      return db.transaction(async (tx) => {
        await tx.delete(webhookDeliveries).where(eq(webhookDeliveries.endpointId, id))
        const deleted = await tx.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).returning({ id: webhookEndpoints.id })
        return deleted.length === 1
      })
    },
    async fanOut(limit, now, route) {
      // Most rounds find nothing: they open no transaction.
      if ((await db.select({ id: webhookEvents.id }).from(webhookEvents).where(isNull(webhookEvents.fannedOutAt)).limit(1)).length === 0) return 0
      return db.transaction(async (tx) => {
        const events = await tx.select().from(webhookEvents).where(isNull(webhookEvents.fannedOutAt)).orderBy(asc(webhookEvents.createdAt)).limit(limit).for('update', { skipLocked: true })
        if (events.length === 0) return 0
        const tenantIds = [...new Set(events.map((event) => event.tenantId))]
        const endpoints = (await tx.select().from(webhookEndpoints).where(and(inArray(webhookEndpoints.tenantId, tenantIds), isNull(webhookEndpoints.disabledAt)))).map(toEndpoint)
        const deliveries: WebhookDelivery[] = events.flatMap((event) => route(event, endpoints.filter((endpoint) => endpoint.tenantId === event.tenantId)))
        for (let i = 0; i < deliveries.length; i += 200) await tx.insert(webhookDeliveries).values(deliveries.slice(i, i + 200)).onConflictDoNothing()
        for (const [made, ids] of byDeliveriesMade(events, deliveries)) await tx.update(webhookEvents).set({ fannedOutAt: now, deliveries: made }).where(inArray(webhookEvents.id, ids))
        return events.length
      })
    },
    async claimNext(now, leaseMs, perTenant) {
      // (an endpoint found whose tenant has reached its share meanwhile, or whose delivery
      // another instance took, claims nothing: look again, for another tenant's delivery)
      let claimedId: string | null = null
      for (let tries = 0; tries < 3 && claimedId === null; tries++) {
        const found = await claimOnce(now, leaseMs, perTenant)
        if (found === 'none') break
        claimedId = found
      }
      if (!claimedId) return null
      const [row] = await db
        .select({ delivery: webhookDeliveries, event: webhookEvents, endpoint: webhookEndpoints })
        .from(webhookDeliveries)
        .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
        .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
        .where(eq(webhookDeliveries.id, claimedId))
      return row ? { delivery: row.delivery, event: row.event, endpoint: toEndpoint(row.endpoint) } : null
    },
    async recordSuccess(id, endpointId, leaseUntil, result) {
      return db.transaction(async (tx) => {
        const recorded = await tx
          .update(webhookDeliveries)
          .set({ status: 'succeeded', nextAttemptAt: result.at, leaseUntil: null, deliveredAt: result.at, lastAttemptAt: result.at, lastStatus: result.status, lastError: null, lastResponse: result.response })
          .where(held(id, leaseUntil))
          .returning({ id: webhookDeliveries.id })
        if (recorded.length === 0) return false
        await tx.update(webhookEndpoints).set({ failingSince: null }).where(eq(webhookEndpoints.id, endpointId))
        return true
      })
    },
    async recordFailure(id, endpointId, leaseUntil, result, retryAt) {
      return db.transaction(async (tx) => {
        const recorded = await tx
          .update(webhookDeliveries)
          .set({ status: retryAt === null ? 'dead' : 'pending', nextAttemptAt: retryAt ?? result.at, leaseUntil: null, lastAttemptAt: result.at, lastStatus: result.status, lastError: result.error, lastResponse: result.response })
          .where(held(id, leaseUntil))
          .returning({ id: webhookDeliveries.id })
        if (recorded.length === 0) return null
        const [row] = await tx
          .update(webhookEndpoints)
          .set({ failingSince: sql`coalesce(${webhookEndpoints.failingSince}, ${result.at}::bigint)` })
          .where(eq(webhookEndpoints.id, endpointId))
          .returning({ failingSince: webhookEndpoints.failingSince })
        return row?.failingSince ?? result.at
      })
    },
    async requeue(id, leaseUntil, at) {
      await db
        .update(webhookDeliveries)
        .set({ status: 'pending', nextAttemptAt: at, leaseUntil: null, attempts: sql`greatest(${webhookDeliveries.attempts} - 1, 0)` })
        .where(held(id, leaseUntil))
    },
    async disableEndpoint(id, now, reason, mails, audit) {
      return db.transaction(async (tx) => {
        const disabled = await tx
          .update(webhookEndpoints)
          .set({ disabledAt: now, disabledReason: reason, updatedAt: now })
          .where(and(eq(webhookEndpoints.id, id), isNull(webhookEndpoints.disabledAt)))
          .returning({ id: webhookEndpoints.id })
        if (disabled.length === 1 && mails.length > 0) await tx.insert(mailOutbox).values(mails)
        if (disabled.length === 1) await tx.insert(auditEvents).values(toAuditRow(audit))
        return disabled.length === 1
      })
    },
    async adminAddresses(tenantId) {
      return db
        .select({ email: users.email, firstName: users.firstName })
        .from(users)
        .where(and(eq(users.tenantId, tenantId), eq(users.type, 'admin'), isNull(users.disabledAt)))
    },
    async listDeliveries(endpointId, filter) {
      const rows = await db
        .select({ delivery: webhookDeliveries, eventType: webhookEvents.type })
        .from(webhookDeliveries)
        .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
        .where(and(eq(webhookDeliveries.endpointId, endpointId), filter.status === undefined ? undefined : eq(webhookDeliveries.status, filter.status)))
        .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
        .limit(filter.limit)
      return rows.map((row) => ({ ...row.delivery, eventType: row.eventType }))
    },
    async getDelivery(id) {
      const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id))
      return row ?? null
    },
    async redeliver(id, now, giveUpAt) {
      const requeued = await db
        .update(webhookDeliveries)
        .set({ status: 'pending', nextAttemptAt: now, giveUpAt, leaseUntil: null })
        .where(and(eq(webhookDeliveries.id, id), inArray(webhookDeliveries.status, ['dead', 'succeeded'])))
        .returning({ id: webhookDeliveries.id })
      return requeued.length === 1 ? withType(id) : null
    },
    async stats() {
      const byStatus = { pending: 0, sending: 0, succeeded: 0, dead: 0 }
      for (const row of await db.select({ status: webhookDeliveries.status, n: count() }).from(webhookDeliveries).groupBy(webhookDeliveries.status)) byStatus[row.status] = Number(row.n)
      const [oldest] = await db
        .select({ at: min(webhookDeliveries.createdAt) })
        .from(webhookDeliveries)
        .where(inArray(webhookDeliveries.status, ['pending', 'sending']))
      const [waiting] = await db.select({ n: count() }).from(webhookEvents).where(isNull(webhookEvents.fannedOutAt))
      return { byStatus, oldestPendingAt: oldest?.at === null || oldest?.at === undefined ? null : Number(oldest.at), eventsWaiting: Number(waiting?.n ?? 0) }
    },
  }
}
