// The forward-auth decision (product spec §24), one function behind every proxy's protocol
// (server/forward-auth): the first rule that matches the original request decides, then the
// session (the domain cookie's or a bearer token's) is judged against it. A check reads the
// rules from memory, and at most the session with its user and the user's group names from the
// store; it writes nothing but a sampled denial and, at most once a minute, the session's last use.
import { auditEvent, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import { refreshTokenKey } from '../sessions/refresh-tokens'
import { authenticateBearer, sessionTokenCaller, type Caller } from '../sessions/signed-in-user'
import type { Store } from '../store'
import { SESSION_USE_GRAIN_MS } from '../sessions/store'
import type { Tenant, User } from '../types'
import { forwardAuthDomainsOf, isWithin } from './domains'
import { matchRule, normalisePath, type RequestAsked } from './rules'
import { rulesOf } from './rule-book'
import type { AccessRule } from './types'

type CheckDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'keyRing' | 'events'>

/** Who a check found: the session's user, how they signed in, their groups. */
export interface Identity {
  user: User
  sessionId: string
  amr: string[]
  groups: string[]
  lastUsedAt: number
}

export type AccessAnswer =
  /** identity null: a bypass rule, which asks nobody's name. */
  | { outcome: 'allowed'; identity: Identity | null; rule: AccessRule }
  /** No live session of the tenant: sign in first. */
  | { outcome: 'sign_in' }
  /** A two_factor rule and a session signed in without a second factor. */
  | { outcome: 'second_factor'; identity: Identity; rule: AccessRule }
  /** rule null: no rule matched (the default is to deny). */
  | { outcome: 'denied'; identity: Identity | null; rule: AccessRule | null }

/** How a request proves its session: the domain cookie's refresh token, or an access token. */
export interface Credential {
  sessionToken?: string
  authorization?: string | null
}

/** A second factor in the session's sign-in (RFC 8176): a TOTP or recovery code (`otp`), a
 *  passkey that verified its user (`mfa`), or a passkey after the password or an upstream
 *  provider's sign-in (`hwk`/`swk` after `pwd` or `fed`). */
export const hasSecondFactor = (amr: string[]) => amr.includes('otp') || amr.includes('mfa') || ((amr.includes('pwd') || amr.includes('fed')) && (amr.includes('hwk') || amr.includes('swk')))

/** The request as a proxy reported it, or null when its path does not decode (a 400). */
export function askedOf(host: string, rawPath: string, method: string): RequestAsked | null {
  const path = normalisePath(rawPath)
  // (the host without its port, as rules name it; an IPv6 literal keeps its brackets)
  const bare = host.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '')
  return path === null || bare === '' ? null : { host: bare, path, method: method.trim().toUpperCase() }
}

/** Whether the original request may go on, and as whom. */
export async function checkAccess(deps: CheckDeps, tenant: Tenant, asked: RequestAsked, credential: Credential, actor: Actor): Promise<AccessAnswer> {
  const rule = await ruleFor(deps, tenant, asked)
  // A bypass asks nobody, and reads nothing from the store.
  const answer =
    rule?.policy === 'bypass' ? ({ outcome: 'allowed', identity: null, rule } as const) : decide(rule, await identify(deps, tenant, credential))
  await report(deps, tenant, asked, answer, actor)
  return answer
}

/**
 * What a signed-in browser on authd's pages would be told at `url` (a GET): the login page asks
 * before it sends a return_to onwards, so that a session that needs a second factor, or may not
 * enter at all, is told so at authd rather than sent round in a loop.
 */
export async function checkReturn(deps: CheckDeps, tenant: Tenant, caller: Caller, url: URL, actor: Actor): Promise<AccessAnswer> {
  const asked = askedOf(url.host, url.pathname, 'GET')
  if (!asked) return { outcome: 'denied', identity: null, rule: null }
  const rule = await ruleFor(deps, tenant, asked)
  const answer = rule?.policy === 'bypass' ? ({ outcome: 'allowed', identity: null, rule } as const) : decide(rule, await identityOf(deps, caller))
  await report(deps, tenant, asked, answer, actor)
  return answer
}

/** The rule that decides, or null: none matches, or the host is off the tenant's protected
 *  domains (a rule left behind when the operator narrowed them decides nothing). */
async function ruleFor(deps: CheckDeps, tenant: Tenant, asked: RequestAsked): Promise<AccessRule | null> {
  if (!forwardAuthDomainsOf(tenant).some((domain) => isWithin(asked.host, domain))) return null
  return matchRule(await rulesOf(deps, tenant.id), asked)
}

