// The storage contract of sign-up with e-mail verification: composed into Store (core/store.ts), implemented by
// each engine in src/db.
import type { HistoryGuardedRequest, ResetHistory } from '../accounts/store'
import type { AuditEvent, OutboxMessage, PendingSignup, User } from '../types'

/** When a mail may leave under the per-address limits: now or later (`at`), or not at all (null). */
export type MailSlot = { at: number } | null

export interface SignupStore {
  /**
   * Records the sign-up request and its audit event; then, as `slot` says for the address's
   * issued requests since `historySince` (read in the same transaction, concurrent requests
   * for the address waiting their turn). With `pending`, the address's pending sign-up (if
   * any) ends: its code stops working and its unsent mail is withdrawn; the newer one is
   * stored if there is a slot, and its mail queued to leave at the slot's time, the code's
   * life starting then: `replacingMail` where a live (unspent, unexpired) pending sign-up was
   * ended, `mail` otherwise. A code mail withdrawn unsent no longer counts among the issued
   * requests (its request is no longer issued), so a burst of replaced sign-ups spends one
   * mail of the budget, not one each. Without a slot nothing is stored, sent or ended (a live
   * pending sign-up and its mail stay). One transaction whatever the address. Returns the slot.
   */
  request(
    input: Omit<HistoryGuardedRequest, 'allowed'> & {
      slot: (history: ResetHistory) => MailSlot
      pending?: PendingSignup
      replacingMail?: OutboxMessage
    },
  ): Promise<MailSlot>
  find(tenantId: string, emailKey: string): Promise<PendingSignup | null>
  /** Counts one try against the address's pending sign-up before its code is judged, if it is
   *  unspent, unexpired and has tries left; false if not (no code may be compared then). */
  reserveTry(input: { tenantId: string; emailKey: string; now: number; maxAttempts: number }): Promise<boolean>
  /**
   * Creates `user` from the pending sign-up, if it is still the unspent, unexpired one with
   * this code hash and at most `maxAttempts` tries (its own reserved try included), deleting
   * it, with the audit event; one transaction. 'spent' when the sign-up was no longer usable (lost a race), 'email-taken'
   * when the address became a user meanwhile (the sign-up is deleted then too).
   */
  complete(input: { user: User; emailKey: string; codeHash: string; now: number; maxAttempts: number; audit: AuditEvent }): Promise<'created' | 'spent' | 'email-taken'>
}
