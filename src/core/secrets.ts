// Random values, their stored hashes, and constant-time comparison. Every secret authd
// hands out (API keys, refresh and setup tokens) is stored only as the hash made here.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** base64url of `bytes` CSPRNG bytes: 32 bytes = 256 bits. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url')
}

export function hmacSha256(key: string, value: string): string {
  return createHmac('sha256', key).update(value).digest('base64url')
}

/** Compares two strings in time independent of where they differ (hashing first evens lengths). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest()
  const db = createHash('sha256').update(b).digest()
  return timingSafeEqual(da, db)
}
