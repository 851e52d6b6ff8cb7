// The mail outbox over PostgreSQL. Several instances' workers may claim at once: the claim is
// one UPDATE whose row is picked FOR UPDATE SKIP LOCKED, so each message goes to exactly one
// worker, and the lease lets another take it over if that worker dies mid-send.
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm'
import type { OutboxStore } from '../../core/mail/store'
import type { OutboxMessage } from '../../core/types'
import type { PgDb } from './client'
import { mailOutbox } from './schema'

export function createPgOutboxStore(db: PgDb): OutboxStore {
  const update = (id: string, fields: Partial<OutboxMessage>) => db.update(mailOutbox).set(fields).where(eq(mailOutbox.id, id))
  return {
    async claimNext(now, leaseMs) {
      const due = sql`SELECT id FROM mail_outbox
        WHERE (status = 'pending' AND next_attempt_at <= ${now}::bigint) OR (status = 'sending' AND lease_until <= ${now}::bigint)
        ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED`
      const [row] = await db
        .update(mailOutbox)
        .set({ status: 'sending', attempts: sql`${mailOutbox.attempts} + 1`, leaseUntil: now + leaseMs })
        .where(sql`${mailOutbox.id} = (${due})`)
        .returning()
      return row ?? null
    },
    async markSent(id, now) {
      await update(id, { status: 'sent', sentAt: now, leaseUntil: null, lastError: null, textBody: null, htmlBody: null })
    },
    async markRetry(id, nextAttemptAt, error) {
      await update(id, { status: 'pending', nextAttemptAt, leaseUntil: null, lastError: error })
    },
    async markFailed(id, error) {
      await update(id, { status: 'failed', leaseUntil: null, lastError: error })
    },
    async markExpired(id) {
      await update(id, { status: 'expired', leaseUntil: null, textBody: null, htmlBody: null })
    },
    async list({ pendingOnly }) {
      const rows = await db
        .select()
        .from(mailOutbox)
        .where(pendingOnly ? inArray(mailOutbox.status, ['pending', 'sending']) : undefined)
        .orderBy(desc(mailOutbox.createdAt), asc(mailOutbox.id))
      return rows.map((row) => ({ ...row, textBody: null, htmlBody: null }))
    },
    async countByStatus() {
      const counts = { pending: 0, sending: 0, sent: 0, failed: 0, expired: 0 }
      for (const row of await db.select({ status: mailOutbox.status, n: count() }).from(mailOutbox).groupBy(mailOutbox.status)) counts[row.status] = Number(row.n)
      return counts
    },
    async purgeErased() {
      // Not yet: an UPDATE leaves the old row version (with the body) on disk until VACUUM
      // reclaims it and later writes reuse the space. Tracked in issue 9.
    },
    async retryFailed(now) {
      const rows = await db
        .update(mailOutbox)
        .set({ status: 'pending', attempts: 0, nextAttemptAt: now, lastError: null })
        .where(and(eq(mailOutbox.status, 'failed')))
        .returning({ id: mailOutbox.id })
      return rows.length
    },
  }
}
