// Compact JWS (RFC 7515) signed synchronously with node:crypto, with either of the key ring's
// algorithms. Not jose: its WebCrypto signing shares Bun's worker pool with password hashing,
// and a login flood starved it to a few signatures per second (see access-tokens.ts).
import { sign } from 'node:crypto'
import type { ActiveSigningKey } from './key-ring'

const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** `header.payload.signature`, the header's alg and kid being the key's. */
export function signJws(key: ActiveSigningKey, typ: string, claims: Record<string, unknown>): string {
  const input = `${b64url({ alg: key.alg, kid: key.kid, typ })}.${b64url(claims)}`
  // ES256: the raw r||s signature (IEEE P1363) JWS wants, not node's DER. RS256: RSASSA-PKCS1-v1_5
  // with SHA-256, what node does by default with an RSA key.
  const signature = key.alg === 'ES256' ? sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }) : sign('sha256', Buffer.from(input), key.privateKey)
  return `${input}.${signature.toString('base64url')}`
}
