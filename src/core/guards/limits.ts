// Abuse limits (product spec §9), kept in the database so they survive restarts and hold
// across instances. Two kinds of rule:
//   - a window: at most `limit` counted events per window (per-IP request budgets);
//   - a back-off: after `threshold` consecutive failures, blocked for 1 s doubling up to a
//     cap, until a success resets the run (login per account and IP, per account; OTPs).
// Keys are hashed with a server key, so the table holds no address or IP. Login limits are
// keyed by the e-mail as typed (normalised), never by whether it exists: an unknown address
// walks through exactly the same answers as a registered one.
import ipaddr from 'ipaddr.js'
import type { Actor } from '../audit/types'
import type { Deps } from '../deps'
import type { RefusalType } from './refusals'
import { tooManyRequests } from '../errors'
import { hmacSha256 } from '../secrets'
import type { BackoffRule, Blocked, Rule, WindowRule } from './limit-rules'
import type { LimitUpdate } from './store'
import type { SessionStartRecord } from '../sessions/store'

export * from './limit-rules'
import type { AuditEvent, LimitCounter } from '../types'



type LimitDeps = Pick<Deps, 'store' | 'clock' | 'serverKeys' | 'refusals'>

const keyOf = (deps: Pick<Deps, 'serverKeys'>, rule: Rule, subject: string) => hmacSha256(deps.serverKeys.hmac, `limit:${rule.name}:${subject}`)

/**
 * The network a per-IP limit counts: an IPv4 address, or an IPv6 client's /64. One
 * subscriber or host usually holds a whole /64, so counting single IPv6 addresses would give
 * it 2^64 fresh budgets.
 */
