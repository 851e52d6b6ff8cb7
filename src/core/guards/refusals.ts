// Refused requests (429s) are counted, not written one by one. A flood of refused requests
// used to write a fsync'd audit row each (3,000 rows for 3,000 refused logins), so refusing
// cost as much disk as serving and slowed legitimate requests. Refusals are now tallied in
// memory per subject (event type, tenant, client IP, masked address) and written as one audit
// row per subject and window, carrying the count and the window's first and last refusal.
// What a crash loses is at most one window of counts of requests that were refused anyway.
import type { Actor, AuditType } from '../audit/types'
import type { Store } from '../store'
import type { AuditEvent } from '../types'

/** Distinct subjects kept per window; past it, refusals of a type are tallied as one "other". */
const MAX_SUBJECTS = 10_000

interface Tally {
  event: AuditEvent
  count: number
  firstAt: number
}

export type RefusalType = Extract<AuditType, `${string}.limited`>

export class RefusalTally {
  private tallies = new Map<string, Tally>()

  record(type: RefusalType, actor: Actor, fields: { tenantId: string | null; detail: Record<string, unknown> }, at: number): void {
    const subject = JSON.stringify([type, fields.tenantId, actor.ip, fields.detail])
    const key = this.tallies.has(subject) || this.tallies.size < MAX_SUBJECTS ? subject : JSON.stringify([type, 'other'])
    const tally = this.tallies.get(key)
    if (tally) {
      tally.count++
      tally.event.at = at
      return
    }
    const overflow = key !== subject
    this.tallies.set(key, {
      event: {
        at,
        type,
        tenantId: overflow ? null : fields.tenantId,
        userId: null,
        apiKeyId: null,
        ip: overflow ? null : actor.ip,
        userAgent: overflow ? null : (actor.userAgent?.slice(0, 256) ?? null),
        detail: overflow ? { subjects: 'more than one' } : fields.detail,
      },
      count: 1,
      firstAt: at,
    })
  }

  /** Writes one audit row per subject of the window that ends now, in one transaction. */
  async flush(store: Pick<Store, 'audit'>): Promise<number> {
    if (this.tallies.size === 0) return 0
    const tallies = [...this.tallies.values()]
    this.tallies = new Map()
    await store.audit.recordMany(tallies.map(({ event, count, firstAt }) => ({ ...event, detail: { ...event.detail, count, firstAt: new Date(firstAt).toISOString() } })))
    return tallies.length
  }
}
