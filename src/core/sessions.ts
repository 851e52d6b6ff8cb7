// Login sessions: one login = one refresh-token family. Every refresh spends the presented
// token and hands out its successor; a spent token presented again within the grace period
// gets the same successor (two tabs refreshing at once both stay logged in); after it, the
// reuse means the token was stolen or replayed, and the whole family is revoked.
import { signAccessToken } from './access-tokens'
import { audit, auditEvent, CLI_ACTOR, maskEmail, type Actor } from './audit'
import type { Deps } from './deps'
import { AppError, tenantDisabled, unauthorized, userDisabled, type ErrorCode } from './errors'
import { inAccountTurn, reserveAccountGuess } from './account-guesses'
import { judged, sessionLimitUpdates, settle, settleGuess } from './limits'
import { issueDeviceCookie } from './device-cookies'
import { issueMfaChallenge, passMfaChallenge, type MfaChallengeAnswer } from './mfa/challenge'
import { hasConfirmedTotp } from './mfa/factor'
import { normalisePassword } from './password-policy'
import { newRefreshToken, refreshTokenKey, successorRefreshToken } from './refresh-tokens'
import { hmacSha256 } from './secrets'
import type { ActiveSigningKey } from './signing-keys'
import { listSessions, type SessionView } from './signed-in-user'
import type { SessionOrigin, SessionStartRecord } from './store'
import type { AuditEvent, RefreshFamily, RefreshToken, Tenant, User } from './types'
import { getUser, normaliseEmail, toPublicUser, type PublicUser } from './users'

export interface Session {
  accessToken: string
  user: PublicUser
  refreshToken: string
  /** The refresh cookie's Max-Age. */
  refreshMaxAgeSec: number
  /** Whether the user asked to stay signed in ("remember me"): the pages keep their cookie
   *  past the browser's closing only then. */
  rememberMe: boolean
}

export interface LoginResult extends Session {
  /** The device cookie to set: the one presented if it is this account's, else a new one. */
  deviceCookie: string
}

type SessionDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'keyRing'>

type LoginDeps = SessionDeps & Pick<Deps, 'hasher' | 'serverKeys' | 'limitRules' | 'refusals' | 'events' | 'guessTurns'>
type LoginInput = { tenant: Tenant; email: string; password: string; rememberMe: boolean; deviceCookie?: string }

/** How a refused login is reported, by the code of its error (a malformed request is none). */
const LOGIN_OUTCOMES: Partial<Record<ErrorCode, 'failed' | 'limited' | 'overloaded'>> = {
  unauthorized: 'failed',
  user_disabled: 'failed',
  rate_limited: 'limited',
  unavailable: 'overloaded',
}

/** A login's answer: a session, or (for a user with a second factor) the challenge to pass first. */
export type LoginAnswer = ({ kind: 'session' } & LoginResult) | ({ kind: 'mfa' } & MfaChallengeAnswer)

export async function login(deps: LoginDeps, input: LoginInput, actor: Actor): Promise<LoginAnswer> {
  try {
    // One guess at a time per account in this process: see guess-turns.ts.
    const result = await inAccountTurn(deps, { tenantId: input.tenant.id, email: normaliseEmail(input.email), deviceCookie: input.deviceCookie }, () => authenticate(deps, input, actor))
    // A challenge is no login yet: /mfa/verify reports the success.
    deps.events.notify({ kind: 'login', outcome: result.kind === 'mfa' ? 'challenged' : 'succeeded' })
    return result
  } catch (error) {
    const outcome = error instanceof AppError ? LOGIN_OUTCOMES[error.code] : undefined
    if (outcome) deps.events.notify({ kind: 'login', outcome })
    throw error
  }
}

