// The authorization endpoint's rules (product spec §21; OpenID Connect Core §3.1.2, OAuth 2.1):
// the code flow only, PKCE with S256 only (required of public clients, optional for confidential
// ones, as the spec says), the redirect URI matched exactly. A request is
// judged in two stages, as panva's oidc-provider does: until the client and its redirect URI
// are known good, an error is shown to the user and never sent anywhere (an open redirector
// otherwise); after that, errors go back to the client with its `state` and our `iss`.
import { audit, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { hmacSha256, randomToken, safeEqual, sha256 } from '../secrets'
import type { Caller } from '../sessions/signed-in-user'
import type { Tenant } from '../types'
import { accessAtClient } from './client-access'
import { invalidRequest, OAuthError } from './errors'
import { isPublicClient, type OidcClient } from './types'

export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'groups', 'offline_access'] as const
export const PROMPT_VALUES = ['none', 'login', 'consent'] as const
/** A code lives this long (product spec §21). */
export const CODE_TTL_MS = 60_000
/** Set on the authorize URL a sign-in returns to: the sign-in it asked for (prompt=login, or
 *  an old one under max_age) happened after this time, so it is not asked for again. Its value
 *  is `{time}.{mac}`: see signInMark. */
export const SIGNED_IN_AFTER = 'authd_signed_in_after'
/** A mark older than this vouches for nothing (the sign-in it waited for took too long). */
export const SIGN_IN_MARK_TTL_MS = 30 * 60_000
/** A mark vouches for a sign-in only this soon after it: long enough to come back from the
 *  login form or read a consent page, too short to keep replaying the marked request under a
 *  max_age it no longer meets. */
export const SIGN_IN_MARK_GRACE_MS = 2 * 60_000

const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/
const MAX_PARAM_LENGTH = 2000

/** The request's parameters: each name once (RFC 6749 §3.1: a repeated parameter is an error). */
export type Params = Map<string, string>

export function paramsOf(entries: Iterable<[string, string]>): Params | 'repeated' {
  const params: Params = new Map()
  for (const [name, value] of entries) {
    if (params.has(name)) return 'repeated'
    params.set(name, value)
  }
  return params
}

export interface AuthorizationRequest {
  client: OidcClient
  redirectUri: string
  state: string | null
  nonce: string | null
  /** The scopes asked for that authd knows (others are ignored, as Core §3.1.2.1 allows). */
  scopes: string[]
  /** null: a confidential client sent no challenge (its secret authenticates the exchange). */
  codeChallenge: string | null
  prompt: Set<string>
  maxAgeSec: number | null
  loginHint: string | null
  /** The browser signed in after this time at this request's own asking (a genuine sign-in mark). */
  signedInAfter: number | null
}

/** Stage one: the client and the redirect URI. A failure here is shown, never redirected (null: no client_id at all). */
export async function findClientAndRedirect(deps: Pick<Deps, 'store'>, tenant: Tenant, params: Params): Promise<{ client: OidcClient; redirectUri: string }> {
  const clientId = params.get('client_id') ?? ''
  const client = clientId !== '' && clientId.length <= 100 ? await deps.store.oidc.getClient(clientId) : null
  // Another tenant's client is unknown at this tenant's issuer.
  if (!client || client.tenantId !== tenant.id) throw new OAuthError('invalid_client', 'unknown client_id')
  // (shown, never redirected: a service client has no redirect URI, and signs nobody in)
  if (client.service) throw new OAuthError('unauthorized_client', 'a service client may use the client_credentials grant only')
  const redirectUri = params.get('redirect_uri') ?? ''
  // Exactly as registered: no prefix, no normalisation, no default even for a single URI.
  if (!client.redirectUris.includes(redirectUri)) throw invalidRequest('redirect_uri is not one this client registered')
  return { client, redirectUri }
}

const optional = (params: Params, name: string): string | null => {
  const value = params.get(name)
  if (value === undefined || value === '') return null
  if (value.length > MAX_PARAM_LENGTH) throw invalidRequest(`${name} is too long`)
  return value
}

