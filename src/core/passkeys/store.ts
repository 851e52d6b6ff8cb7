// The storage contract of passkeys and WebAuthn challenges: composed into Store (core/store.ts), implemented by
// each engine in src/db.
import type { AuditEvent, OutboxMessage, Passkey, WebauthnChallenge } from '../types'

export interface PasskeyStore {
  /** The user's passkeys, oldest first. */
  listByUser(userId: string): Promise<Passkey[]>
  findByCredentialId(tenantId: string, credentialId: string): Promise<Passkey | null>
  /**
   * Adds the passkey, with the audit event and the mail that tells the user, in one
   * transaction: 'too-many' when the user already has `max`, 'taken' when its credential id is
   * registered in the tenant already.
   */
  insert(input: { passkey: Passkey; max: number; mail: OutboxMessage; audit: AuditEvent }): Promise<'added' | 'too-many' | 'taken'>
  /** Renames the user's passkey; null if the user has no such passkey. */
  rename(id: string, userId: string, name: string): Promise<Passkey | null>
  /** Removes the user's passkey with the audit event; false if the user has no such passkey. */
  remove(id: string, userId: string, audit: AuditEvent): Promise<boolean>
  /**
   * Records a sign-in with the passkey, its time and signature counter, only if the counter
   * moved forward (or both it and the stored one are 0, as synced passkeys send): false when
   * another sign-in got there first with this counter or a higher one, the sign of a cloned
   * authenticator racing its original.
   */
  recordUse(id: string, counter: number, now: number): Promise<boolean>
  createChallenge(challenge: WebauthnChallenge): Promise<void>
  /** Spends a ceremony's challenge by its first use, if it is the tenant's, of this purpose, and
   *  live; returns it, or null (unknown, spent, expired, another tenant's). */
  spendChallenge(id: string, tenantId: string, purpose: WebauthnChallenge['purpose'], now: number): Promise<WebauthnChallenge | null>
}
