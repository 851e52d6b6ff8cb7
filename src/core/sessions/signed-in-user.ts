// The signed-in user (product spec §16): requests authorised by an access token that is also
// checked against its session (the token's `sid`), so ending a session shuts its tokens out
// of these endpoints at once. Resource servers that only verify the JWT accept the token until
// it expires (15 minutes); README says so.
import { verifyAccessToken } from './access-tokens'
import { audit, auditEvent, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { notFound, tenantDisabled, unauthorized, userDisabled } from '../errors'
import { passwordChangedNotice } from '../mail/outbox'
import { checkPasswordPolicy } from '../accounts/password-policy'
import { refreshTokenKey } from './refresh-tokens'
import { requireRecentAuth } from './recent-auth'
import type { RefreshFamily, RefreshToken, Tenant, User } from '../types'

export interface Caller {
  user: User
  tenant: Tenant
  /** The session (refresh family) the access token was issued to. */
  sessionId: string
  /** When the user last proved who they are in that session (login or reauthenticate). */
  authAt: number
  /** How the user proved who they are in that session (RFC 8176: `pwd`, `otp`, `mfa`, ...). */
  amr: string[]
  /** When the session was last used, as far as the store knows (its latest token, or a check). */
  lastUsedAt: number
}

/** One of the user's sessions, as the user (and an admin) sees it: never a token. */
export interface SessionView {
  sessionId: string
  createdAt: string
  lastUsedAt: string
  /** When the session ends unless it is refreshed before then. */
  expiresAt: string
  userAgent: string | null
  ip: string | null
  /** True for the session of the access token that asked. */
  current: boolean
}

type CallerDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'keyRing'>

/**
 * The caller an `Authorization: Bearer` header names: a token this authd signed, unexpired,
 * whose session is live and still belongs to the token's user and tenant. Any failure is the
 * same 401; a disabled user or tenant is a 403, as at refresh.
 */
export async function authenticateBearer(deps: CallerDeps, authorization: string | null | undefined): Promise<Caller> {
  const token = /^Bearer +([A-Za-z0-9._-]+) *$/i.exec(authorization ?? '')?.[1]
  if (!token) throw unauthorized()
  const now = deps.clock.now()
  let session: Awaited<ReturnType<typeof deps.store.sessions.findSession>> = null
  const claims = await verifyAccessToken(deps.keyRing, token, {
    issuer: deps.config.issuer,
    now,
    // Called once the signature holds: the session's own row gives the tenant's audience.
    audienceOf: async (tenantId, { sid }) => {
      session = await deps.store.sessions.findSession(sid)
      return session?.tenant.id === tenantId ? session.tenant.audience : null
    },
  })
  const found = session as Awaited<ReturnType<typeof deps.store.sessions.findSession>>
  if (!found || found.family.userId !== claims.sub || found.family.clientId || !isLive(found.family, now)) throw unauthorized()
  if (found.user.disabledAt !== null) throw userDisabled()
  if (found.tenant.disabledAt !== null) throw tenantDisabled()
  return { user: found.user, tenant: found.tenant, sessionId: found.family.id, authAt: found.family.authAt, amr: amrOf(found.family), lastUsedAt: Math.max(found.family.lastUsedAt ?? 0, found.family.createdAt) }
}

/**
 * The caller a session's refresh token names, without spending it: authd's own pages keep
 * their session's first token in a cookie of their own (sealed: server/pages/page-session.ts) and
 * present it with every page, where an app rotates its token at /refresh-token. The token's
 * expiry (1 or 30 days after the login) and the session's rules are those of any session:
 * revoked, expired, another tenant's, a disabled user or tenant are all refused alike (401).
 */
export async function authenticateSessionToken(deps: Pick<Deps, 'store' | 'clock'>, token: string | undefined, tenantId: string): Promise<Caller> {
  if (!token || token.length > 128) throw unauthorized()
  return sessionTokenCaller(await deps.store.sessions.findToken(refreshTokenKey(token)), tenantId, deps.clock.now())
}

/** The caller of a session token's rows (findToken's), by authenticateSessionToken's rules. */
export function sessionTokenCaller(found: { token: RefreshToken; family: RefreshFamily; user: User; tenant: Tenant } | null, tenantId: string, now: number): Caller {
  // (an OpenID client's grant is no page session: core/oidc)
  if (!found || found.token.spentAt !== null || found.token.expiresAt <= now || found.family.clientId || !isLive(found.family, now)) throw unauthorized()
  if (found.tenant.id !== tenantId || found.user.disabledAt !== null || found.tenant.disabledAt !== null) throw unauthorized()
  return { user: found.user, tenant: found.tenant, sessionId: found.family.id, authAt: found.family.authAt, amr: amrOf(found.family), lastUsedAt: Math.max(found.family.lastUsedAt ?? 0, found.token.createdAt) }
}

/** The session's amr as stored (`pwd,otp`). */
export const amrOf = (family: Pick<RefreshFamily, 'amr'>): string[] => (family.amr ? family.amr.split(',') : ['pwd'])

const isLive = (family: RefreshFamily, now: number) => family.revokedAt === null && family.expiresAt > now

/** The user's sessions that can still be refreshed, newest first. */
export async function listSessions(deps: Pick<Deps, 'store' | 'clock'>, userId: string, currentSessionId?: string): Promise<SessionView[]> {
  // (an OpenID client's grants are listed as such: core/oidc/grants.ts)
  const live = (await deps.store.sessions.listLive(userId, deps.clock.now())).filter(({ family }) => !family.clientId)
  // The live token was issued by the session's latest login or refresh: its last use, unless
  // a forward-auth check saw it later (core/forward-auth/check.ts).
  return live.map(({ family, liveToken }) => ({
    sessionId: family.id,
    createdAt: new Date(family.createdAt).toISOString(),
    lastUsedAt: new Date(Math.max(liveToken.createdAt, family.lastUsedAt ?? 0)).toISOString(),
    expiresAt: new Date(liveToken.expiresAt).toISOString(),
    userAgent: liveToken.userAgent,
    ip: liveToken.ip,
    current: family.id === currentSessionId,
  }))
}

/** Ends one of the user's sessions; another user's (or an unknown or ended) session is a 404. */
export async function endSession(deps: Pick<Deps, 'store' | 'clock'>, userId: string, sessionId: string, actor: Actor): Promise<void> {
  const found = await deps.store.sessions.findSession(sessionId)
  if (!found || found.family.userId !== userId || !isLive(found.family, deps.clock.now())) throw notFound('Session not found')
  const ended = auditEvent(deps, 'session.ended', actor, { tenantId: found.family.tenantId, userId, detail: { familyId: sessionId } })
  await deps.store.sessions.revokeFamily(sessionId, deps.clock.now(), 'ended-by-user', ended)
}

/** Ends every session of the user, the caller's own included; returns how many. */
export async function endAllSessions(deps: Pick<Deps, 'store' | 'clock'>, caller: Caller, actor: Actor): Promise<number> {
  const ended = await deps.store.sessions.revokeUserFamilies(caller.user.id, deps.clock.now(), 'logout-all')
  await audit(deps, 'sessions.ended_all', actor, { tenantId: caller.tenant.id, userId: caller.user.id, detail: { ended } })
  return ended
}

/**
 * POST /me/password: the signed-in user sets a new password. Needs step-up (a proof of the
 * user within the last few minutes of this session): a stolen token must not lock the owner
 * out. The policy applies; the user's other sessions end, their OTPs, setup tokens and login
 * challenges are spent, and a mail tells them; this session goes on.
 */
export async function changePasswordInSession(
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'hasher' | 'mailQueued'>,
  caller: Caller,
  newPassword: string,
  actor: Actor,
): Promise<User> {
  requireRecentAuth(deps, caller)
  const { user, tenant } = caller
  const passwordHash = await deps.hasher.hash(await checkPasswordPolicy(newPassword, deps.config.passwordMinLength, user))
  const now = deps.clock.now()
  await deps.store.users.replacePassword({ userId: user.id, passwordHash, now, notice: passwordChangedNotice(tenant, user, now, actor.language), reason: 'password-changed', keepSessionId: caller.sessionId })
  deps.mailQueued.notify()
  await audit(deps, 'password.changed', actor, { tenantId: tenant.id, userId: user.id, detail: { in: 'session' } })
  return { ...user, passwordHash, updatedAt: now }
}
