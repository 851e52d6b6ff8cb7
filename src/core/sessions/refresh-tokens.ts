// The refresh token's format and the key it is stored under.
//
// A token is `<issued>.<secret>`: the time it was issued (milliseconds, 12 hex digits) and
// 256 random bits (base64url). It is stored only as its key, `<issued>.<sha256(token)>`, in a
// unique index. The time in front orders the keys as they are written, so every new key lands
// at the index's end, where the pages it needs are already in memory: a key of hash alone
// landed on a random leaf of an index of tens of millions of entries at each refresh, read
// from the disk and written back in full (0.75 of the empty database's rate at a million
// users: bench/README.md, Scale). The time is no secret (an access token carries its iat).
//
// The earlier format, `hash`, is the secret alone, stored under its hash. A session keeps the
// format of its first token, so a session an older authd started is rotated here exactly as
// the older version rotates it (same successor, same key): during a rolling upgrade both
// versions serve it. AUTHD_REFRESH_TOKEN_FORMAT=hash starts new sessions in it too, for as
// long as older instances still serve.
import type { RefreshTokenFormat } from '../../config'
import { hmacSha256, randomToken, sha256 } from '../secrets'

export type { RefreshTokenFormat }

const ISSUED_DIGITS = 12
const ORDERED = /^[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/

const issuedPrefix = (at: number) => Math.floor(at).toString(16).padStart(ISSUED_DIGITS, '0')

/** A new session's first refresh token. */
export function newRefreshToken(at: number, format: RefreshTokenFormat = 'ordered'): string {
  const secret = randomToken(32)
  return format === 'ordered' ? `${issuedPrefix(at)}.${secret}` : secret
}

/**
 * The token that follows `presented` once it is spent at `spentAt`, in the presented token's
 * format: derived with a server-side key, so only its key is stored and yet every
 * presentation within the grace period (and every loser of a race to spend it) yields the
 * same one.
 */
export function successorRefreshToken(successorKey: string, presented: string, spentAt: number): string {
  const secret = hmacSha256(successorKey, presented)
  return ORDERED.test(presented) ? `${issuedPrefix(spentAt)}.${secret}` : secret
}

/** What a token is stored and looked up under. */
export function refreshTokenKey(token: string): string {
  return ORDERED.test(token) ? `${token.slice(0, ISSUED_DIGITS)}.${sha256(token)}` : sha256(token)
}