function decide(rule: AccessRule | null, identity: Identity | null): AccessAnswer {
  if (!rule || rule.policy === 'deny') return { outcome: 'denied', identity, rule }
  if (rule.policy === 'bypass') return { outcome: 'allowed', identity: null, rule }
  if (!identity) return { outcome: 'sign_in' }
  if (rule.groups.length > 0 && !rule.groups.some((group) => identity.groups.includes(group))) return { outcome: 'denied', identity, rule }
  if (rule.policy === 'two_factor' && !hasSecondFactor(identity.amr)) return { outcome: 'second_factor', identity, rule }
  return { outcome: 'allowed', identity, rule }
}

/**
 * The session the request carries, if it is live and this tenant's; any other is no session. A
 * bearer token is tried first, then the cookie: an application may have an Authorization of its
 * own (Basic, or its own tokens) that the proxy passes along, which must not hide the cookie.
 */
async function identify(deps: CheckDeps, tenant: Tenant, credential: Credential): Promise<Identity | null> {
  const bearer = credential.authorization && /^Bearer /i.test(credential.authorization) ? credential.authorization : null
  if (bearer) {
    const caller = await refusedAsNobody(() => authenticateBearer(deps, bearer))
    if (caller?.tenant.id === tenant.id) return identityOf(deps, caller)
  }
  const { sessionToken } = credential
  if (sessionToken && sessionToken.length <= 128) {
    // The session, its user and the user's groups in one read: the common case of a check.
    const found = await deps.store.sessions.findTokenWithGroups(refreshTokenKey(sessionToken))
    const caller = await refusedAsNobody(async () => sessionTokenCaller(found, tenant.id, deps.clock.now()))
    if (caller && found) return { user: caller.user, sessionId: caller.sessionId, amr: caller.amr, groups: found.groups, lastUsedAt: caller.lastUsedAt }
  }
  return null
}

/** A refusal (an ended session, a disabled user or tenant, a token not authd's) is no session. */
async function refusedAsNobody(authenticate: () => Promise<Caller>): Promise<Caller | null> {
  try {
    return await authenticate()
  } catch (error) {
    if (error instanceof AppError && error.status < 500) return null
    throw error
  }
}

async function identityOf(deps: Pick<Deps, 'store'>, caller: Caller): Promise<Identity> {
  return { user: caller.user, sessionId: caller.sessionId, amr: caller.amr, groups: await deps.store.groups.groupNamesOfUser(caller.user.id), lastUsedAt: caller.lastUsedAt }
}

/** A denial is audited at most once a minute per user and rule (a refused page reloading, or
 *  its every image, would bury the log); every answer is counted in the metrics. */
const DENIAL_SAMPLE_MS = 60_000
const MAX_SAMPLED = 10_000
const lastDenials = new WeakMap<Store, Map<string, number>>()

async function report(deps: CheckDeps, tenant: Tenant, asked: RequestAsked, answer: AccessAnswer, actor: Actor) {
  deps.events.notify({ kind: 'forward_auth', outcome: answer.outcome })
  // The session's last use (listed on the account page), at most once a minute: most checks write nothing.
  const identity = 'identity' in answer ? answer.identity : null
  if (identity && deps.clock.now() - identity.lastUsedAt >= SESSION_USE_GRAIN_MS) await deps.store.sessions.markUsed(identity.sessionId, deps.clock.now())
  // (a denial of nobody in particular is counted, not audited: it names no one to look into)
  if (answer.outcome !== 'denied' || !answer.identity) return
  const userId = answer.identity.user.id
  let sampled = lastDenials.get(deps.store)
  if (!sampled) lastDenials.set(deps.store, (sampled = new Map()))
  const key = `${userId}|${answer.rule?.id ?? ''}`
  const now = deps.clock.now()
  const last = sampled.get(key)
  if (last !== undefined && now - last < DENIAL_SAMPLE_MS) return
  if (sampled.size >= MAX_SAMPLED) sampled.clear()
  sampled.set(key, now)
  const detail = { host: asked.host, path: asked.path.slice(0, 200), method: asked.method, ruleId: answer.rule?.id ?? null, sessionId: answer.identity.sessionId }
  await deps.store.audit.record(auditEvent(deps, 'forward_auth.denied', actor, { tenantId: tenant.id, userId, detail }))
}