async function authenticate(deps: LoginDeps, input: LoginInput, actor: Actor): Promise<LoginAnswer> {
  // Under a flood, refuse before any database work: a refused login must be cheap.
  deps.hasher.assertCapacity()
  const { tenant } = input
  const email = normaliseEmail(input.email)
  const password = normalisePassword(input.password)
  const about = { tenantId: tenant.id, detail: { email: maskEmail(email) } }
  // Counted before it is judged: a burst of guesses meets the back-off as the same guesses in a row would.
  const guess = await reserveAccountGuess(deps, { tenantId: tenant.id, email, actor, deviceCookie: input.deviceCookie }, { perIpFailures: true, detail: about.detail })
  const { user, verified } = await judged(deps, guess, async () => {
    const user = await deps.store.users.findByEmail(tenant.id, email)
    const verified = user?.passwordHash
      ? await deps.hasher.verify(password, user.passwordHash)
      : // Same work for an unknown e-mail as for a wrong password: no account enumeration by timing.
        await deps.hasher.verifyDummy(password, dummySeed(deps, tenant.id, email))
    return { user, verified }
  })
  if (!user || !verified) {
    await settle(deps, guess, 'failure', auditEvent(deps, 'login.failed', actor, { ...about, userId: user?.id, detail: { ...about.detail, reason: user ? 'wrong-password' : 'unknown-email' } }))
    throw unauthorized()
  }
  // With a second factor, the password alone is no success: the back-off run it would end goes
  // on until the challenge is passed (wrong codes count in it), else knowing the password
  // would reset the guessing budget for codes at every login. The password's own count is
  // taken back (it was right).
  const secondFactor = await hasConfirmedTotp(deps, user.id)
  // Only someone who knows the password learns that the account is disabled.
  if (user.disabledAt !== null) {
    await settle(deps, guess, secondFactor ? 'unjudged' : 'success', auditEvent(deps, 'login.failed', actor, { ...about, userId: user.id, detail: { ...about.detail, reason: 'user-disabled' } }))
    throw userDisabled()
  }
  const now = deps.clock.now()
  if (deps.hasher.needsRehash(user.passwordHash!)) {
    await deps.store.users.setPasswordHash(user.id, await deps.hasher.hash(password), now)
  }

  // The second step exists only after the right password: a wrong one costs the same whether
  // or not the user has a second factor.
  if (secondFactor) {
    await settle(deps, guess, 'unjudged')
    return { kind: 'mfa', ...(await issueMfaChallenge(deps, user, tenant, input.rememberMe, actor)) }
  }
  // The success ends the back-off runs in the session's own transaction, with its audit event.
  const session = await startSession(deps, user, tenant, input.rememberMe, actor, ['pwd'], {
    ...sessionLimitUpdates(settleGuess(deps, guess, 'success')),
    audit: auditEvent(deps, 'login.succeeded', actor, { ...about, userId: user.id, detail: { ...about.detail, rememberMe: input.rememberMe, trustedDevice: guess.device !== null } }),
  })
  return { kind: 'session', ...session, deviceCookie: guess.device ? input.deviceCookie! : issueDeviceCookie(deps, tenant.id, email) }
}

/** POST /mfa/verify: a passed challenge is the login's answer, its access tokens with amr pwd+otp. */
export async function loginWithSecondFactor(
  deps: LoginDeps & Pick<Deps, 'mailQueued'>,
  input: { tenant: Tenant; challengeToken: unknown; code?: unknown; response?: unknown; deviceCookie?: string },
  actor: Actor,
): Promise<LoginResult> {
  const passed = await passMfaChallenge(deps, input, actor)
  const detail = { email: maskEmail(passed.user.email), rememberMe: passed.rememberMe, secondFactor: passed.secondFactor }
  const succeeded = auditEvent(deps, 'login.succeeded', actor, { tenantId: input.tenant.id, userId: passed.user.id, detail })
  const session = await startSession(deps, passed.user, input.tenant, passed.rememberMe, actor, passed.amr, { ...passed.limitUpdates, audit: succeeded })
  deps.events.notify({ kind: 'login', outcome: 'succeeded' })
  return { ...session, deviceCookie: passed.deviceCookie }
}

/**
 * A new session (refresh-token family) for a user who just proved who they are: login, or a verified sign-up.
 * @param record what a login commits with the session (a sign-up has committed its own event)
 */
export async function startSession(deps: SessionDeps, user: User, tenant: Tenant, rememberMe: boolean, actor: Actor, amr: string[] = ['pwd'], record?: SessionStartRecord): Promise<Session> {
  const now = deps.clock.now()
  const family: RefreshFamily = {
    id: Bun.randomUUIDv7(),
    userId: user.id,
    tenantId: user.tenantId,
    rememberMe,
    createdAt: now,
    expiresAt: now + deps.config.sessionMaxAgeSec * 1000,
    revokedAt: null,
    revokedReason: null,
    amr: amr.join(','),
    authAt: now,
  }
  const refreshToken = newRefreshToken(now, deps.config.refreshTokenFormat)
  const signingKey = await deps.keyRing.signingKey()
  const tokenRecord = newTokenRecord(deps, family, refreshToken, signingKey.kid, now, actor)
  // A proof checked before a new password (or a second factor, or a disable) committed starts
  // no session after it: it would outlive the change its owner made to be rid of it.
  if (!(await deps.store.sessions.createFamily(family, tokenRecord, user.sessionEpoch, record))) throw unauthorized()
  return issueSession(deps, signingKey, user, tenant, family, refreshToken, tokenRecord.expiresAt, now)
}

