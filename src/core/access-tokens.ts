// Access tokens: compact JWS (ES256) signed synchronously with node:crypto. jose signs
// through async WebCrypto, which shares Bun's worker pool with password hashing; during a
// login flood that starved signing to a few tokens per second. A synchronous ECDSA
// signature costs tens of microseconds and never waits behind a hash.
import { sign } from 'node:crypto'
import type { ActiveSigningKey } from './signing-keys'
import type { User } from './types'

export interface AccessTokenSettings {
  issuer: string
  /** The tenant's audience (core/tenants.ts). */
  audience: string
  ttlSec: number
}

const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')

export function signAccessToken(key: ActiveSigningKey, settings: AccessTokenSettings, user: User, now: number): string {
  const iat = Math.floor(now / 1000)
  const header = b64url({ alg: 'ES256', typ: 'JWT', kid: key.kid })
  const payload = b64url({
    iss: settings.issuer,
    aud: settings.audience,
    sub: user.id,
    tid: user.tenantId,
    type: user.type,
    email: user.email,
    iat,
    exp: iat + settings.ttlSec,
    jti: Bun.randomUUIDv7(),
  })
  const signingInput = `${header}.${payload}`
  // JWS wants the raw r||s signature (IEEE P1363), not node's default DER encoding.
  const signature = sign('sha256', Buffer.from(signingInput), { key: key.privateKey, dsaEncoding: 'ieee-p1363' })
  return `${signingInput}.${signature.toString('base64url')}`
}
