// Random values, their stored hashes, and constant-time comparison. Every secret authd
// hands out (API keys, refresh and setup tokens) is stored only as the hash made here.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

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

/**
 * Encrypts a value for storage with AES-256-GCM under `key` (32 random bytes, base64url):
 * `v1.` + base64url(iv | tag | ciphertext). `context` (what the value is and whose) is bound
 * as associated data, so a sealed value copied to another row does not open there.
 */
export function seal(key: string, context: string, plaintext: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(key, 'base64url'), iv)
  cipher.setAAD(Buffer.from(context))
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`
}

/** The plaintext of seal(); throws if the value was altered or sealed for another context. */
export function unseal(key: string, context: string, sealed: string): string {
  if (!sealed.startsWith('v1.')) throw new Error('unknown sealed format')
  const raw = Buffer.from(sealed.slice(3), 'base64url')
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(key, 'base64url'), raw.subarray(0, 12))
  decipher.setAAD(Buffer.from(context))
  decipher.setAuthTag(raw.subarray(12, 28))
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
}
