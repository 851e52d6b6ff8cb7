// The storage contract of users, their passwords, setup tokens and password resets: composed into Store (core/store.ts), implemented by
// each engine in src/db.
import type { Blocked } from '../guards/limit-rules'
import type { LimitUpdate } from '../guards/store'
import type { GroupMembership } from '../groups/types'
import type { AuditEvent, LimitCounter, OutboxMessage, PasswordResetOtp, SetupToken, User } from '../types'

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
  /** Inserts all or none, the users' group memberships with them: false when any e-mail is taken in its tenant. */
  insertMany(users: User[], setupTokens: SetupToken[], memberships?: GroupMembership[]): Promise<boolean>
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

export interface SetupTokenStore {
  findByHash(tokenHash: string): Promise<SetupToken | null>
  /** Spends the user's earlier setup tokens, adds this one and queues its mail. */
  replace(token: SetupToken, mail?: OutboxMessage): Promise<void>
  /** Sets the password only if the user still has none, spending their setup tokens; false if they had one. */
  complete(input: { userId: string; passwordHash: string; now: number }): Promise<boolean>
}