export function ipSubject(ip: string | null): string {
  if (ip === null || !ipaddr.IPv6.isValid(ip)) return `${ip}`
  const parts = ipaddr.IPv6.parse(ip).parts.slice(0, 4)
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`
}

/** The block after the `failures`-th failure of a run: none before the threshold, then base
 *  doubling with each further failure, at most cap. The one definition of the back-off: the
 *  store only counts failures, on either engine. */
export function backoffDelayMs(rule: BackoffRule, failures: number): number {
  if (failures < rule.threshold) return 0
  return Math.min(rule.capMs, rule.baseMs * 2 ** Math.min(40, failures - rule.threshold))
}

/** How long `counter` still blocks under `rule`, in ms (0: not blocking). A back-off counter's
 *  updatedAt is the time of the run's latest failure. */
function blockingMs(rule: Rule, counter: LimitCounter | undefined, now: number): number {
  if (!counter) return 0
  if (rule.kind === 'backoff') return Math.max(0, counter.updatedAt + backoffDelayMs(rule, counter.count) - now)
  const windowEnd = counter.windowStart + rule.windowMs
  return windowEnd > now && counter.count >= rule.limit ? windowEnd - now : 0
}

/** Who was refused, for the tally of refusals (core/refusals.ts). */
export interface Refusal {
  type: RefusalType
  actor: Actor
  tenantId: string
  detail?: Record<string, unknown>
}

function refuse(deps: LimitDeps, refusal: Refusal, limits: string[], waitMs: number): never {
  deps.refusals.record(refusal.type, refusal.actor, { tenantId: refusal.tenantId, detail: { ...refusal.detail, limits } }, deps.clock.now())
  throw tooManyRequests(waitMs)
}

/** The rules that block now among `keyed`, by the counters as they stand. */
function blockingOf(keyed: Array<{ rule: Rule; key: string }>, counters: LimitCounter[], now: number): Blocked | null {
  const byKey = new Map(counters.map((c) => [c.key, c]))
  const blocking = keyed.map(({ rule, key }) => ({ rule, waitMs: blockingMs(rule, byKey.get(key), now) })).filter(({ waitMs }) => waitMs > 0)
  return blocking.length === 0 ? null : { limits: blocking.map(({ rule }) => rule.name), waitMs: Math.max(...blocking.map(({ waitMs }) => waitMs)) }
}

/**
 * Refuses (429, Retry-After the longest wait) if any of these subjects is blocked now. It
 * only reads: for a request that spends nothing guessable. A guess of a secret is admitted by
 * reserveGuess instead, which counts it in the same step.
 */
export async function guardLimits(deps: LimitDeps, checks: Array<[Rule, string]>, refusal: Refusal): Promise<void> {
  const keyed = checks.map(([rule, subject]) => ({ rule, key: keyOf(deps, rule, subject) }))
  const blocked = blockingOf(keyed, await deps.store.limits.get(keyed.map((k) => k.key)), deps.clock.now())
  if (blocked) refuse(deps, refusal, blocked.limits, blocked.waitMs)
}

/**
 * Spends one request of a window budget (per-IP request limits). A request over budget is
 * refused before anything is written; one that races past the read is refused by the count
 * the write returns.
 */
export async function spendBudget(deps: LimitDeps, rule: WindowRule, subject: string, refusal: Refusal): Promise<void> {
  await guardLimits(deps, [[rule, subject]], refusal)
  const now = deps.clock.now()
  const [counter] = await deps.store.limits.apply([{ key: keyOf(deps, rule, subject), op: 'hit', windowMs: rule.windowMs }], now)
  if (counter && counter.count > rule.limit) refuse(deps, refusal, [rule.name], counter.windowStart + rule.windowMs - now)
}

/** A guess admitted by reserveGuess: already counted as a failure under each of its rules
 *  (unless `counted` is false: a store that counts only guesses that could have matched). */
export interface GuessReservation {
  checks: Array<[Rule, string]>
  counted: boolean
}


/** What a store runs in the one transaction that admits a guess: it reads the counters of
 *  `hits`, asks `verdict`, and if that is null applies the hits (perhaps with writes of its own). */
export type ReserveStep<R> = (hits: Array<Extract<LimitUpdate, { op: 'hit' }>>, now: number, verdict: (counters: LimitCounter[]) => Blocked | null) => Promise<{ refused: Blocked | null; counted: boolean } & R>

/**
 * Admits one guess of a secret (a password, a second-factor code, an OTP) under its rules,
 * counting it as a failure in the same atomic step (product spec §18): a limit that only read
 * its counters let a burst of concurrent guesses through before the first failure was
 * written. Refused (429) when any subject blocks now, with nothing written. Once the guess is
 * judged, settle says what becomes of the count. `step` is the store's transaction when the
 * guess is counted together with other writes (an OTP's own tries).
 */
export async function reserveGuess<R = object>(deps: LimitDeps, checks: Array<[Rule, string]>, refusal: Refusal, step?: ReserveStep<R>): Promise<GuessReservation & R> {
  const keyed = checks.map(([rule, subject]) => ({ rule, key: keyOf(deps, rule, subject) }))
  const now = deps.clock.now()
  const hits = keyed.map(({ rule, key }) => ({ key, op: 'hit' as const, windowMs: rule.windowMs }))
  const verdict = (counters: LimitCounter[]) => blockingOf(keyed, counters, now)
  const reserve: ReserveStep<R> = step ?? (async (h, n, v) => ({ refused: await deps.store.limits.reserve(h, n, v), counted: true }) as { refused: Blocked | null; counted: boolean } & R)
  const { refused, ...result } = await reserve(hits, now, verdict)
  if (refused) refuse(deps, refusal, refused.limits, refused.waitMs)
  return { checks, ...(result as { counted: boolean } & R) }
}

/**
 * What a judged guess does to the counts its reservation made: a failure keeps them; a
 * success ends the back-off runs its rules end on success and takes its own count back from
 * the others; `unjudged` (the secret was never checked: overload, a challenge already spent,
 * or a right password whose second factor is still to come) takes every count back.
 */
export function settleGuess(deps: Pick<Deps, 'serverKeys'>, reservation: GuessReservation, verdict: 'failure' | 'success' | 'unjudged'): LimitUpdate[] {
  if (verdict === 'failure' || !reservation.counted) return []
  return reservation.checks.map(([rule, subject]): LimitUpdate => {
    const key = keyOf(deps, rule, subject)
    return verdict === 'success' && rule.kind === 'backoff' && rule.resetOnSuccess ? { key, op: 'reset' } : { key, op: 'refund' }
  })
}

/** Applies settleGuess's updates, with the audit event of the outcome if given (one transaction). */
export async function settle(deps: LimitDeps, reservation: GuessReservation, verdict: 'failure' | 'success' | 'unjudged', audit?: AuditEvent): Promise<void> {
  const updates = settleGuess(deps, reservation, verdict)
  if (updates.length === 0 && !audit) return
  if (updates.length === 0) return deps.store.audit.record(audit!)
  await deps.store.limits.apply(updates, deps.clock.now(), audit)
}

/** settleGuess's updates as a session's start record carries them (store.ts). */
export function sessionLimitUpdates(updates: LimitUpdate[]): Pick<SessionStartRecord, 'limitResets' | 'limitRefunds'> {
  return { limitResets: updates.filter((u) => u.op === 'reset').map((u) => u.key), limitRefunds: updates.filter((u) => u.op === 'refund').map((u) => u.key) }
}

/** Runs `judge` under a reservation: should it throw before its verdict (overload, a database
 *  error), the guess was never judged and its counts are taken back. */
export async function judged<T>(deps: LimitDeps, reservation: GuessReservation, judge: () => Promise<T>): Promise<T> {
  try {
    return await judge()
  } catch (error) {
    await settle(deps, reservation, 'unjudged').catch(() => {})
    throw error
  }
}