export async function refresh(deps: SessionDeps & Pick<Deps, 'serverKeys'>, presented: string | undefined, actor: Actor): Promise<Session> {
  const rotated = await rotateRefreshToken(deps, presented, actor, null)
  return issueSession(deps, rotated.signingKey, rotated.user, rotated.tenant, rotated.family, rotated.successor, rotated.expiresAt, rotated.now)
}

/** What a rotation hands back: the session's rows and the successor token, for the caller to answer with. */
export interface RotatedToken {
  user: User
  tenant: Tenant
  family: RefreshFamily
  successor: string
  expiresAt: number
  now: number
  signingKey: ActiveSigningKey
}

/**
 * Spends the presented refresh token and derives its successor, with the grace period and reuse
 * detection above.
 * @param clientId the OpenID client whose grant the token must be (core/oidc), or null for
 *   authd's own sessions: neither kind of token is ever accepted as the other.
 */
export async function rotateRefreshToken(
  deps: SessionDeps & Pick<Deps, 'serverKeys'>,
  presented: string | undefined,
  actor: Actor,
  clientId: string | null,
  /** The event a rotation commits with it (an OpenID grant's refresh); authd's own refreshes record none. */
  rotated?: (family: RefreshFamily) => AuditEvent,
  /** Checks the request against the family before the token is spent (an OpenID refresh's
   *  scope): what it throws leaves the token as it was, so the client's next refresh is no reuse. */
  admit?: (family: RefreshFamily) => void,
): Promise<RotatedToken> {
  if (!presented || presented.length > 128) throw unauthorized()
  const key = refreshTokenKey(presented)
  const found = await deps.store.sessions.findToken(key)
  if (!found || (found.family.clientId ?? null) !== clientId) throw unauthorized()
  const { token, family, user, tenant } = found
  const now = deps.clock.now()
  // A token's expiry is capped at its family's absolute end when it is issued, so this one
  // check also ends the family on time.
  if (family.revokedAt !== null || token.expiresAt <= now) throw unauthorized()
  if (user.disabledAt !== null) throw userDisabled()
  if (tenant.disabledAt !== null) throw tenantDisabled()
  // (a token spent past the grace period skips it: reuse detection below must still see a thief)
  if (token.spentAt === null || now - token.spentAt <= deps.config.refreshGraceSec * 1000) admit?.(family)

  // The successor is a function of the presented token and the moment it was spent
  // (core/refresh-tokens.ts), so a repeat within the grace period gets the same one.
  const successorAt = (spentAt: number) => successorRefreshToken(deps.serverKeys.refreshSuccessor, presented, spentAt)
  const signingKey = await deps.keyRing.signingKey()
  let successor: string
  if (token.spentAt === null) {
    successor = successorAt(now)
    if (!(await deps.store.sessions.rotate(token.id, now, newTokenRecord(deps, family, successor, signingKey.kid, now, actor), rotated?.(family)))) {
      // A concurrent refresh of the same token won the race a moment ago and stored the
      // successor of the moment it spent it: that one is the answer.
      const spentAt = (await deps.store.sessions.findToken(key))?.token.spentAt ?? null
      if (spentAt === null) throw unauthorized()
      successor = successorAt(spentAt)
    }
  } else if (now - token.spentAt > deps.config.refreshGraceSec * 1000) {
    await deps.store.sessions.revokeFamily(family.id, now, 'reuse', auditEvent(deps, 'refresh.reused', actor, { tenantId: family.tenantId, userId: family.userId, detail: { familyId: family.id } }))
    throw unauthorized()
  } else {
    successor = successorAt(token.spentAt)
  }
  return { user, tenant, family, successor, expiresAt: tokenExpiresAt(deps, family, now), now, signingKey }
}

