// The storage boundary. Core depends on this interface only; src/db implements it over
// SQLite (and later PostgreSQL). Every method is atomic by itself: where a rule needs
// "check, then write" (spending a refresh token), the store offers a conditional write that
// reports whether it won, so the rule holds without holding a transaction open across awaits.
import type { Blocked } from './limits'
import type { OidcClient, OidcCode, OidcConsent } from './oidc/types'
import type { TenantSettings } from './types'
import type { WebhookStore } from './webhooks/store'
import type { ApiKey, AuditEvent, LimitCounter, MailStatus, OutboxMessage, MfaChallenge, Passkey, PasswordResetOtp, PendingSignup, RecoveryCode, TotpFactor, RefreshFamily, RefreshToken, SetupToken, SigningKeyRecord, Tenant, User, WebauthnChallenge } from './types'

export interface TenantStore {
  /** False when another tenant has this audience. */
  insert(tenant: Tenant): Promise<boolean>
  /** The tenant after the change, null if there is none; throws a conflict for a taken audience. */
  setAudience(id: string, audience: string): Promise<Tenant | null | 'audience-taken'>
  /** The tenant after the change, null if there is none. */
  setSignup(id: string, signup: string): Promise<Tenant | null>
  /** Changes optional settings (slug, branding, passkey relying party); the tenant after it,
   *  null if there is none, 'slug-taken' when another tenant has the slug. */
  updateSettings(id: string, changes: Partial<TenantSettings>): Promise<Tenant | null | 'slug-taken'>
  get(id: string): Promise<Tenant | null>
  /** The tenant whose pages are under /t/{slug}/ (slugs are stored in lower case). */
  findBySlug(slug: string): Promise<Tenant | null>
  list(): Promise<Tenant[]>
  /** Disabling also ends every session of the tenant's users and spends their OTPs and setup
   *  tokens, in the same transaction: enabling it again revives none of them. */
  setDisabledAt(id: string, disabledAt: number | null): Promise<Tenant | null>
  /** The first run (`authd init`): everything in one transaction, so a failure leaves nothing
   *  behind; false, writing nothing, when the database already holds a tenant. */
  initialise(first: FirstTenant): Promise<boolean>
}

/** What `authd init` writes: the tenant, its first API key, its first admin (with the setup
 *  token and the invitation that carries it, when the admin has no password) and the audit events. */
export interface FirstTenant {
  tenant: Tenant
  apiKey: ApiKey
  keyHash: string
  user: User
  setupToken?: SetupToken
  invitation?: OutboxMessage
  audit: AuditEvent[]
}

export interface ApiKeyStore {
  insert(key: ApiKey, keyHash: string): Promise<void>
  /** The key and its tenant, if the key exists and is not revoked. */
  findActiveByHash(keyHash: string): Promise<{ apiKey: ApiKey; tenant: Tenant } | null>
  list(tenantId?: string): Promise<ApiKey[]>
  revoke(id: string, revokedAt: number): Promise<ApiKey | null>
}

/** What an administrator may change of a user (UserStore.update). */
export type UserFields = Partial<Pick<User, 'email' | 'firstName' | 'lastName' | 'type' | 'emailVerifiedAt'>>

export interface UserStore {
  /** Inserts the user (and its setup token, and the invitation carrying it) in one
   *  transaction; false when the e-mail is taken in the tenant. */
  insert(user: User, setupToken?: SetupToken, invitation?: OutboxMessage): Promise<boolean>
  get(id: string): Promise<User | null>
  findByEmail(tenantId: string, email: string): Promise<User | null>
  /** A keyset page of a tenant's users in id order (ids are UUIDv7: creation order), after `afterId`. */
  page(tenantId: string, options: { email?: string; afterId?: string; limit: number }): Promise<User[]>
  /** Changes address, names, type or when the address was proven; the user after it, null if
   *  there is none, 'email-taken' if the new address is another user's in the tenant. A new
   *  address also spends the user's setup tokens, OTPs and login challenges (they were mailed
   *  to, or proved, the old one); one transaction. */
  update(id: string, changes: UserFields, now: number): Promise<User | null | 'email-taken'>
  /**
   * Erases the user in one transaction: the user row, sessions, OTPs, setup tokens, outbox
   * messages to their address and idempotent answers that name them; audit rows keep only the
   * user id (their IP, user agent and detail are cleared). False if there was no such user.
   */
  erase(user: Pick<User, 'id' | 'tenantId' | 'email'>): Promise<boolean>
  /** Disabling also ends every session of the user and spends their OTPs and setup tokens,
   *  in the same transaction. */
  setDisabledAt(id: string, disabledAt: number | null, now: number): Promise<User | null>
  setPasswordHash(id: string, passwordHash: string, now: number): Promise<void>
  /** Inserts all or none: false when any e-mail is taken in its tenant. */
  insertMany(users: User[], setupTokens: SetupToken[]): Promise<boolean>
  /** How many stored password hashes use each parameter set (see core/passwords.ts). */
  passwordHashParameters(): Promise<Array<{ parameters: string; count: number }>>
  /** A new password set by an admin, or by the user from a session: also spends setup tokens,
   *  OTPs and login challenges, revokes every session but `keepSessionId` (the one that made
   *  the change, if any) for `reason`, and queues the notice; one transaction. */
  replacePassword(input: { userId: string; passwordHash: string; now: number; notice: OutboxMessage; reason: string; keepSessionId?: string }): Promise<void>
}

