// The storage contract of the mail outbox: composed into Store (core/store.ts), implemented by
// each engine in src/db.
import type { MailStatus, OutboxMessage } from '../types'

export interface OutboxStore {
  /** Takes the next due message (pending and due, or sending with an expired lease) for one worker. */
  claimNext(now: number, leaseMs: number): Promise<OutboxMessage | null>
  markSent(id: string, now: number): Promise<void>
  markRetry(id: string, nextAttemptAt: number, error: string): Promise<void>
  markFailed(id: string, error: string): Promise<void>
  markExpired(id: string): Promise<void>
  /** Metadata only: bodies come back null. */
  list(filter: { pendingOnly?: boolean }): Promise<OutboxMessage[]>
  /** Puts failed messages back in the queue; returns how many. */
  retryFailed(now: number): Promise<number>
  countByStatus(): Promise<Record<MailStatus, number>>
  /** Makes bodies erased so far unrecoverable from the storage files too (old page
   *  versions, log frames), not only from the tables. */
  purgeErased(): Promise<void>
}
