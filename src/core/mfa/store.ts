// The storage contract of second factors (TOTP, recovery codes) and login challenges: composed into Store (core/store.ts), implemented by
// each engine in src/db.
import type { Blocked } from '../guards/limit-rules'
import type { LimitUpdate } from '../guards/store'
import type { AuditEvent, LimitCounter, MfaChallenge, OutboxMessage, RecoveryCode, TotpFactor } from '../types'

export interface MfaStore {
  findTotp(userId: string): Promise<TotpFactor | null>
  /** Starts an enrolment, replacing an unconfirmed factor; false when a confirmed one exists. */
  beginTotp(factor: TotpFactor): Promise<boolean>
  /**
   * Confirms the user's unconfirmed factor with the step of the code entered, replaces the
   * recovery codes, ends every session of the user but `keepSessionId` (sessions opened
   * before the account was protected must not keep it), queues the mail and records the audit
   * event; one transaction. False when there was no unconfirmed factor any more (a
   * concurrent confirmation won).
   */
  confirmTotp(input: { userId: string; step: number; now: number; keepSessionId: string; recoveryCodes: RecoveryCode[]; mail: OutboxMessage; audit: AuditEvent }): Promise<boolean>
  /** Records `step` as used if it is after the last used one; false if it is not (a replay, or a concurrent use). */
  useTotpStep(userId: string, step: number): Promise<boolean>
  /** Spends the user's unused recovery code with this hash and queues `notice` (if given) with it; false if there is none. */
  useRecoveryCode(userId: string, codeHash: string, now: number, notice?: OutboxMessage): Promise<boolean>
  /** Whether the user has an unused recovery code with this hash. */
  hasRecoveryCode(userId: string, codeHash: string): Promise<boolean>
  /** Unused recovery codes left. */
  countRecoveryCodes(userId: string): Promise<number>
  /** Removes the factor and its recovery codes (and live challenges), queues `mail` if given, records
   *  the audit event; false when there was no factor. */
  removeTotp(input: { userId: string; mail?: OutboxMessage; audit: AuditEvent }): Promise<boolean>
  createChallenge(challenge: MfaChallenge): Promise<void>
  findChallenge(tokenHash: string): Promise<MfaChallenge | null>
  /**
   * Admits one try of a code against the challenge before it is judged, in one transaction:
   * none if the challenge is spent, expired or out of tries (`admitted` false, nothing
   * written); none if `verdict` refuses on the counters of `limits` (the account's login
   * back-off: `refused`, nothing written); else the challenge's try and the `limits` hits.
   */
  reserveChallengeTry(input: {
    id: string
    now: number
    maxAttempts: number
    limits: Array<Extract<LimitUpdate, { op: 'hit' }>>
    verdict: (counters: LimitCounter[]) => Blocked | null
  }): Promise<{ refused: Blocked | null; counted: boolean; admitted: boolean }>
  /** Spends the challenge if it is still unspent, unexpired and within `maxAttempts` tries (its
   *  own reserved try included); false if not (a concurrent verification won). */
  spendChallenge(id: string, now: number, maxAttempts: number): Promise<boolean>
}
