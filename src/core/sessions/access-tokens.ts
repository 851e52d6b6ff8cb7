// Access tokens: compact JWS (ES256) signed synchronously with node:crypto. jose signs
// through async WebCrypto, which shares Bun's worker pool with password hashing; during a
// login flood that starved signing to a few tokens per second. A synchronous ECDSA
// signature costs tens of microseconds and never waits behind a hash.
import { sign, verify } from 'node:crypto'
import { unauthorized } from '../errors'
import type { ActiveSigningKey, KeyRing } from './key-ring'
import type { User } from '../types'

export interface AccessTokenSettings {
  issuer: string
  /** The tenant's audience (core/tenants.ts). */
  audience: string
  ttlSec: number
}

const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')

/**
 * @param sessionId the session (refresh family) the token was issued to: its `sid` claim.
 * @param amr how the user proved who they are (RFC 8176): `['pwd']`, or `['pwd', 'otp']` with a second factor.
 * @param groups the names of the user's groups, sorted, read for this token (product spec §23):
 *   the `groups` claim, left out for a user in none.
 */
export function signAccessToken(key: ActiveSigningKey, settings: AccessTokenSettings, user: User, sessionId: string, now: number, amr: string[] = ['pwd'], groups: string[] = []): string {
  const iat = Math.floor(now / 1000)
  const header = b64url({ alg: 'ES256', typ: 'JWT', kid: key.kid })
  const payload = b64url({
    iss: settings.issuer,
    aud: settings.audience,
    sub: user.id,
    tid: user.tenantId,
    type: user.type,
    email: user.email,
    sid: sessionId,
    amr,
    ...(groups.length > 0 && { groups }),
    iat,
    exp: iat + settings.ttlSec,
    jti: Bun.randomUUIDv7(),
  })
  const signingInput = `${header}.${payload}`
  // JWS wants the raw r||s signature (IEEE P1363), not node's default DER encoding.
  const signature = sign('sha256', Buffer.from(signingInput), { key: key.privateKey, dsaEncoding: 'ieee-p1363' })
  return `${signingInput}.${signature.toString('base64url')}`
}

export interface AccessTokenClaims {
  iss: string
  aud: string
  sub: string
  tid: string
  type: string
  email: string
  sid: string
  amr?: string[]
  /** The user's groups when the token was issued (absent: none). */
  groups?: string[]
  iat: number
  exp: number
  jti: string
}

const decodeJson = (part: string | undefined): Record<string, unknown> | null => {
  try {
    const value = JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8'))
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : null
  } catch {
    return null
  }
}

/**
 * Verifies an access token the way authd's own endpoints accept one (RFC 8725): ES256 only,
 * whatever the header says; the key named by `kid` must be one authd publishes (not revoked,
 * not long retired); no key-location headers (jku, x5u, jwk) and no `crit`; issuer, audience
 * (the token's tenant's, from `audienceOf`) and expiry checked. Any failure is a 401 that
 * says nothing about which check failed.
 */
export async function verifyAccessToken(
  keyRing: KeyRing,
  token: string,
  expected: { issuer: string; now: number; audienceOf: (tenantId: string, claims: AccessTokenClaims) => Promise<string | null> },
): Promise<AccessTokenClaims> {
  const parts = token.length <= 4096 ? token.split('.') : []
  if (parts.length !== 3) throw unauthorized()
  const header = decodeJson(parts[0])
  if (!header || header.alg !== 'ES256' || typeof header.kid !== 'string' || 'jku' in header || 'x5u' in header || 'jwk' in header || 'crit' in header) throw unauthorized()
  const key = await keyRing.publicKey(header.kid)
  if (!key) throw unauthorized()
  const signature = Buffer.from(parts[2]!, 'base64url')
  if (!verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), { key, dsaEncoding: 'ieee-p1363' }, signature)) throw unauthorized()
  const claims = decodeJson(parts[1]) as Partial<AccessTokenClaims> | null
  const nowSec = Math.floor(expected.now / 1000)
  if (!claims || claims.iss !== expected.issuer || typeof claims.exp !== 'number' || claims.exp <= nowSec || typeof claims.tid !== 'string' || typeof claims.sub !== 'string' || typeof claims.sid !== 'string') {
    throw unauthorized()
  }
  if (claims.aud !== (await expected.audienceOf(claims.tid, claims as AccessTokenClaims))) throw unauthorized()
  return claims as AccessTokenClaims
}