/** Ends the session the cookie belongs to. Idempotent: an unknown or spent cookie is no error. */
export async function logout(deps: Pick<Deps, 'store' | 'clock'>, presented: string | undefined, actor: Actor): Promise<void> {
  if (!presented || presented.length > 128) return
  const found = await deps.store.sessions.findToken(refreshTokenKey(presented))
  if (!found || found.family.revokedAt !== null) return
  const loggedOut = auditEvent(deps, 'logout', actor, { tenantId: found.family.tenantId, userId: found.family.userId, detail: { familyId: found.family.id } })
  await deps.store.sessions.revokeFamily(found.family.id, deps.clock.now(), 'logout', loggedOut)
}

/** A user's live sessions, as an administrator sees them (the admin API and `authd sessions list`). */
export async function listUserSessions(deps: Pick<Deps, 'store' | 'clock'>, userId: string, actor: Actor = CLI_ACTOR): Promise<SessionView[]> {
  const user = await getUser(deps, userId, actor)
  const sessions = await listSessions(deps, userId)
  await audit(deps, 'sessions.listed', actor, { tenantId: user.tenantId, userId, detail: { count: sessions.length } })
  return sessions
}

/** Ends every session of the user (the admin API and `authd sessions revoke`). */
export async function revokeUserSessions(deps: Pick<Deps, 'store' | 'clock'>, userId: string, actor: Actor = CLI_ACTOR): Promise<number> {
  const user = await getUser(deps, userId, actor)
  const revoked = await deps.store.sessions.revokeUserFamilies(userId, deps.clock.now(), 'admin')
  await audit(deps, 'sessions.revoked', actor, { tenantId: user.tenantId, userId, detail: { revoked } })
  return revoked
}

/** Longer user agents are cut: the list of sessions shows them, and a client chooses their length. */
const MAX_USER_AGENT_LENGTH = 256

/** Where a login or refresh came from, as recorded on its session. */
function sessionOrigin(actor: Actor): SessionOrigin {
  return { ip: actor.ip, userAgent: actor.userAgent?.slice(0, MAX_USER_AGENT_LENGTH) ?? null }
}

/** A fixed number in [0, 1) per address, that nobody without the server key can predict. */
function dummySeed(deps: Pick<Deps, 'serverKeys'>, tenantId: string, email: string): number {
  return Buffer.from(hmacSha256(deps.serverKeys.hmac, `dummy-hash:${tenantId}:${email}`), 'base64url').readUInt32BE(0) / 2 ** 32
}

/** Sliding expiry by the family's rememberMe choice, never past the family's absolute end. */
function tokenExpiresAt(deps: Pick<Deps, 'config'>, family: RefreshFamily, now: number): number {
  const ttlSec = family.rememberMe ? deps.config.refreshRememberTtlSec : deps.config.refreshTtlSec
  return Math.min(now + ttlSec * 1000, family.expiresAt)
}

/** @param actor where the login or refresh came from: the session list shows the live token's. */
export function newTokenRecord(deps: Pick<Deps, 'config'>, family: RefreshFamily, token: string, accessKid: string, now: number, actor: Actor): RefreshToken {
  return {
    id: Bun.randomUUIDv7(),
    familyId: family.id,
    tokenHash: refreshTokenKey(token),
    createdAt: now,
    expiresAt: tokenExpiresAt(deps, family, now),
    spentAt: null,
    accessKid,
    ...sessionOrigin(actor),
  }
}

async function issueSession(
  deps: SessionDeps,
  signingKey: ActiveSigningKey,
  user: User,
  tenant: Tenant,
  family: Pick<RefreshFamily, 'id' | 'amr' | 'rememberMe'>,
  refreshToken: string,
  refreshExpiresAt: number,
  now: number,
): Promise<Session> {
  const { issuer, accessTokenTtlSec } = deps.config
  // A refresh keeps the login's amr: the second factor was proved for the whole session.
  const amr = family.amr ? family.amr.split(',') : ['pwd']
  const accessToken = signAccessToken(signingKey, { issuer, audience: tenant.audience, ttlSec: accessTokenTtlSec }, user, family.id, now, amr)
  return {
    accessToken,
    user: toPublicUser(user, tenant),
    refreshToken,
    refreshMaxAgeSec: Math.max(1, Math.floor((refreshExpiresAt - now) / 1000)),
    rememberMe: family.rememberMe,
  }
}
