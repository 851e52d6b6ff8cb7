// The refresh token's format and the key it is stored under.
//
// A token is `<issued>.<secret>`: the time it was issued (milliseconds, 12 hex digits) and
// 256 random bits (base64url). It is stored only as its key, `<issued>.<sha256(token)>`, in a
// unique index. The time in front orders the keys as they are written, so every new key lands
// at the index's end, where the pages it needs are already in memory: a key of hash alone
// landed on a random leaf of an index of tens of millions of entries at each refresh, read
// from the disk and written back in full (0.75 of the empty database's rate at a million
// users: bench/README.md, Scale). The time is no secret (an access token carries its iat).
// Tokens issued before this format (43 characters, no dot) are stored under their hash alone
// and are found that way until they expire.
import { hmacSha256, randomToken, sha256 } from './secrets'

const ISSUED_DIGITS = 12
const CURRENT_FORMAT = /^[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/

const issuedPrefix = (at: number) => Math.floor(at).toString(16).padStart(ISSUED_DIGITS, '0')

/** A new session's first refresh token. */
export function newRefreshToken(at: number): string {
  return `${issuedPrefix(at)}.${randomToken(32)}`
}

/**
 * The token that follows `presented` once it is spent at `spentAt`: derived with a server-side
 * key, so only its key is stored and yet every presentation within the grace period (and every
 * loser of a race to spend it) yields the same one.
 */
export function successorRefreshToken(successorKey: string, presented: string, spentAt: number): string {
  return `${issuedPrefix(spentAt)}.${hmacSha256(successorKey, presented)}`
}

/** What a token is stored and looked up under. */
export function refreshTokenKey(token: string): string {
  return CURRENT_FORMAT.test(token) ? `${token.slice(0, ISSUED_DIGITS)}.${sha256(token)}` : sha256(token)
}
