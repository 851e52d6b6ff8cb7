// What the provider's tokens open after they are issued (product spec §21): the userinfo
// endpoint, revocation (RFC 7009), and an id_token_hint at end_session. Tokens are verified
// with jose against the key ring (ES256 only, RS256 too for an ID token; this issuer only), and
// an access token counts only while its grant (the refresh family it names in `sid`) is live.
import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose'
import { auditEvent, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { refreshTokenKey } from '../sessions/refresh-tokens'
import type { RefreshFamily, SigningAlg, Tenant } from '../types'
import { accessAtClient, carriesGroups } from './client-access'
import { bearerRequired, invalidRequest, invalidToken, OAuthError } from './errors'
import { userClaims } from './tokens'
import type { OidcClient } from './types'

/** Verifies a JWT this issuer signed, with the key of `algorithms` its header names, via jose. */
export async function verifyIssued(deps: Pick<Deps, 'keyRing' | 'clock'>, token: string, issuer: string, options: { typ?: string; acceptExpired?: boolean; algorithms: SigningAlg[] }): Promise<JWTPayload> {
  if (token.length > 8192) throw invalidToken()
  try {
    const header = decodeProtectedHeader(token)
    const alg = options.algorithms.find((a) => a === header.alg)
    const key = typeof header.kid === 'string' && alg ? await deps.keyRing.publicKey(header.kid, alg) : null
    if (!key) throw invalidToken()
    const { payload } = await jwtVerify(token, key, {
      algorithms: options.algorithms,
      issuer,
      typ: options.typ,
      currentDate: options.acceptExpired ? new Date(0) : new Date(deps.clock.now()),
    })
    return payload
  } catch {
    throw invalidToken()
  }
}

/** The live grant an access token was issued for, with its user; invalid_token for anything else. */
export async function grantOfAccessToken(deps: Pick<Deps, 'store' | 'keyRing' | 'clock'>, tenant: Tenant, issuer: string, token: string) {
  const claims = await verifyIssued(deps, token, issuer, { typ: 'at+jwt', algorithms: ['ES256'] })
  if (claims.aud !== issuer || typeof claims.sid !== 'string') throw invalidToken()
  const found = await deps.store.sessions.findSession(claims.sid)
  const now = deps.clock.now()
  if (!found || found.tenant.id !== tenant.id || found.family.clientId !== claims.client_id || found.family.userId !== claims.sub) throw invalidToken()
  if (found.family.revokedAt !== null || found.family.expiresAt <= now || found.user.disabledAt !== null || found.tenant.disabledAt !== null) throw invalidToken()
  return { ...found, scope: typeof claims.scope === 'string' ? claims.scope : '' }
}

/**
 * The access token a userinfo request carries (RFC 6750 §2.1). A request with no credentials, or
 * with another scheme than Bearer, is told only that a token is needed (§3.1: no error code, as
 * no token was wrong); a malformed one is invalid_token.
 */
export function presentedBearer(authorization: string | null): string {
  if (authorization === null || !/^Bearer(?: |$)/i.test(authorization)) throw bearerRequired()
  const token = /^Bearer +([A-Za-z0-9._-]+) *$/i.exec(authorization)?.[1]
  if (!token) throw invalidToken()
  return token
}

/** The userinfo endpoint (Core §5.3): `sub` and the claims of the token's scopes. */
export async function userInfo(deps: Pick<Deps, 'store' | 'keyRing' | 'clock'>, tenant: Tenant, issuer: string, token: string): Promise<Record<string, unknown>> {
  const grant = await grantOfAccessToken(deps, tenant, issuer, token)
  const scopes = grant.scope.split(' ')
  // (the client decides whether groups come without the scope: its groupsClaim; the groups are read now, as they are)
  const client = await deps.store.oidc.getClient(grant.family.clientId!)
  if (!client) throw invalidToken()
  // A user who left every group the client admits is refused here at once, not only at the
  // grant's next refresh: an access token lives 15 minutes (product spec §23).
  const access = client.allowedGroups !== null || carriesGroups(client, scopes) ? await accessAtClient(deps, client, grant.user.id) : null
  if (access && !access.allowed) throw invalidToken()
  const groups = access && carriesGroups(client, scopes) ? access.groups : null
  return { sub: grant.user.id, ...userClaims(grant.user, scopes, groups) }
}

/**
 * The revocation endpoint (RFC 7009): a refresh token or an access token of this client ends
 * its grant. A token that is no live grant's at this issuer (unknown, ended, another tenant's,
 * authd's own session) is answered 200 and left alone (§2.2); a live grant of another client of
 * the tenant is refused with unauthorized_client (§2.1: the client is told), and left alone too.
 */
/**
 * @param issuers the tenant's issuers (one per spelling): a token issued at any of them is the
 *   tenant's, and is judged against the one it names, whichever spelling the request used
 */
export async function revokeToken(deps: Pick<Deps, 'store' | 'keyRing' | 'clock'>, tenant: Tenant, issuers: readonly string[], requestIssuer: string, client: OidcClient, token: string | undefined, actor: Actor): Promise<void> {
  if (!token) throw invalidRequest('token is required')
  if (token.length > 8192) return
  const issuer = issuerNamedBy(token, issuers) ?? requestIssuer
  let family: RefreshFamily | null = null
  if (token.split('.').length === 3) {
    family = await grantOfAccessToken(deps, tenant, issuer, token).then(
      (grant) => grant.family,
      () => null,
    )
  } else if (token.length <= 128) {
    const found = await deps.store.sessions.findToken(refreshTokenKey(token))
    const live = found !== null && found.family.revokedAt === null && found.family.expiresAt > deps.clock.now()
    if (live && found.family.clientId && found.family.tenantId === tenant.id) family = found.family
  }
  // A service token of this client has no grant to end: saying 200 would tell the client it is
  // gone while introspection still calls it active (RFC 7009 §2.2.1 has this error for it).
  if (family === null && client.service && (await isOwnServiceToken(deps, issuer, client, token))) {
    throw new OAuthError('unsupported_token_type', 'a service token cannot be revoked: it ends at its expiry, or when its client is deleted')
  }
  if (family === null) return
  if (family.clientId !== client.id) throw new OAuthError('unauthorized_client', 'the token was not issued to this client')
  const revoked = auditEvent(deps, 'oidc.grant_revoked', actor, { tenantId: tenant.id, userId: family.userId, detail: { clientId: client.id, familyId: family.id } })
  await deps.store.sessions.revokeFamily(family.id, deps.clock.now(), 'revoked-by-client', revoked)
}

/** The tenant issuer a JWT names (unverified: only to pick the issuer it is then verified against). */
function issuerNamedBy(token: string, issuers: readonly string[]): string | null {
  if (token.split('.').length !== 3) return null
  try {
    const { iss } = decodeJwt(token)
    return typeof iss === 'string' && issuers.includes(iss) ? iss : null
  } catch {
    return null
  }
}

async function isOwnServiceToken(deps: Pick<Deps, 'keyRing' | 'clock'>, issuer: string, client: OidcClient, token: string): Promise<boolean> {
  const claims = await verifyIssued(deps, token, issuer, { typ: 'at+jwt', algorithms: ['ES256'] }).catch(() => null)
  return claims !== null && claims.client_id === client.id && claims.sub === client.id && claims.sid === undefined
}

/** An id_token_hint at end_session: one this issuer signed (expired ones too, as RP-initiated logout allows), with either ID-token algorithm. */
export async function verifyIdTokenHint(deps: Pick<Deps, 'keyRing' | 'clock'>, issuer: string, token: string): Promise<{ sub: string; aud: string; sid: string | null }> {
  const claims = await verifyIssued(deps, token, issuer, { acceptExpired: true, algorithms: ['ES256', 'RS256'] })
  if (typeof claims.sub !== 'string' || typeof claims.aud !== 'string') throw invalidToken()
  return { sub: claims.sub, aud: claims.aud, sid: typeof claims.sid === 'string' ? claims.sid : null }
}

