// Retention over SQLite: one bounded DELETE per call, picking the oldest rows past their
// time by primary key, so each call holds the write lock only briefly.
import type { PruneTarget, Store } from '../core/store'
import type { Db } from './client'
import { immediate } from './helpers'

const SELECTIONS: Record<PruneTarget, [table: string, key: string, select: string]> = {
  auditEvents: ['audit_events', 'id', 'SELECT id FROM audit_events WHERE at < $before ORDER BY id LIMIT $limit'],
  // A session ends when it is revoked or reaches its absolute end; its tokens go first.
  refreshTokens: [
    'refresh_tokens',
    'id',
    `SELECT t.id FROM refresh_tokens t JOIN refresh_families f ON f.id = t.family_id
     WHERE coalesce(f.revoked_at, f.expires_at) < $before LIMIT $limit`,
  ],
  refreshFamilies: [
    'refresh_families',
    'id',
    `SELECT id FROM refresh_families f WHERE coalesce(revoked_at, expires_at) < $before
     AND NOT EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family_id = f.id) LIMIT $limit`,
  ],
  sentMail: ['mail_outbox', 'id', "SELECT id FROM mail_outbox WHERE status IN ('sent', 'expired') AND coalesce(sent_at, created_at) < $before LIMIT $limit"],
  resetRequests: ['password_reset_requests', 'id', 'SELECT id FROM password_reset_requests WHERE created_at < $before LIMIT $limit'],
  otps: ['password_reset_otps', 'user_id', 'SELECT user_id FROM password_reset_otps WHERE coalesce(spent_at, expires_at) < $before LIMIT $limit'],
  setupTokens: ['setup_tokens', 'id', 'SELECT id FROM setup_tokens WHERE coalesce(used_at, expires_at) < $before LIMIT $limit'],
  limitCounters: [
    'limit_counters',
    'key',
    'SELECT key FROM limit_counters WHERE updated_at < $before AND (blocked_until IS NULL OR blocked_until < $now) LIMIT $limit',
  ],
}

export function createPrune(db: Db): Store['prune'] {
  const statements = Object.fromEntries(
    Object.entries(SELECTIONS).map(([target, [table, key, select]]) => [target, db.$client.prepare(`DELETE FROM ${table} WHERE ${key} IN (${select})`)]),
  ) as Record<PruneTarget, ReturnType<Db['$client']['prepare']>>
  return async (target, before, now, limit) => {
    const params: Record<string, number> = { before, limit }
    if (target === 'limitCounters') params.now = now
    return immediate(db, () => statements[target].run(params).changes)
  }
}
