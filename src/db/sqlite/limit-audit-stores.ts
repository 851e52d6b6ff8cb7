// Limit counters and the audit log over SQLite. Each counter update is one atomic upsert,
// so concurrent requests never lose a count.
import { desc, sql } from 'drizzle-orm'
import { auditFilter } from '../audit-filter'
import type { AuditStore } from '../../core/audit/store'
import type { LimitStore, LimitUpdate } from '../../core/guards/store'
import type { AuditEvent, LimitCounter } from '../../core/types'
import type { Db } from './client'
import { immediate } from './helpers'
import { auditEvents } from './schema'

/** Applies counter updates; call it inside a transaction (the limit store's own, or one that
 *  records a failure together with its counters). */
export function limitWriter(db: Db): (updates: LimitUpdate[], now: number) => LimitCounter[] {
  const hit = db.$client.prepare(`
    INSERT INTO limit_counters (key, count, window_start, updated_at) VALUES ($key, 1, $now, $now)
    ON CONFLICT (key) DO UPDATE SET
      count = CASE WHEN window_start + $windowMs <= $now THEN 1 ELSE count + 1 END,
      window_start = CASE WHEN window_start + $windowMs <= $now THEN $now ELSE window_start END,
      updated_at = $now
    RETURNING key, count, window_start AS windowStart, updated_at AS updatedAt`)
  const reset = db.$client.prepare('DELETE FROM limit_counters WHERE key = $key')
  const refund = db.$client.prepare('UPDATE limit_counters SET count = count - 1 WHERE key = $key AND count > 0')

  const applyOne = (update: LimitUpdate, now: number): LimitCounter | null => {
    switch (update.op) {
      case 'hit':
        return hit.get({ key: update.key, now, windowMs: update.windowMs }) as LimitCounter
      case 'reset':
        reset.run({ key: update.key })
        return null
      case 'refund':
        refund.run({ key: update.key })
        return null
    }
  }

  return (updates, now) => updates.map((u) => applyOne(u, now)).filter((c): c is LimitCounter => c !== null)
}

/** Reads counters by key. One prepared statement for any number of keys (a login reads
 *  three), the keys as a JSON array. */
export function limitReader(db: Db): (keys: string[]) => LimitCounter[] {
  const countersByKey = db.$client.prepare<LimitCounter, [string]>(
    'SELECT key, count, window_start AS windowStart, updated_at AS updatedAt FROM limit_counters WHERE key IN (SELECT value FROM json_each(?))',
  )
  return (keys) => (keys.length === 0 ? [] : countersByKey.all(JSON.stringify(keys)))
}

export function createLimitStore(db: Db): LimitStore {
  const write = limitWriter(db)
  const read = limitReader(db)
  const writeAudit = auditWriter(db)
  return {
    async get(keys) {
      return read(keys)
    },
    async reserve(hits, now, verdict) {
      // BEGIN IMMEDIATE holds the write lock from the read to the hits: no other
      // reservation, in this process or another, reads the counters in between.
      return immediate(db, () => {
        const refused = verdict(read(hits.map((h) => h.key)))
        if (refused === null) write(hits, now)
        return refused
      })
    },
    async apply(updates, now, audit) {
      if (updates.length === 0 && !audit) return []
      return immediate(db, () => {
        const counters = write(updates, now)
        if (audit) writeAudit(audit)
        return counters
      })
    },
  }
}

/** An audit event as its row: detail as JSON text (the PostgreSQL store has the same helper). */
export const toAuditRow = (event: AuditEvent) => ({ ...event, actorUserId: event.actorUserId ?? null, detail: event.detail === null ? null : JSON.stringify(event.detail) })

/** Inserts one audit event; call it inside a transaction (with the writes the event reports).
 *  Prepared once: every login writes one, and drizzle builds an unprepared insert afresh. */
export function auditWriter(db: Db): (event: AuditEvent) => void {
  const p = sql.placeholder
  const insert = db
    .insert(auditEvents)
    .values({ at: p('at'), type: p('type'), tenantId: p('tenantId'), userId: p('userId'), ip: p('ip'), userAgent: p('userAgent'), apiKeyId: p('apiKeyId'), actorUserId: p('actorUserId'), detail: p('detail') })
    .prepare()
  return (event) => void insert.run(toAuditRow(event))
}

export function createAuditStore(db: Db): AuditStore {
  const writeAudit = auditWriter(db)
  return {
    async record(event) {
      await immediate(db, () => writeAudit(event))
    },
    async recordMany(events) {
      // In chunks: one INSERT of thousands of rows would pass SQLite's limit on bound values.
      await immediate(db, () => {
        for (let i = 0; i < events.length; i += 500) db.insert(auditEvents).values(events.slice(i, i + 500).map(toAuditRow)).run()
      })
    },
    async query(filter) {
      const rows = db
        .select()
        .from(auditEvents)
        .where(auditFilter(auditEvents, filter))
        .orderBy(desc(auditEvents.at), desc(auditEvents.id))
        .limit(filter.limit ?? 100)
        .all()
      return rows.map((row) => ({ ...row, detail: row.detail === null ? null : JSON.parse(row.detail) }))
    },
  }
}