/** The reset mails issued to one address in a span of time. */
export interface ResetHistory {
  issued: number
  lastIssuedAt: number | null
}

/** A mail-sending request guarded by the address's history: the part a password reset and a
 *  sign-up share (each store reads the history and decides in one transaction). */
export interface HistoryGuardedRequest {
  tenantId: string
  emailKey: string
  at: number
  historySince: number
  allowed: (history: ResetHistory) => boolean
  audit: AuditEvent
  mail?: OutboxMessage
}

export interface PasswordResetStore {
  /**
   * Records the request and its audit event; then, if `allowed` says yes to the address's
   * issued requests since `historySince` (read in the same transaction, with concurrent
   * requests for the address waiting their turn), replaces the user's OTP and queues its mail
   * (when given: registered addresses). One transaction, the same work for every address.
   * Returns what `allowed` said.
   */
  request(input: HistoryGuardedRequest & { otp?: PasswordResetOtp }): Promise<boolean>
  /** The OTP row of `owner`: a userId (for an unknown address, a key no row has). */
  findOtp(owner: string): Promise<PasswordResetOtp | null>
  /**
   * Admits one try of a code before it is judged, as one transaction doing the same work for
   * every address: unless `verdict` refuses on the counters of `limits` (the account's OTP
   * lock; nothing is written then), the try is counted against the address's latest reset
   * request if it was issued within `ttlMs` and has fewer than `maxAttempts` tries (then a
   * code could match: `counted`, and the `limits` hits are applied), and against the owner's
   * live OTP if it has tries left (`admitted`: only then may the code be compared).
   */
  reserveTry(input: {
    tenantId: string
    emailKey: string
    otpOwner: string
    now: number
    ttlMs: number
    maxAttempts: number
    limits: Array<Extract<LimitUpdate, { op: 'hit' }>>
    verdict: (counters: LimitCounter[]) => Blocked | null
  }): Promise<{ refused: Blocked | null; counted: boolean; admitted: boolean }>
  /**
   * Spends the OTP, if it is still the live, unspent, unexpired one with this hash and at most
   * `maxAttempts` tries (its own reserved try included), and in the same transaction sets the
   * password, revokes every session, queues the notice and closes the address's reset
   * requests to further tries. False when the OTP was no longer usable (lost a race).
   */
  complete(input: {
    userId: string
    tenantId: string
    emailKey: string
    codeHash: string
    now: number
    maxAttempts: number
    passwordHash: string
    notice: OutboxMessage
  }): Promise<boolean>
}

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

/** The OpenID Provider's clients, codes, grants and consents (core/oidc, product spec §21). */
export interface OidcStore {
  insertClient(client: OidcClient): Promise<void>
  getClient(id: string): Promise<OidcClient | null>
  /** A tenant's clients, oldest first. */
  listClients(tenantId: string): Promise<OidcClient[]>
  /** The client after the change; null if there is none. */
  updateClient(id: string, changes: Partial<Pick<OidcClient, 'name' | 'redirectUris' | 'postLogoutRedirectUris' | 'firstParty' | 'secretHash' | 'secretPrefix' | 'updatedAt'>>): Promise<OidcClient | null>
  /** Removes the client with its codes and consents and revokes its grants, in one transaction; false if there was none. */
  deleteClient(id: string, now: number): Promise<boolean>
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
}

