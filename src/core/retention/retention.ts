// Retention: what authd keeps, and for how long. Rows that no rule reads any more are deleted
// in the background, in small batches with a pause between them, so pruning never holds the
// write lock long enough to delay a request.
import type { Config } from '../../config'
import type { Deps } from '../deps'
import type { PruneTarget } from './store'
import { RETRY_FOR_MS } from '../webhooks/delivery'

const DAY = 86_400_000

/** For each kind of row: rows that ended before now minus this many ms are deleted. */
export function retentionPolicy(config: Pick<Config, 'retention' | 'limits'>): Record<PruneTarget, number> {
  const r = config.retention
  const longestBlockMs = Math.max(config.limits.loginBackoffMaxSec, config.limits.otpLockoutSec) * 1000
  return {
    auditEvents: r.auditSec * 1000,
    // Ended sessions (revoked, or past their end) with all their tokens. Live sessions keep
    // their spent tokens: presenting one must still be detected as reuse.
    refreshTokens: r.sessionsSec * 1000,
    refreshFamilies: r.sessionsSec * 1000,
    sentMail: r.mailSec * 1000,
    // The per-address reset limits look back one hour; spent or expired secrets are kept a
    // little for investigations.
    resetRequests: r.resetDataSec * 1000,
    otps: r.resetDataSec * 1000,
    setupTokens: r.resetDataSec * 1000,
    // A pending sign-up holds names and a password hash of someone who is not a user: it
    // goes as soon as its code can no longer be used. The limits look back one hour.
    pendingSignups: 0,
    signupRequests: r.resetDataSec * 1000,
    // A login challenge is of no use once spent or expired (5 minutes).
    mfaChallenges: 0,
    // An upstream sign-in's flow likewise (10 minutes).
    federationFlows: 0,
    // A passkey ceremony's challenge likewise (5 minutes).
    webauthnChallenges: 0,
    // An OpenID authorization code likewise (60 s); a reuse after that is an unknown code.
    oidcCodes: 0,
    // A device authorization likewise (10 minutes): a poll after that is an unknown code.
    deviceAuthorizations: 0,
    // A client assertion's jti is kept apart only while the assertion could be replayed.
    clientAssertions: 0,
    // Counters idle this long block nothing any more: windows last at most a day (back-off
    // runs), and a back-off blocks at most its cap after the latest failure.
    limitCounters: Math.max(2 * DAY, longestBlockMs + DAY),
    // An Idempotency-Key answers retries for 24 hours (core/idempotency.ts).
    idempotencyKeys: DAY,
    // Delivered or dead webhook deliveries (a dead one can be redelivered until then). Events
    // of no delivery (most: a login's session.created with no endpoint subscribed) are of no
    // use once fanned out, kept a day; an event with deliveries goes once none is left, which
    // is after their retention plus the 3 days they may be retried (a redelivered one, later).
    webhookDeliveries: r.webhooksSec * 1000,
    webhookEvents: DAY,
    deliveredWebhookEvents: r.webhooksSec * 1000 + RETRY_FOR_MS,
  }
}

export interface PruneOptions {
  /** The most rows one batch deletes. */
  batchSize?: number
  /** How long one batch may take: a batch slower than this halves the next one, a batch under
   *  half of it doubles the next (up to batchSize). On SQLite a batch holds the write lock for
   *  its whole statement and commit, so this bounds how long a request's write can wait for
   *  retention: 500 refresh tokens took up to 150 ms to delete from a big table (bench/README.md,
   *  Retention). */
  batchMs?: number
  /** Pause between two batches, so request writes get the lock in between. */
  pauseMs?: number
  /** Told of each batch: its kind of row, rows deleted and how long its statement took (on
   *  SQLite, about how long it held the write lock). bench/retention.ts records the longest. */
  onBatch?: (target: PruneTarget, rows: number, ms: number) => void
}

/** Deletes everything past retention, batch by batch; returns how many rows of each kind. */
export async function pruneExpiredData(deps: Pick<Deps, 'store' | 'clock' | 'config'>, options: PruneOptions = {}): Promise<Record<PruneTarget, number>> {
  const { batchSize = 500, batchMs = 10, pauseMs = 50 } = options
  const policy = retentionPolicy(deps.config)
  const deleted = {} as Record<PruneTarget, number>
  let size = Math.min(100, batchSize)
  for (const target of Object.keys(policy) as PruneTarget[]) {
    deleted[target] = 0
    for (;;) {
      const now = deps.clock.now()
      const started = performance.now()
      const n = await deps.store.prune(target, now - policy[target], size)
      const ms = performance.now() - started
      options.onBatch?.(target, n, ms)
      deleted[target] += n
      if (n < size) break
      size = ms > batchMs ? Math.max(10, Math.floor(size / 2)) : ms < batchMs / 2 ? Math.min(batchSize, size * 2) : size
      await Bun.sleep(pauseMs)
    }
  }
  return deleted
}
