// Retention over PostgreSQL: the SQLite selections (../retention-store.ts), one bounded DELETE
// per call.
import { sql, type SQL } from 'drizzle-orm'
import type { PruneTarget, Store } from '../../core/store'
import type { PgDb } from './client'

const selections = (before: number, now: number, limit: number): Record<PruneTarget, [table: string, key: string, select: SQL]> => ({
  auditEvents: ['audit_events', 'id', sql`SELECT id FROM audit_events WHERE at < ${before}::bigint ORDER BY id LIMIT ${limit}`],
  refreshTokens: [
    'refresh_tokens',
    'id',
    sql`SELECT t.id FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id WHERE coalesce(f.revoked_at, f.expires_at) < ${before}::bigint LIMIT ${limit}`,
  ],
  refreshFamilies: [
    'refresh_families',
    'id',
    sql`SELECT id FROM refresh_families f WHERE coalesce(revoked_at, expires_at) < ${before}::bigint
        AND NOT EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family_id = f.id) LIMIT ${limit}`,
  ],
  sentMail: ['mail_outbox', 'id', sql`SELECT id FROM mail_outbox WHERE status IN ('sent', 'expired') AND coalesce(sent_at, created_at) < ${before}::bigint LIMIT ${limit}`],
  resetRequests: ['password_reset_requests', 'id', sql`SELECT id FROM password_reset_requests WHERE created_at < ${before}::bigint LIMIT ${limit}`],
  otps: ['password_reset_otps', 'user_id', sql`SELECT user_id FROM password_reset_otps WHERE coalesce(spent_at, expires_at) < ${before}::bigint LIMIT ${limit}`],
  setupTokens: ['setup_tokens', 'id', sql`SELECT id FROM setup_tokens WHERE coalesce(used_at, expires_at) < ${before}::bigint LIMIT ${limit}`],
  limitCounters: [
    'limit_counters',
    'key',
    sql`SELECT key FROM limit_counters WHERE updated_at < ${before}::bigint AND (blocked_until IS NULL OR blocked_until < ${now}::bigint) LIMIT ${limit}`,
  ],
})

export function createPgPrune(db: PgDb): Store['prune'] {
  return async (target, before, now, limit) => {
    const [table, key, select] = selections(before, now, limit)[target]
    const rows = await db.execute(sql`DELETE FROM ${sql.identifier(table)} WHERE ${sql.identifier(key)} IN (${select}) RETURNING 1`)
    return rows.length
  }
}
