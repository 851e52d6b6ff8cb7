// The token endpoint's grants and the tokens they issue (what the tokens open: access.ts) (product spec
// §21). A redeemed code starts a grant: a refresh family of §4 that belongs to the client
// (RefreshFamily.clientId), so refresh rotation, the grace period and reuse detection are
// those of authd's own sessions, and ending the user's sessions ends their grants too.
//
// The ID token is signed synchronously (core/jws.ts) with the key ring's key of the client's
// algorithm (id_token_signed_response_alg: RS256 unless it asked for ES256); access tokens for
// userinfo are JWTs (RFC 9068, typ at+jwt) signed like authd's own access tokens (ES256),
// but with this issuer: authd's own API (whose issuer is AUTHD_ISSUER) never accepts one, and
// they name their grant (`sid`), so a revoked grant's tokens stop working at userinfo at once.
import { createHash, sign } from 'node:crypto'
import { auditEvent, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import { signJws } from '../sessions/jws'
import { sha256 } from '../secrets'
import { newRefreshToken } from '../sessions/refresh-tokens'
import { newTokenRecord, rotateRefreshToken } from '../sessions/sessions'
import type { ActiveSigningKey } from '../sessions/key-ring'
import type { RefreshFamily, Tenant, User } from '../types'
import { accessAtClient, carriesGroups } from './client-access'
import { invalidGrant, invalidRequest, OAuthError } from './errors'
import { isPublicClient, type OidcClient, type OidcCode } from './types'

/** The redirect URI a device approval's code carries (no client registers it: URNs are no redirect URI). */
export const DEVICE_CODE_REDIRECT = 'urn:ietf:params:oauth:grant-type:device_code'

export type TokenDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'keyRing' | 'serverKeys'>

/** A grant without offline_access backs its access tokens only, so it ends with the last of them. */
const OFFLINE_SCOPE = 'offline_access'
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  id_token: string
  scope: string
  refresh_token?: string
}

/** RFC 7636 §4.6: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge. */
export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url')

/** OpenID Connect Core §3.1.3.6: the left half of the access token's SHA-256, base64url. */
export const atHash = (accessToken: string) => createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url')

/** grant_type=authorization_code. Checks as oidc-provider does, before the code is spent; a spent code revokes what its first use gave. */
export async function exchangeCode(
  deps: TokenDeps,
  tenant: Tenant,
  issuer: string,
  client: OidcClient,
  input: { code: string | undefined; redirectUri: string | undefined; codeVerifier: string | undefined },
  actor: Actor,
): Promise<TokenResponse> {
  if (!input.code) throw invalidRequest('code is required')
  if (!input.redirectUri) throw invalidRequest('redirect_uri is required')
  // A public client's code always has a challenge (authorize requires one of it).
  if (isPublicClient(client) && !input.codeVerifier) throw invalidRequest('code_verifier is required (PKCE)')
  if (input.codeVerifier !== undefined && !CODE_VERIFIER.test(input.codeVerifier)) throw invalidGrant('code_verifier is malformed')
  const code = input.code.length <= 128 ? await deps.store.oidc.findCode(sha256(input.code)) : null
  const now = deps.clock.now()
  if (!code || code.tenantId !== tenant.id) throw invalidGrant()
  if (code.spentAt !== null) {
    // Only the code's own client, authenticated, takes back what it gave: another client (a
    // public one needs no secret) presenting a stolen spent code would otherwise end the user's grant.
    if (code.clientId !== client.id) throw invalidGrant()
    // A code seen twice was intercepted, or replayed: what it gave is taken back (RFC 6749 §4.1.2).
    await deps.store.oidc.revokeCodeGrant(code.id, now, auditEvent(deps, 'oidc.code_reused', actor, { tenantId: tenant.id, userId: code.userId, detail: { clientId: code.clientId } }))
    throw invalidGrant()
  }
  // (a code is redeemed at the issuer spelling it was issued at: /t/acme's code is no code at /t/{id})
  const otherIssuer = code.issuer != null && code.issuer !== issuer
  if (code.expiresAt <= now || code.clientId !== client.id || code.redirectUri !== input.redirectUri || otherIssuer) throw invalidGrant()
  // (a device approval's code is redeemed by the device's poll alone: device.ts)
  if (code.redirectUri === DEVICE_CODE_REDIRECT) throw invalidGrant()
  if (code.codeChallenge !== null && !input.codeVerifier) throw invalidRequest('code_verifier is required (PKCE): the authorization request sent a code_challenge')
  // A verifier for a request that sent no challenge is refused too: the client believes PKCE protects it, and it does not.
  const pkceHolds = code.codeChallenge === null ? input.codeVerifier === undefined : s256(input.codeVerifier!) === code.codeChallenge
  if (!pkceHolds) throw invalidGrant(code.codeChallenge === null ? 'the authorization request sent no code_challenge, so no code_verifier is taken' : undefined)
  return redeemCode(deps, tenant, issuer, client, code, actor)
}