export interface SetupTokenStore {
  findByHash(tokenHash: string): Promise<SetupToken | null>
  /** Spends the user's earlier setup tokens, adds this one and queues its mail. */
  replace(token: SetupToken, mail?: OutboxMessage): Promise<void>
  /** Sets the password only if the user still has none, spending their setup tokens; false if they had one. */
  complete(input: { userId: string; passwordHash: string; now: number }): Promise<boolean>
}

export interface OutboxStore {
  /** Takes the next due message (pending and due, or sending with an expired lease) for one worker. */
  claimNext(now: number, leaseMs: number): Promise<OutboxMessage | null>
  markSent(id: string, now: number): Promise<void>
  markRetry(id: string, nextAttemptAt: number, error: string): Promise<void>
  markFailed(id: string, error: string): Promise<void>
  markExpired(id: string): Promise<void>
  /** Metadata only: bodies come back null. */
  list(filter: { pendingOnly?: boolean }): Promise<OutboxMessage[]>
  /** Puts failed messages back in the queue; returns how many. */
  retryFailed(now: number): Promise<number>
  countByStatus(): Promise<Record<MailStatus, number>>
  /** Makes bodies erased so far unrecoverable from the storage files too (old page
   *  versions, log frames), not only from the tables. */
  purgeErased(): Promise<void>
}

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
}

export interface SessionStore {
  /**
   * Starts a session, with what a login commits beside it, only if the user's session epoch is
   * still `userEpoch` (the one its proof was checked at); false, with nothing written, if a new
   * password, a second factor or a disable moved it on meanwhile.
   */
  createFamily(family: RefreshFamily, firstToken: RefreshToken, userEpoch: number, record?: SessionStartRecord): Promise<boolean>
  /** The token, its family, and the family's user and tenant: everything a refresh reads, in one query. */
  findToken(tokenHash: string): Promise<{ token: RefreshToken; family: RefreshFamily; user: User; tenant: Tenant } | null>
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
  /** Records that the user proved who they are again in this session (if it is live), with the
   *  audit event; false if the session is no longer live. */
  markAuthenticated(familyId: string, at: number, audit: AuditEvent): Promise<boolean>
}

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

export interface AuditQuery {
  tenantId?: string
  userId?: string
  type?: string
  since?: number
  limit?: number
}

export interface AuditStore {
  record(event: AuditEvent): Promise<void>
  /** Several events in one transaction. */
  recordMany(events: AuditEvent[]): Promise<void>
  /** Newest first. */
  query(filter: AuditQuery): Promise<Array<AuditEvent & { id: number }>>
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

/** The server_settings name of the public URL the server last started under (for the CLI). */
export const PUBLIC_URL_SETTING = 'public_url'

export interface ServerSettingsStore {
  get(name: string): Promise<string | null>
  /** Sets the setting, replacing its value if it has one. */
  set(name: string, value: string, now: number): Promise<void>
}

/** Kinds of rows that retention deletes (core/retention.ts). */
export type PruneTarget = 'auditEvents' | 'refreshTokens' | 'refreshFamilies' | 'sentMail' | 'resetRequests' | 'otps' | 'setupTokens' | 'limitCounters' | 'idempotencyKeys' | 'pendingSignups' | 'signupRequests' | 'mfaChallenges' | 'webauthnChallenges' | 'oidcCodes' | 'webhookDeliveries' | 'webhookEvents' | 'deliveredWebhookEvents'

export interface Store {
  tenants: TenantStore
  apiKeys: ApiKeyStore
  users: UserStore
  signingKeys: SigningKeyStore
  sessions: SessionStore
  passwordResets: PasswordResetStore
  setupTokens: SetupTokenStore
  signups: SignupStore
  mfa: MfaStore
  passkeys: PasskeyStore
  oidc: OidcStore
  outbox: OutboxStore
  webhooks: WebhookStore
  limits: LimitStore
  audit: AuditStore
  idempotency: IdempotencyStore
  /**
   * Deletes at most `limit` rows of one kind that ended before `before` (for limit counters:
   * untouched since then); returns how many.
   */
  prune(target: PruneTarget, before: number, limit: number): Promise<number>
  /** A named server-side secret, created by `create` the first time it is asked for. */
  serverSecret(name: string, create: () => string): Promise<string>
  /** What a running server tells the CLI beside it (not secret): the public URL it serves under. */
  serverSettings: ServerSettingsStore
  /** Throws when the database cannot answer. */
  ping(): Promise<void>
  migrationStatus(): Promise<{ applied: string[]; pending: string[] }>
  close(): void
}
