// Token introspection (RFC 7662, product spec §26): a confidential client of the tenant asks
// whether a token is live and what it says. Known are the tenant's access tokens (OpenID ones,
// whose grant must be live; service ones, whose client must still exist; authd's own API tokens,
// whose session must be live) and OpenID refresh tokens. A client sees a token issued to itself
// (client_id) or naming one of its audiences; for any other token, and for anything expired,
// revoked, malformed or another tenant's, the answer is only {active: false}: never an error,
// and never a hint of which check failed.
import { decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose'
import type { Deps } from '../deps'
import { authenticateBearer } from '../sessions/signed-in-user'
import { refreshTokenKey } from '../sessions/refresh-tokens'
import type { Tenant } from '../types'
import { grantOfAccessToken, verifyIssued } from './access'
import { invalidClient, invalidRequest } from './errors'
import { isPublicClient, type OidcClient } from './types'

type IntrospectDeps = Pick<Deps, 'store' | 'clock' | 'keyRing' | 'config'>
export type Introspection = { active: false } | ({ active: true } & Record<string, unknown>)

const INACTIVE = { active: false } as const
/** The claims an answer repeats (RFC 7662 §2.2); nothing else of a token is told. */
const TOLD = ['scope', 'client_id', 'sub', 'aud', 'iss', 'exp', 'iat', 'jti'] as const

interface Found {
  claims: Record<string, unknown>
  tokenType: 'Bearer' | 'refresh_token'
}

/**
 * @param issuers the tenant's issuers (one per spelling: its id, its slug): a token of any of them is the tenant's
 * @param issuer the issuer as this request spelled it (a refresh token names none: it gets this one)
 */
export async function introspect(deps: IntrospectDeps, tenant: Tenant, issuers: string[], issuer: string, client: OidcClient, token: string | undefined): Promise<Introspection> {
  // (a public client proves nobody: it may not read what tokens say)
  if (isPublicClient(client)) throw invalidClient()
  if (!token) throw invalidRequest('token is required')
  const found = token.length > 8192 ? null : await (token.split('.').length === 3 ? accessToken(deps, tenant, issuers, token, client) : refreshToken(deps, tenant, issuer, token)).catch(() => null)
  if (!found || !visibleTo(client, found.claims)) return INACTIVE
  const told = Object.fromEntries(TOLD.filter((name) => found.claims[name] !== undefined).map((name) => [name, found.claims[name]]))
  return { active: true, ...told, token_type: found.tokenType }
}

/** Issued to this client, or naming one of its audiences (RFC 7662 §4: a resource server sees its own tokens). */
function visibleTo(client: OidcClient, claims: Record<string, unknown>): boolean {
  if (claims.client_id === client.id) return true
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud]
  return aud.some((a) => typeof a === 'string' && client.audiences.includes(a))
}

/** @param asking the client that asks: a service token of its own needs no second read of it */
async function accessToken(deps: IntrospectDeps, tenant: Tenant, issuers: string[], token: string, asking: OidcClient): Promise<Found | null> {
  const header = decodeProtectedHeader(token)
  if (header.typ === 'JWT') {
    // authd's own API token (a sign-in at /api/v1): the API's rules, and the tenant's.
    const caller = await authenticateBearer(deps, `Bearer ${token}`)
    return caller.tenant.id === tenant.id ? { claims: decodeJwt(token), tokenType: 'Bearer' } : null
  }
  const iss = decodeJwt(token).iss
  if (header.typ !== 'at+jwt' || typeof iss !== 'string' || !issuers.includes(iss)) return null
  const claims: JWTPayload = await verifyIssued(deps, token, iss, { typ: 'at+jwt', algorithms: ['ES256'] })
  if (typeof claims.sid === 'string') {
    // An OpenID access token counts while its grant is live (userinfo's rule).
    await grantOfAccessToken(deps, tenant, iss, token)
    return { claims, tokenType: 'Bearer' }
  }
  // A service token counts while its client exists (deleting the client ends its tokens).
  const owner = claims.client_id === asking.id ? asking : typeof claims.client_id === 'string' && claims.client_id.length <= 100 ? await deps.store.oidc.getClient(claims.client_id) : null
  if (!owner || owner.tenantId !== tenant.id || !owner.service || claims.sub !== owner.id) return null
  return { claims, tokenType: 'Bearer' }
}

async function refreshToken(deps: IntrospectDeps, tenant: Tenant, issuer: string, token: string): Promise<Found | null> {
  if (token.length > 128) return null
  const found = await deps.store.sessions.findToken(refreshTokenKey(token))
  const now = deps.clock.now()
  // (only an OpenID grant's: a page session's token is no client's to ask about)
  if (!found || !found.family.clientId || found.family.tenantId !== tenant.id || found.tenant.disabledAt !== null || found.user.disabledAt !== null) return null
  if (found.token.spentAt !== null || found.token.expiresAt <= now || found.family.revokedAt !== null || found.family.expiresAt <= now) return null
  const claims = {
    iss: issuer,
    sub: found.family.userId,
    client_id: found.family.clientId,
    scope: found.family.scope ?? 'openid',
    iat: Math.floor(found.token.createdAt / 1000),
    exp: Math.floor(Math.min(found.token.expiresAt, found.family.expiresAt) / 1000),
  }
  return { claims, tokenType: 'refresh_token' }
}
