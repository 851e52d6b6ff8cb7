// Retention, for both engines: one bounded DELETE per call, picking rows past their time by
// primary key, so each call holds the write lock only briefly. Every pick is served by an
// index on the row's end (test/query-plans.test.ts EXPLAINs each): a pick that scanned would
// hold SQLite's write lock for as long as the table takes to read, and the last batch of each
// round, which finds nothing, would read all of it. The SQL is plain enough to be the same on
// SQLite and PostgreSQL.
import { sql, type SQL } from 'drizzle-orm'
import type { Store } from '../core/store'
import type { PruneTarget } from '../core/retention/store'
import type { Db } from './sqlite/client'
import type { PgDb } from './pg/client'

/**
 * Ended before `before`: `coalesce(end, fallback) < before` (a row ends when it is spent, or
 * else at its expiry), written so that one index on (end, fallback) serves both halves; the
 * engines do not use such an index for the coalesce.
 */
const endedBefore = (end: string, fallback: string, before: number, alias = '', also?: SQL) => {
  const [e, f] = [sql.raw(alias + end), sql.raw(alias + fallback)]
  // A condition on the index's leading column goes into both halves: `status IN (…) AND (a OR
  // b)` is served by that column alone (SQLite walks every row of the status), the two
  // halves each by a range.
  if (also) return sql`((${also} AND ${e} < ${before}) OR (${also} AND ${e} IS NULL AND ${f} < ${before}))`
  return sql`(${e} < ${before} OR (${e} IS NULL AND ${f} < ${before}))`
}