/** Stage two: everything else. A failure here is redirected to the client (with its state). */
/** @param signedInAfter what the request's sign-in mark vouches for (signedInAfterOf) */
export function parseAuthorizationRequest(params: Params, client: OidcClient, redirectUri: string, signedInAfter: number | null = null): AuthorizationRequest {
  if (params.has('request')) throw new OAuthError('request_not_supported', 'request objects are not supported')
  if (params.has('request_uri')) throw new OAuthError('request_uri_not_supported', 'request_uri is not supported')
  const responseType = params.get('response_type')
  if (responseType === undefined) throw invalidRequest('response_type is required')
  // The code flow only: no implicit or hybrid flow (OAuth 2.1).
  if (responseType !== 'code') throw new OAuthError('unsupported_response_type', 'only response_type=code is supported')
  const responseMode = params.get('response_mode')
  if (responseMode !== undefined && responseMode !== 'query') throw invalidRequest('only response_mode=query is supported')
  const requested = (params.get('scope') ?? '').split(' ').filter((s) => s !== '')
  if (!requested.includes('openid')) throw new OAuthError('invalid_scope', 'the openid scope is required')
  const scopes = SUPPORTED_SCOPES.filter((s) => requested.includes(s))
  const codeChallenge = params.get('code_challenge') ?? null
  if (codeChallenge === null) {
    // A public client has no secret: PKCE is what binds its code to it. A confidential client
    // may do without (many relying parties do not send it), and is then bound by its secret.
    if (isPublicClient(client)) throw invalidRequest('code_challenge is required (PKCE with S256) for a public client')
    if (params.has('code_challenge_method')) throw invalidRequest('code_challenge_method was sent without a code_challenge')
  } else {
    // Absent, the method would be `plain` (RFC 7636 §4.3), which OAuth 2.1 forbids.
    if (params.get('code_challenge_method') !== 'S256') throw invalidRequest('code_challenge_method must be S256 (plain is not supported)')
    if (!CODE_CHALLENGE.test(codeChallenge)) throw invalidRequest('code_challenge must be the base64url SHA-256 of the code_verifier')
  }
  const prompt = new Set((params.get('prompt') ?? '').split(' ').filter((p) => p !== ''))
  for (const value of prompt) if (!(PROMPT_VALUES as readonly string[]).includes(value)) throw invalidRequest(`prompt ${value} is not supported`)
  if (prompt.has('none') && prompt.size > 1) throw invalidRequest('prompt=none must be alone')
  const maxAge = optional(params, 'max_age')
  if (maxAge !== null && !/^\d{1,9}$/.test(maxAge)) throw invalidRequest('max_age must be a number of seconds')
  return {
    client,
    redirectUri,
    state: optional(params, 'state'),
    nonce: optional(params, 'nonce'),
    scopes,
    codeChallenge,
    prompt,
    maxAgeSec: maxAge === null ? null : Number(maxAge),
    loginHint: optional(params, 'login_hint'),
    signedInAfter,
  }
}

/**
 * The mark that lets an authorize request resumed after a sign-in skip the sign-in it asked
 * for. Anyone can edit a URL, so the time alone would vouch for nothing (a signed-in browser
 * adding `authd_signed_in_after=0` would pass prompt=login and max_age=0 without signing in,
 * which OpenID Connect Core §3.1.2.1 forbids): the mark is a MAC with a server key over the
 * time, the browser that was sent to sign in (its form cookie, a random value of its own) and
 * the request's other parameters, so it opens only this request, in this browser, for a while.
 */
export function signInMark(key: string, browser: string, params: Params, after: number): string {
  return `${after}.${hmacSha256(key, markInput(browser, params, after))}`
}

/** The time a genuine, fresh mark on this request vouches for, or null (absent, forged, another
 *  browser's or request's, or stale: the sign-in is then asked for again). */
export function signedInAfterOf(key: string, browser: string | undefined, params: Params, now: number): number | null {
  const mark = params.get(SIGNED_IN_AFTER)
  const match = mark === undefined ? null : /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(mark)
  if (!match || !browser) return null
  const after = Number(match[1])
  if (after > now || now - after > SIGN_IN_MARK_TTL_MS) return null
  return safeEqual(match[2]!, hmacSha256(key, markInput(browser, params, after))) ? after : null
}

function markInput(browser: string, params: Params, after: number): string {
  const rest = [...params].filter(([name]) => name !== SIGNED_IN_AFTER).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return JSON.stringify(['authd signed-in-after', browser, after, rest])
}

/** What the request needs next: the user to sign in, the user's consent, or nothing (a code);
 *  or `denied`: the user is signed in but not in a group the client admits (authd's page says so). */
export type AuthorizationStep = { step: 'login' } | { step: 'consent' } | { step: 'denied' } | { step: 'code'; code: string }

/**
 * Decides the next step for a browser signed in as `caller` (or not), and issues the code when
 * nothing is missing. prompt=none never shows a page: what would be shown is an error instead.
 * @param consented the user has just allowed the request on the consent page (kept once the user is signed in and admitted)
 */
