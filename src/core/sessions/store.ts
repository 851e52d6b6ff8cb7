// The storage contract of sessions (refresh-token families) and signing keys: composed into Store (core/store.ts), implemented by
// each engine in src/db.
import type { AuditEvent, RefreshFamily, RefreshToken, SigningKeyRecord, Tenant, User } from '../types'

export interface SigningKeyStore {
  /** Adds the new key and retires every other active key of its algorithm at the same instant. */
  insertAndRetireOthers(key: SigningKeyRecord): Promise<void>
  /** Adds the key unless one of its algorithm is active (checked and written in one
   *  transaction, so of instances starting together one adds it); true if added. */
  insertIfNoneActive(key: SigningKeyRecord): Promise<boolean>
  list(): Promise<SigningKeyRecord[]>
  /**
   * Marks the key revoked (and retired), adds `replacement` as the active key when given, and
   * revokes every live session with a token whose access token the key signed; one
   * transaction. Returns null for an unknown kid, else how many sessions it ended.
   */
  revoke(kid: string, now: number, replacement: SigningKeyRecord | null): Promise<{ sessionsRevoked: number } | null>
  /** Revokes the live sessions with a token whose access token `kid` signed; returns how many. */
  revokeSessionsSignedBy(kid: string, now: number): Promise<number>
}

/** Where a session was used from, as the request said (see plugins/client-ip.ts). */
export interface SessionOrigin {
  ip: string | null
  userAgent: string | null
}

/** What a login commits in the same transaction as its session: the counters its success
 *  deletes (the back-off runs it ends) and its audit event. One commit (one fsync on SQLite)
 *  per login rather than three, and no session without its audit row after a crash. */
export interface SessionStartRecord {
  limitResets: string[]
  /** Counters that take back the login's own reserved guess (core/limits.ts settleGuess). */
  limitRefunds: string[]
  audit: AuditEvent
  /** The upstream provider the session was signed in through (core/federation): session.created names it. */
  providerId?: string
  /** When its user last proved who they are, where that was before now: an upstream sign-in's
   *  auth_time (a session the upstream started from its own older sign-in is no fresh proof). */
  authAt?: number
}

/** A session's use is recorded at most once per this (product spec §24: a check writes nothing in the common case). */
export const SESSION_USE_GRAIN_MS = 60_000

export interface SessionStore {
  /**
   * Starts a session, with what a login commits beside it, only if the user's session epoch is
   * still `userEpoch` (the one its proof was checked at); false, with nothing written, if a new
   * password, a second factor or a disable moved it on meanwhile.
   */
  createFamily(family: RefreshFamily, firstToken: RefreshToken, userEpoch: number, record?: SessionStartRecord): Promise<boolean>
  /** The token, its family, and the family's user and tenant: everything a refresh reads, in one query. */
  findToken(tokenHash: string): Promise<{ token: RefreshToken; family: RefreshFamily; user: User; tenant: Tenant } | null>
  /** findToken's rows and the names of the user's groups, sorted: everything a forward-auth
   *  check reads (core/forward-auth), in one read (one statement on PostgreSQL). */
  findTokenWithGroups(tokenHash: string): Promise<{ token: RefreshToken; family: RefreshFamily; user: User; tenant: Tenant; groups: string[] } | null>
  /** Spends the token and adds its successor, only if the token was still unspent (false if not);
   *  with `audit`, the event that reports the rotation is committed with it. */
  rotate(tokenId: string, spentAt: number, successor: RefreshToken, audit?: AuditEvent): Promise<boolean>
  /** A session (family) with its user and tenant. */
  findSession(familyId: string): Promise<{ family: RefreshFamily; user: User; tenant: Tenant } | null>
  /** The user's sessions that can still be refreshed at `now` (not revoked, and holding an
   *  unspent token that has not expired), newest first, each with that live token. */
  listLive(userId: string, now: number): Promise<Array<{ family: RefreshFamily; liveToken: RefreshToken }>>
  /** Revokes the family if it is live, committing the audit event that reports it in the same transaction. */
  revokeFamily(familyId: string, revokedAt: number, reason: string, audit: AuditEvent): Promise<void>
  /** Revokes every live family of the user; returns how many. */
  revokeUserFamilies(userId: string, revokedAt: number, reason: string): Promise<number>
  /** Records that the session was used at `at`, unless a use within the minute before it is
   *  recorded already (so a burst of checks writes once). */
  markUsed(familyId: string, at: number): Promise<void>
  /** Records that the user proved who they are again in this session (if it is live), with the
   *  audit event, and with `amr` the session's new amr (a second factor proved in it); false
   *  if the session is no longer live. */
  markAuthenticated(familyId: string, at: number, audit: AuditEvent, amr?: string): Promise<boolean>
}
