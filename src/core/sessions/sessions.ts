// Login sessions: one login = one refresh-token family. Every refresh spends the presented
// token and hands out its successor; a spent token presented again within the grace period
// gets the same successor (two tabs refreshing at once both stay logged in); after it, the
// reuse means the token was stolen or replayed, and the whole family is revoked.
import { signAccessToken } from './access-tokens'
import { audit, auditEvent, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { tenantDisabled, unauthorized, userDisabled } from '../errors'
import { newRefreshToken, refreshTokenKey, successorRefreshToken } from './refresh-tokens'
import type { ActiveSigningKey } from './key-ring'
import { listSessions, type SessionView } from './signed-in-user'
import type { SessionOrigin, SessionStartRecord } from './store'
import type { AuditEvent, RefreshFamily, RefreshToken, Tenant, User } from '../types'
import { getUser, toPublicUser, type PublicUser } from '../accounts/users'

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

export type SessionDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'keyRing'>

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
    authAt: Math.min(now, record?.authAt ?? now),
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
  admit?: (family: RefreshFamily) => void | Promise<void>,
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
  if (token.spentAt === null || now - token.spentAt <= deps.config.refreshGraceSec * 1000) await admit?.(family)

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
  // (read for every token issued: a change of membership shows in the next one, login or refresh)
  const groups = await deps.store.groups.groupNamesOfUser(user.id)
  const accessToken = signAccessToken(signingKey, { issuer, audience: tenant.audience, ttlSec: accessTokenTtlSec }, user, family.id, now, amr, groups)
  return {
    accessToken,
    user: toPublicUser(user, tenant),
    refreshToken,
    refreshMaxAgeSec: Math.max(1, Math.floor((refreshExpiresAt - now) / 1000)),
    rememberMe: family.rememberMe,
  }
}