/**
 * An unspent code of this client, checked, redeemed: the grant starts and its tokens are issued
 * (the authorization code grant's, and the device grant's once a person approved: device.ts).
 */
export async function redeemCode(deps: TokenDeps, tenant: Tenant, issuer: string, client: OidcClient, code: OidcCode, actor: Actor): Promise<TokenResponse> {
  const now = deps.clock.now()
  const session = await deps.store.sessions.findSession(code.sessionId)
  if (!session || session.user.disabledAt !== null || session.tenant.disabledAt !== null) throw invalidGrant()
  // The rule of the authorization endpoint again (client-access.ts): a user removed from every
  // allowed group since the code was issued gets no tokens from it.
  const access = client.allowedGroups === null ? null : await accessAtClient(deps, client, code.userId)
  if (access && !access.allowed) throw invalidGrant('the user may no longer use this client')
  const grant = await startGrant(deps, code, actor)
  if (grant === 'spent') {
    await deps.store.oidc.revokeCodeGrant(code.id, now, auditEvent(deps, 'oidc.code_reused', actor, { tenantId: tenant.id, userId: code.userId, detail: { clientId: code.clientId } }))
    throw invalidGrant()
  }
  if (grant === 'stale') throw invalidGrant()
  return issueTokens(deps, issuer, client, session.user, grant.family, code.scope, grant.refreshToken, { nonce: code.nonce, sid: code.sessionId, groups: access?.groups ?? null })
}

async function startGrant(deps: TokenDeps, code: OidcCode, actor: Actor) {
  const now = deps.clock.now()
  const offline = code.scope.split(' ').includes(OFFLINE_SCOPE)
  const family: RefreshFamily = {
    id: Bun.randomUUIDv7(),
    userId: code.userId,
    tenantId: code.tenantId,
    // An offline grant lives as a remembered session does (30 days sliding, the absolute cap);
    // any other ends with its first access token.
    rememberMe: true,
    createdAt: now,
    expiresAt: now + (offline ? deps.config.sessionMaxAgeSec : deps.config.accessTokenTtlSec) * 1000,
    revokedAt: null,
    revokedReason: null,
    amr: code.amr,
    authAt: code.authAt,
    clientId: code.clientId,
    scope: code.scope,
  }
  const refreshToken = newRefreshToken(now, deps.config.refreshTokenFormat)
  const signingKey = await deps.keyRing.signingKey()
  const firstToken = newTokenRecord(deps, family, refreshToken, signingKey.kid, now, actor)
  // (the grant's audit event is committed with it: one commit per exchange, not two)
  const started = auditEvent(deps, 'oidc.grant_started', actor, { tenantId: code.tenantId, userId: code.userId, detail: { clientId: code.clientId, familyId: family.id, scope: code.scope } })
  const outcome = await deps.store.oidc.redeemCode({ codeId: code.id, now, family, firstToken, userEpoch: code.userEpoch, audit: started })
  return outcome === 'redeemed' ? { family, refreshToken: offline ? refreshToken : null } : outcome
}

/**
 * grant_type=refresh_token: rotation with reuse detection exactly as §4; `scope` may narrow, never
 * widen. The scope is checked before the token is spent: a refused request that spent it would
 * make the client's next refresh look like a stolen token's (and revoke the grant).
 */
