// The mail outbox over SQLite. A message is claimed by one worker at a time with a single
// UPDATE ... RETURNING (atomic in SQLite), under a lease: if the worker dies mid-send, the
// lease runs out and another worker takes the message over.
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm'
import type { OutboxStore } from '../../core/mail/store'
import type { Db } from './client'
import { changesOf, immediate } from './helpers'
import { mailOutbox } from './schema'

export function createOutboxStore(db: Db): OutboxStore {
  const claim = db.$client.prepare(`
    UPDATE mail_outbox SET status = 'sending', attempts = attempts + 1, lease_until = $leaseUntil
    WHERE id = (
      SELECT id FROM mail_outbox
      WHERE (status = 'pending' AND next_attempt_at <= $now) OR (status = 'sending' AND lease_until <= $now)
      ORDER BY next_attempt_at LIMIT 1
    )
    RETURNING id`)
  const byId = db.select().from(mailOutbox).where(eq(mailOutbox.id, sql.placeholder('id'))).prepare()

  return {
    async claimNext(now, leaseMs) {
      const row = await immediate(db, () => claim.get({ now, leaseUntil: now + leaseMs }) as { id: string } | null)
      return row ? (byId.get({ id: row.id }) ?? null) : null
    },
    async markSent(id, now) {
      await immediate(db, () => db.update(mailOutbox).set({ status: 'sent', sentAt: now, leaseUntil: null, lastError: null, textBody: null, htmlBody: null }).where(eq(mailOutbox.id, id)).run())
    },
    async markRetry(id, nextAttemptAt, error) {
      await immediate(db, () => db.update(mailOutbox).set({ status: 'pending', nextAttemptAt, leaseUntil: null, lastError: error }).where(eq(mailOutbox.id, id)).run())
    },
    async markFailed(id, error) {
      await immediate(db, () => db.update(mailOutbox).set({ status: 'failed', leaseUntil: null, lastError: error }).where(eq(mailOutbox.id, id)).run())
    },
    async markExpired(id) {
      await immediate(db, () => db.update(mailOutbox).set({ status: 'expired', leaseUntil: null, textBody: null, htmlBody: null }).where(eq(mailOutbox.id, id)).run())
    },
    async list({ pendingOnly }) {
      const rows = db
        .select()
        .from(mailOutbox)
        .where(pendingOnly ? inArray(mailOutbox.status, ['pending', 'sending']) : undefined)
        .orderBy(desc(mailOutbox.createdAt), asc(mailOutbox.id))
        .all()
      return rows.map((row) => ({ ...row, textBody: null, htmlBody: null }))
    },
    async countByStatus() {
      const counts = { pending: 0, sending: 0, sent: 0, failed: 0, expired: 0 }
      for (const row of db.select({ status: mailOutbox.status, n: count() }).from(mailOutbox).groupBy(mailOutbox.status).all()) counts[row.status] = row.n
      return counts
    },
    async purgeErased() {
      // secure_delete zeroes an erased body in the page, but the WAL still holds the frames
      // written before (the body as inserted). A TRUNCATE checkpoint copies the WAL into the
      // database and empties it. It waits (busy timeout) for readers; if some still hold an
      // old snapshot it does what it can, and the next delivery round tries again.
      db.$client.run('PRAGMA wal_checkpoint(TRUNCATE)')
    },
    async retryFailed(now) {
      return changesOf(
        db.update(mailOutbox).set({ status: 'pending', attempts: 0, nextAttemptAt: now, lastError: null }).where(and(eq(mailOutbox.status, 'failed'))).run(),
      )
    },
  }
}