export function pruneStatement(target: PruneTarget, before: number, limit: number, engine: 'sqlite' | 'postgres' = 'sqlite'): SQL {
  const [table, key, select] = {
    // Oldest first by `at` (its index): ordered by id, a batch that finds nothing left to
    // delete would walk the whole log to learn so.
    auditEvents: ['audit_events', 'id', sql`SELECT id FROM audit_events WHERE at < ${before} ORDER BY at LIMIT ${limit}`],
    // A session ends when it is revoked or reaches its absolute end; its tokens go first.
    refreshTokens: [
      'refresh_tokens',
      'id',
      sql`SELECT t.id FROM refresh_families f JOIN refresh_tokens t ON t.family_id = f.id WHERE ${endedBefore('revoked_at', 'expires_at', before, 'f.')} LIMIT ${limit}`,
    ],
    refreshFamilies: [
      'refresh_families',
      'id',
      sql`SELECT id FROM refresh_families f WHERE ${endedBefore('revoked_at', 'expires_at', before, 'f.')}
          AND NOT EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family_id = f.id) LIMIT ${limit}`,
    ],
    sentMail: ['mail_outbox', 'id', sql`SELECT id FROM mail_outbox WHERE ${endedBefore('sent_at', 'created_at', before, '', sql`status IN ('sent', 'expired')`)} LIMIT ${limit}`],
    resetRequests: ['password_reset_requests', 'id', sql`SELECT id FROM password_reset_requests WHERE created_at < ${before} LIMIT ${limit}`],
    otps: ['password_reset_otps', 'user_id', sql`SELECT user_id FROM password_reset_otps WHERE ${endedBefore('spent_at', 'expires_at', before)} LIMIT ${limit}`],
    setupTokens: ['setup_tokens', 'id', sql`SELECT id FROM setup_tokens WHERE ${endedBefore('used_at', 'expires_at', before)} LIMIT ${limit}`],
    // Its key has two columns too, and rows past their time must go alone: picked by both.
    pendingSignups: ['pending_signups', ['tenant_id', 'email_key'], sql`SELECT tenant_id, email_key FROM pending_signups WHERE ${endedBefore('spent_at', 'expires_at', before)} LIMIT ${limit}`],
    mfaChallenges: ['mfa_challenges', 'id', sql`SELECT id FROM mfa_challenges WHERE ${endedBefore('spent_at', 'expires_at', before)} LIMIT ${limit}`],
    // (by expiry: a flow is done within its 10 minutes or never)
    federationFlows: ['federation_flows', 'id', sql`SELECT id FROM federation_flows WHERE expires_at < ${before} LIMIT ${limit}`],
    webauthnChallenges: ['webauthn_challenges', 'id', sql`SELECT id FROM webauthn_challenges WHERE ${endedBefore('spent_at', 'expires_at', before)} LIMIT ${limit}`],
    // (by expiry, not spending: a spent code is kept its 60 s so that a second use revokes its grant)
    oidcCodes: ['oidc_codes', 'id', sql`SELECT id FROM oidc_codes WHERE expires_at < ${before} LIMIT ${limit}`],
    deviceAuthorizations: ['device_authorizations', 'id', sql`SELECT id FROM device_authorizations WHERE expires_at < ${before} LIMIT ${limit}`],
    // (by its time, as idempotency keys: rows of the same expiry all go, and each is past it)
    clientAssertions: ['client_assertions', 'expires_at', sql`SELECT expires_at FROM client_assertions WHERE expires_at < ${before} ORDER BY expires_at LIMIT ${limit}`],
    signupRequests: ['signup_requests', 'id', sql`SELECT id FROM signup_requests WHERE created_at < ${before} LIMIT ${limit}`],
    limitCounters: ['limit_counters', 'key', sql`SELECT key FROM limit_counters WHERE updated_at < ${before} LIMIT ${limit}`],
    // A finished delivery's next_attempt_at is when it succeeded or died (webhook-store.ts):
    // its end, and a range of the due index.
    webhookDeliveries: ['webhook_deliveries', 'id', sql`SELECT id FROM webhook_deliveries WHERE status IN ('succeeded', 'dead') AND next_attempt_at < ${before} LIMIT ${limit}`],
    // Each kind of event by its own partial index (`deliveries = 0` written out, so that the
    // planners see the index's condition): a pick of the events of no delivery that walked
    // past a month of delivered events would read them all in every batch.
    webhookEvents: ['webhook_events', 'id', sql`SELECT id FROM webhook_events WHERE deliveries = 0 AND fanned_out_at < ${before} LIMIT ${limit}`],
    // (the NOT EXISTS is a look-up of webhook_deliveries_event_idx per event)
    deliveredWebhookEvents: [
      'webhook_events',
      'id',
      sql`SELECT id FROM webhook_events e WHERE deliveries > 0 AND fanned_out_at < ${before} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id) LIMIT ${limit}`,
    ],
    idempotencyKeys: ['idempotency_keys', 'created_at', sql`SELECT created_at FROM idempotency_keys WHERE created_at < ${before} ORDER BY created_at LIMIT ${limit}`],
  }[target] as [string, string | string[], SQL]
  // PostgreSQL: a picked key is looked up as `= ANY(ARRAY(…))`: against `IN (…)` the planner
  // guesses the set's size and, on a table with few rows (OpenID codes live a minute), joined
  // it by walking the table's whole primary key.
  if (engine === 'postgres' && typeof key === 'string') return sql`DELETE FROM ${sql.identifier(table)} WHERE ${sql.identifier(key)} = ANY(ARRAY(${select}))`
  const keyColumns = typeof key === 'string' ? sql.identifier(key) : sql`(${sql.join(key.map((k) => sql.identifier(k)), sql`, `)})`
  return sql`DELETE FROM ${sql.identifier(table)} WHERE ${keyColumns} IN (${select})`
}

export function createPrune(db: Db): Store['prune'] {
  return async (target, before, limit) => (db.run(pruneStatement(target, before, limit)) as unknown as { changes: number }).changes
}

export function createPgPrune(db: PgDb): Store['prune'] {
  return async (target, before, limit) => (await db.execute(sql`${pruneStatement(target, before, limit, 'postgres')} RETURNING 1`)).length
}
