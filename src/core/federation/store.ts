// The storage contract of upstream identity providers, identities and sign-in flows: composed
// into Store (core/store.ts), implemented by each engine in src/db.
import type { AuditEvent, User } from '../types'
import type { FederationFlow, FlowStage, Identity, IdentityProvider } from './types'

export type ProviderChanges = Partial<Pick<IdentityProvider, 'name' | 'issuer' | 'clientId' | 'clientSecretSealed' | 'scopes' | 'linkByEmail' | 'createUsers' | 'trustUpstreamMfa' | 'groupsClaim' | 'groupMap'>> & { updatedAt: number }

export interface ProviderStore {
  insert(provider: IdentityProvider): Promise<void>
  get(id: string): Promise<IdentityProvider | null>
  /** The tenant's providers by name, then id. */
  list(tenantId: string): Promise<IdentityProvider[]>
  /** The provider after the change; null if there is none. */
  update(id: string, changes: ProviderChanges): Promise<IdentityProvider | null>
  /** Deletes the provider and its identities (no identity.unlinked event for those); false if there was none. */
  delete(id: string): Promise<boolean>
  /** How many identities the provider has. */
  countIdentities(id: string): Promise<number>
}

export interface IdentityStore {
  get(id: string): Promise<Identity | null>
  find(providerId: string, subject: string): Promise<Identity | null>
  /** The user's identities, oldest first. */
  listByUser(userId: string): Promise<Identity[]>
  /**
   * Links the identity, with its audit event, in one transaction that checks the user is still
   * there and of the identity's tenant; false, writing nothing, when (provider, subject) is
   * linked already or the user is gone.
   */
  insert(identity: Identity, audit: AuditEvent): Promise<boolean>
  /**
   * Creates the user and links the identity in one transaction, with their audit events:
   * 'email-taken' when the tenant has a user of that address, 'identity-taken' when the
   * identity is linked already, 'provider-gone' when its provider was deleted meanwhile;
   * nothing is written then.
   */
  insertWithUser(user: User, identity: Identity, audits: AuditEvent[]): Promise<'created' | 'email-taken' | 'identity-taken' | 'provider-gone'>
  /** Records a sign-in through the identity: the upstream's address as it is now, and when. */
  recordUse(id: string, email: string | null, emailVerified: boolean, now: number): Promise<void>
  /**
   * Unlinks the identity of this user, with its audit event, unless it is the user's last way
   * to sign in (no password, no passkey, no other identity): checked in the delete's own
   * transaction, so two unlinks at once cannot both go.
   */
  deleteUnlessLast(id: string, userId: string, audit: AuditEvent): Promise<'deleted' | 'last' | 'none'>
}

export interface FederationFlowStore {
  insert(flow: FederationFlow): Promise<void>
  findByState(stateHash: string): Promise<FederationFlow | null>
  /**
   * Moves the flow from `from` to `to` (with the pending answer and account for
   * awaiting-proof) only if it is at `from` and not expired at `now`: false when another request
   * moved it first (a replayed callback, a proof sent twice), or it expired.
   */
  advance(id: string, from: FlowStage, to: FlowStage, now: number, pending?: { pendingSealed: string; userId: string }): Promise<boolean>
}
