// Limit counters and the audit log over PostgreSQL. The counter rules are the SQLite ones
// (../limit-audit-stores.ts): each update is one atomic upsert, so concurrent requests on any
// instance never lose a count.
import { desc, eq, inArray, sql } from 'drizzle-orm'
import { auditFilter } from '../audit-filter'
import type { AuditStore } from '../../core/audit/store'
import type { LimitStore, LimitUpdate } from '../../core/guards/store'
import type { AuditEvent, LimitCounter } from '../../core/types'
import type { PgDb, PgExecutor } from './client'
import { auditEvents, limitCounters } from './schema'

const returning = sql`RETURNING key, count, window_start AS "windowStart", updated_at AS "updatedAt"`

/** One counter update inside the caller's transaction; the counter after it (null for a reset). */
async function applyOne(tx: PgExecutor, update: LimitUpdate, now: number): Promise<LimitCounter | null> {
  const { key } = update
  if (update.op === 'reset') {
    await tx.delete(limitCounters).where(eq(limitCounters.key, key))
    return null
  }
  if (update.op === 'refund') {
    await tx.execute(sql`UPDATE limit_counters SET count = count - 1 WHERE key = ${key} AND count > 0`)
    return null
  }
  const restart = sql`limit_counters.window_start + ${update.windowMs}::bigint <= ${now}::bigint`
  const rows = await tx.execute(sql`
    INSERT INTO limit_counters (key, count, window_start, updated_at) VALUES (${key}, 1, ${now}, ${now})
    ON CONFLICT (key) DO UPDATE SET
      count = CASE WHEN ${restart} THEN 1 ELSE limit_counters.count + 1 END,
      window_start = CASE WHEN ${restart} THEN ${now}::bigint ELSE limit_counters.window_start END,
      updated_at = ${now}
    ${returning}`)
  return toCounter(rows[0])
}

const toCounter = (row: unknown): LimitCounter => {
  const r = row as Record<string, string | number | null>
  return { key: String(r.key), count: Number(r.count), windowStart: Number(r.windowStart), updatedAt: Number(r.updatedAt) }
}

/** Applies counter updates inside the caller's transaction. */
export async function writeLimits(tx: PgExecutor, updates: LimitUpdate[], now: number): Promise<LimitCounter[]> {
  const counters: LimitCounter[] = []
  for (const update of updates) {
    const counter = await applyOne(tx, update, now)
    if (counter) counters.push(counter)
  }
  return counters
}

/**
 * Inside the caller's transaction: the counters of `keys`, after taking a lock per key that
 * any other transaction reserving one of them, on any instance, waits for until this one
 * commits. The locks are taken in one order (PostgreSQL evaluates a volatile function of the
 * output list after ORDER BY), so two reservations sharing keys cannot deadlock.
 */
export async function lockAndReadLimits(tx: PgExecutor, keys: string[]): Promise<LimitCounter[]> {
  const unique = [...new Set(keys)]
  if (unique.length === 0) return []
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended('limit:' || k, 0)) FROM unnest(${sql.raw('ARRAY[')}${sql.join(unique.map((k) => sql`${k}`), sql`, `)}${sql.raw(']::text[]')}) AS k ORDER BY k`)
  const rows = await tx
    .select({ key: limitCounters.key, count: limitCounters.count, windowStart: limitCounters.windowStart, updatedAt: limitCounters.updatedAt })
    .from(limitCounters)
    .where(inArray(limitCounters.key, unique))
  return rows.map(toCounter)
}

export function createPgLimitStore(db: PgDb): LimitStore {
  return {
    async get(keys) {
      if (keys.length === 0) return []
      return db
        .select({ key: limitCounters.key, count: limitCounters.count, windowStart: limitCounters.windowStart, updatedAt: limitCounters.updatedAt })
        .from(limitCounters)
        .where(inArray(limitCounters.key, keys))
    },
    async reserve(hits, now, verdict) {
      return db.transaction(async (tx) => {
        const refused = verdict(await lockAndReadLimits(tx, hits.map((h) => h.key)))
        if (refused === null) await writeLimits(tx, hits, now)
        return refused
      })
    },
    async apply(updates, now, audit) {
      if (updates.length === 0) {
        if (audit) await db.insert(auditEvents).values(toAuditRow(audit))
        return []
      }
      return db.transaction(async (tx) => {
        const counters = await writeLimits(tx, updates, now)
        if (audit) await tx.insert(auditEvents).values(toAuditRow(audit))
        return counters
      })
    },
  }
}

export const toAuditRow = (event: AuditEvent) => ({ ...event, detail: event.detail === null ? null : JSON.stringify(event.detail) })

export function createPgAuditStore(db: PgDb): AuditStore {
  return {
    async record(event) {
      await db.insert(auditEvents).values(toAuditRow(event))
    },
    async recordMany(events) {
      if (events.length === 0) return
      await db.transaction(async (tx) => {
        for (let i = 0; i < events.length; i += 500) await tx.insert(auditEvents).values(events.slice(i, i + 500).map(toAuditRow))
      })
    },
    async query(filter) {
      const rows = await db
        .select()
        .from(auditEvents)
        .where(auditFilter(auditEvents, filter))
        .orderBy(desc(auditEvents.at), desc(auditEvents.id))
        .limit(filter.limit ?? 100)
      return rows.map((row) => ({ ...row, detail: row.detail === null ? null : JSON.parse(row.detail) }))
    },
  }
}
