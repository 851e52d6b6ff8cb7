// The storage contract of the OpenID Provider's clients, codes, grants and consents: composed into Store (core/store.ts), implemented by
// each engine in src/db.
import type { DeviceAuthorization, OidcClient, OidcCode, OidcConsent } from './types'
import type { AuditEvent, RefreshFamily, RefreshToken } from '../types'

/** The OpenID Provider's clients, codes, grants and consents (core/oidc, product spec §21). */
export interface OidcStore {
  insertClient(client: OidcClient): Promise<void>
  getClient(id: string): Promise<OidcClient | null>
  /** A tenant's clients, oldest first. */
  listClients(tenantId: string): Promise<OidcClient[]>
  /** The client after the change; null if there is none. */
  updateClient(id: string, changes: Partial<Pick<OidcClient, 'name' | 'redirectUris' | 'postLogoutRedirectUris' | 'firstParty' | 'idTokenAlg' | 'allowedGroups' | 'groupsClaim' | 'scopes' | 'audiences' | 'tokenLifetimeSec' | 'jwks' | 'secretHash' | 'secretPrefix' | 'updatedAt'>>): Promise<OidcClient | null>
  /** Removes the client with its codes and consents and revokes its grants, in one transaction; false if there was none. */
  deleteClient(id: string, now: number): Promise<boolean>
  /**
   * Records a client assertion's jti (its SHA-256) until the assertion expires; false, writing
   * nothing, when the client's assertion of that jti was recorded and has not expired yet (a replay).
   */
  spendClientAssertion(clientId: string, jtiHash: string, expiresAt: number, now: number): Promise<boolean>
  insertCode(code: OidcCode): Promise<void>
  findCode(codeHash: string): Promise<OidcCode | null>
  /**
   * Redeems the code in one transaction: spends it if it is still unspent and unexpired, and
   * starts the grant (`family`, with `firstToken`) if the user's session epoch is still the
   * code's. 'spent' when another redemption won (nothing written), 'stale' when the user's
   * epoch moved on or the page session it was issued in (its sessionId) has been revoked (the
   * code is spent, no grant starts). The grant's audit event is committed with it.
   */
  redeemCode(input: { codeId: string; now: number; family: RefreshFamily; firstToken: RefreshToken; userEpoch: number; audit: AuditEvent }): Promise<'redeemed' | 'spent' | 'stale'>
  /** A spent code presented again: revokes the grant its redemption started (waiting for that
   *  redemption to commit if it is under way), with the audit event. */
  revokeCodeGrant(codeId: string, now: number, audit: AuditEvent): Promise<void>
  findConsent(userId: string, clientId: string): Promise<OidcConsent | null>
  /** Records (or widens) the user's consent to the client. */
  saveConsent(consent: OidcConsent): Promise<void>
  listConsents(userId: string): Promise<OidcConsent[]>
  /** Withdraws the consent and revokes the user's grants to the client (and spends the user's unredeemed codes for it); false if there was none. */
  withdrawConsent(userId: string, clientId: string, now: number): Promise<boolean>
  /** Revokes the user's live grants to the client and spends the user's unredeemed codes for it; returns how many grants. */
  revokeGrants(userId: string, clientId: string, now: number, reason: string): Promise<number>
  /** False, writing nothing, when a live authorization has the same user code (or device code). */
  insertDeviceAuthorization(authorization: DeviceAuthorization): Promise<boolean>
  findDeviceAuthorization(by: { deviceCodeHash: string } | { userCodeHash: string }): Promise<DeviceAuthorization | null>
  /** Records a poll, and the interval from then on (widened by a slow_down). */
  recordDevicePoll(id: string, now: number, intervalSec: number): Promise<void>
  /**
   * The first decision wins: approves (writing `code`, which the device's next poll redeems) or
   * denies the authorization if it is still pending and unexpired, in one transaction; false
   * (nothing written) if another decision came first or it expired.
   */
  decideDeviceAuthorization(id: string, decision: { status: 'approved' | 'denied'; userId: string; now: number; code: OidcCode | null }): Promise<boolean>
}