export async function refreshGrant(deps: TokenDeps, issuer: string, client: OidcClient, input: { refreshToken: string | undefined; scope: string | undefined }, actor: Actor): Promise<TokenResponse> {
  if (!input.refreshToken) throw invalidRequest('refresh_token is required')
  const granted = (family: RefreshFamily) => (family.scope ?? 'openid').split(' ')
  const asked = input.scope?.split(' ').filter((s) => s !== '')
  const withinGrant = (family: RefreshFamily) => {
    if (asked && !asked.every((s) => granted(family).includes(s))) throw new OAuthError('invalid_scope', 'scope may not be wider than the grant')
  }
  // The grant is re-checked against the client's allowed groups at every refresh (the rule of
  // the authorization endpoint, client-access.ts): a user who left every one of them loses the
  // client now, the grant ends. The groups read for it are those the new tokens name.
  let groups: string[] | null = null
  const admit = async (family: RefreshFamily) => {
    withinGrant(family)
    // (a client open to anyone has nothing to check: the groups are read only if its tokens name them)
    if (client.allowedGroups === null) return
    const access = await accessAtClient(deps, client, family.userId)
    if (!access.allowed) {
      const ended = auditEvent(deps, 'oidc.grant_revoked', actor, { tenantId: family.tenantId, userId: family.userId, detail: { clientId: client.id, familyId: family.id, reason: 'not-in-allowed-groups' } })
      await deps.store.sessions.revokeFamily(family.id, deps.clock.now(), 'not-in-allowed-groups', ended)
      throw invalidGrant('the user may no longer use this client')
    }
    groups = access.groups
  }
  let rotated
  try {
    // (the refresh's audit event is committed with the rotation: one commit, not two)
    const refreshed = (family: RefreshFamily) => auditEvent(deps, 'oidc.grant_refreshed', actor, { tenantId: family.tenantId, userId: family.userId, detail: { clientId: client.id, familyId: family.id } })
    rotated = await rotateRefreshToken(deps, input.refreshToken, actor, client.id, refreshed, admit)
  } catch (error) {
    if (error instanceof OAuthError) throw error
    // Unknown, spent past the grace period (the grant is revoked then), another client's, a disabled user: all one answer.
    if (error instanceof AppError && error.status < 500) throw invalidGrant()
    throw error
  }
  const scope = (asked ?? granted(rotated.family)).join(' ')
  // RFC 6749 §6: the successor keeps the grant's scope, however narrow this access token is, and
  // goes back whenever the grant holds offline_access (the old token is spent either way).
  const successor = granted(rotated.family).includes(OFFLINE_SCOPE) ? rotated.successor : null
  return issueTokens(deps, issuer, client, rotated.user, rotated.family, scope, successor, { nonce: null, sid: null, groups })
}

async function issueTokens(
  deps: TokenDeps,
  issuer: string,
  client: OidcClient,
  user: User,
  family: RefreshFamily,
  scope: string,
  refreshToken: string | null,
  /** groups: the user's groups if already read for this token (a refresh's access check), else null. */
  extra: { nonce: string | null; sid: string | null; groups: string[] | null },
): Promise<TokenResponse> {
  const scopes = scope.split(' ')
  const groups = carriesGroups(client, scopes) ? (extra.groups ?? (await deps.store.groups.groupNamesOfUser(user.id))) : null
  const key = await deps.keyRing.signingKey()
  const now = deps.clock.now()
  const ttlSec = deps.config.accessTokenTtlSec
  const accessToken = signAccessJwt(key, { iss: issuer, aud: issuer, sub: user.id, client_id: client.id, scope, sid: family.id, iat: Math.floor(now / 1000), exp: Math.floor(now / 1000) + ttlSec, jti: Bun.randomUUIDv7() })
  const iat = Math.floor(now / 1000)
  const idToken = signJws(await deps.keyRing.signingKey(client.idTokenAlg), 'JWT', {
    ...userClaims(user, scopes, groups),
    amr: family.amr ? family.amr.split(',') : ['pwd'],
    auth_time: Math.floor(family.authAt / 1000),
    // (the left half of SHA-256 for RS256 as for ES256: both hash with SHA-256)
    at_hash: atHash(accessToken),
    ...(extra.nonce !== null && { nonce: extra.nonce }),
    ...(extra.sid !== null && { sid: extra.sid }),
    iss: issuer,
    sub: user.id,
    aud: client.id,
    iat,
    exp: iat + ttlSec,
  })
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: ttlSec,
    id_token: idToken,
    scope,
    ...(refreshToken !== null && { refresh_token: refreshToken }),
  }
}

/**
 * The claims of the granted scopes (Core §5.4): profile's names, email's address; and the user's
 * groups (sorted names, product spec §23) when `groups` is not null (carriesGroups: the scope
 * `groups`, or a client with groupsClaim 'always'), an empty list for a user in none.
 */
export function userClaims(user: User, scopes: string[], groups: string[] | null = null): Record<string, unknown> {
  return {
    ...(groups !== null && { groups }),
    ...(scopes.includes('profile') && { name: `${user.firstName} ${user.lastName}`.trim(), given_name: user.firstName, family_name: user.lastName }),
    // Verified once the user proved the address by mail (or an admin vouched for it); a new
    // address is unverified until then.
    ...(scopes.includes('email') && { email: user.email, email_verified: user.emailVerifiedAt !== null }),
  }
}

const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')

export function signAccessJwt(key: ActiveSigningKey, claims: Record<string, unknown>): string {
  const input = `${b64url({ alg: 'ES256', typ: 'at+jwt', kid: key.kid })}.${b64url(claims)}`
  return `${input}.${sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`
}