export async function authorize(
  deps: Pick<Deps, 'store' | 'clock'>,
  tenant: Tenant,
  issuer: string,
  request: AuthorizationRequest,
  caller: Caller | null,
  actor: Actor,
  consented = false,
): Promise<AuthorizationStep> {
  const now = deps.clock.now()
  const signedInRecently = caller !== null && request.signedInAfter !== null && caller.authAt >= request.signedInAfter && now - caller.authAt <= SIGN_IN_MARK_GRACE_MS
  const tooOld = caller !== null && request.maxAgeSec !== null && now - caller.authAt > request.maxAgeSec * 1000
  if (!caller || (!signedInRecently && (request.prompt.has('login') || tooOld))) {
    if (request.prompt.has('none')) throw new OAuthError('login_required', 'the user is not signed in')
    return { step: 'login' }
  }
  // (before consent: nobody is asked to allow a client they may not use)
  if (!(await accessAtClient(deps, request.client, caller.user.id)).allowed) {
    await audit(deps, 'oidc.access_denied', actor, { tenantId: tenant.id, userId: caller.user.id, detail: { clientId: request.client.id } })
    if (request.prompt.has('none')) throw new OAuthError('access_denied', 'the user may not use this client')
    return { step: 'denied' }
  }
  // (kept only now: anyone the client does not admit has nothing to allow, and keeps no consent)
  if (consented) await giveConsent(deps, tenant, request, caller, actor)
  if (!request.client.firstParty && !consented) {
    const consent = await deps.store.oidc.findConsent(caller.user.id, request.client.id)
    const covered = consent !== null && request.scopes.every((s) => consent.scope.split(' ').includes(s))
    if (!covered || request.prompt.has('consent')) {
      if (request.prompt.has('none')) throw new OAuthError('consent_required', 'the user has not allowed this client')
      return { step: 'consent' }
    }
  }
  return { step: 'code', code: await issueCode(deps, tenant, issuer, request, caller, actor) }
}

async function issueCode(deps: Pick<Deps, 'store' | 'clock'>, tenant: Tenant, issuer: string, request: AuthorizationRequest, caller: Caller, actor: Actor): Promise<string> {
  const now = deps.clock.now()
  const session = await deps.store.sessions.findSession(caller.sessionId)
  const code = randomToken(32)
  await deps.store.oidc.insertCode({
    id: Bun.randomUUIDv7(),
    codeHash: sha256(code),
    tenantId: tenant.id,
    clientId: request.client.id,
    userId: caller.user.id,
    sessionId: caller.sessionId,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    issuer,
    nonce: request.nonce,
    scope: request.scopes.join(' '),
    authAt: caller.authAt,
    amr: session?.family.amr ?? 'pwd',
    userEpoch: caller.user.sessionEpoch,
    createdAt: now,
    expiresAt: now + CODE_TTL_MS,
    spentAt: null,
    familyId: null,
  })
  await audit(deps, 'oidc.code_issued', actor, { tenantId: tenant.id, userId: caller.user.id, detail: { clientId: request.client.id, scope: request.scopes.join(' ') } })
  return code
}

/** The user allowed the request on the consent page: the consent is kept (widened to these scopes). */
export async function giveConsent(deps: Pick<Deps, 'store' | 'clock'>, tenant: Tenant, request: AuthorizationRequest, caller: Caller, actor: Actor): Promise<void> {
  const earlier = await deps.store.oidc.findConsent(caller.user.id, request.client.id)
  const scope = [...new Set([...(earlier?.scope.split(' ') ?? []), ...request.scopes])].join(' ')
  await deps.store.oidc.saveConsent({ userId: caller.user.id, clientId: request.client.id, tenantId: tenant.id, scope, createdAt: deps.clock.now() })
  await audit(deps, 'oidc.consent_given', actor, { tenantId: tenant.id, userId: caller.user.id, detail: { clientId: request.client.id, scope } })
}

/**
 * Where the browser goes back to the client: the redirect URI (its own query kept) with the
 * answer's parameters, `state` as sent and `iss` (RFC 9207: the client can tell which issuer
 * answered, against mix-up attacks).
 */
export function clientRedirect(redirectUri: string, issuer: string, state: string | null, answer: Record<string, string>): string {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries(answer)) url.searchParams.append(name, value)
  if (state !== null) url.searchParams.append('state', state)
  url.searchParams.append('iss', issuer)
  return url.href
}
