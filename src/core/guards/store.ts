// The storage contract of abuse-limit counters and idempotency keys: composed into Store (core/store.ts), implemented by
// each engine in src/db.
import type { AuditEvent, LimitCounter } from '../types'

/** One change to a limit counter. The store only counts; what a count means (a spent budget,
 *  a back-off) is decided in core/limits.ts. */
export type LimitUpdate =
  /** One more hit in a fixed window (restarted once the window is over); updatedAt becomes now. */
  | { key: string; op: 'hit'; windowMs: number }
  | { key: string; op: 'reset' }
  /** Takes one hit back (a reserved guess that succeeded or was never judged): count less one, never below 0. */
  | { key: string; op: 'refund' }

export interface LimitStore {
  get(keys: string[]): Promise<LimitCounter[]>
  /**
   * A guess's reservation: reads the counters of `hits` and, unless `verdict` refuses on
   * them (returns non-null), applies the hits; atomically with every other reservation of the
   * same keys, on any instance, so a burst is counted as the same guesses in a row would be.
   * Returns the verdict (null: admitted and counted).
   */
  reserve<T>(hits: Array<Extract<LimitUpdate, { op: 'hit' }>>, now: number, verdict: (counters: LimitCounter[]) => T | null): Promise<T | null>
  /** Applies the updates in one transaction, with the audit event of the outcome that made them
   *  if given; returns the counters they touched, as they are after it. */
  apply(updates: LimitUpdate[], now: number, audit?: AuditEvent): Promise<LimitCounter[]>
}

/** An Idempotency-Key's first answer (core/idempotency.ts). */
export interface IdempotencyRecord {
  tenantId: string
  key: string
  requestHash: string
  userId: string | null
  /** Null while the first request runs. */
  statusCode: number | null
  sealedResponse: string | null
  createdAt: number
}

export interface IdempotencyStore {
  /**
   * Claims the key for a request: null when it was free, else the record that holds it. A
   * record created before `staleBefore`, or still unanswered since before `abandonedBefore`
   * (its process died), is replaced.
   */
  claim(record: Pick<IdempotencyRecord, 'tenantId' | 'key' | 'requestHash' | 'createdAt'>, expiry: { staleBefore: number; abandonedBefore: number }): Promise<IdempotencyRecord | null>
  complete(tenantId: string, key: string, answer: { userId: string | null; statusCode: number; sealedResponse: string }): Promise<void>
  /** Frees a claimed key whose request failed, so that a retry runs it again. */
  release(tenantId: string, key: string): Promise<void>
}
