// TOTP (RFC 6238 over RFC 4226 HOTP): SHA-1, 6 digits, 30-second steps, as every authenticator
// app reads from an otpauth:// URL. Twenty-odd lines over node:crypto, checked against the
// RFC's own test vectors (test/unit/totp.test.ts), rather than a dependency.
import { createHmac, randomBytes } from 'node:crypto'
import { safeEqual } from '../secrets'

export const TOTP_STEP_SEC = 30
export const TOTP_DIGITS = 6
/** Steps of clock drift accepted either side of now (RFC 6238 §5.2 recommends at most one). */
export const TOTP_DRIFT_STEPS = 1

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** RFC 4648 base32 without padding: the form otpauth:// URLs and authenticator apps use. */
export function base32Encode(bytes: Uint8Array): string {
  let bits = 0
  let value = 0
  let out = ''
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31]
  return out
}

export function base32Decode(text: string): Buffer {
  const bytes: number[] = []
  let bits = 0
  let value = 0
  for (const char of text.replace(/=+$/, '').toUpperCase()) {
    const index = BASE32.indexOf(char)
    if (index < 0) throw new Error('not base32')
    value = (value << 5) | index
    bits += 5
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 255)
      bits -= 8
    }
  }
  return Buffer.from(bytes)
}

/** A new secret: 160 bits, the HMAC-SHA-1 key length RFC 4226 recommends, in base32. */
export const newTotpSecret = (): string => base32Encode(randomBytes(20))

/** RFC 4226 §5.3: HMAC-SHA-1 of the counter, dynamic truncation, the low `digits` digits. */
export function hotp(key: Buffer, counter: number, digits = TOTP_DIGITS): string {
  const message = Buffer.alloc(8)
  message.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac('sha1', key).update(message).digest()
  const offset = mac[mac.length - 1]! & 0x0f
  const binary = mac.readUInt32BE(offset) & 0x7fffffff
  return String(binary % 10 ** digits).padStart(digits, '0')
}

export const totpStep = (nowMs: number) => Math.floor(nowMs / 1000 / TOTP_STEP_SEC)

export const totpCode = (secret: string, step: number, digits = TOTP_DIGITS) => hotp(base32Decode(secret), step, digits)

/** A code as typed, in the digit groups authenticator apps show ("123 456"): its 6 digits, or null. */
export function typedTotpCode(typed: string): string | null {
  const digits = typed.replace(/\s/g, '')
  return /^\d{6}$/.test(digits) ? digits : null
}

/**
 * The step whose code `code` is, within ±TOTP_DRIFT_STEPS of now and after `lastUsedStep`
 * (a code is accepted once: neither it nor an older one works again), or null. Every
 * candidate is compared, in constant time, so the answer's timing says nothing of which.
 */
export function matchTotp(secret: string, code: string, nowMs: number, lastUsedStep: number | null): number | null {
  if (!/^\d{6}$/.test(code)) return null
  const now = totpStep(nowMs)
  let matched: number | null = null
  for (let step = now - TOTP_DRIFT_STEPS; step <= now + TOTP_DRIFT_STEPS; step++) {
    const equal = safeEqual(totpCode(secret, step), code)
    if (equal && matched === null && (lastUsedStep === null || step > lastUsedStep)) matched = step
  }
  return matched
}

/** The URL an authenticator app takes (as a QR code or pasted): Key URI Format. */
export function otpauthUrl(input: { issuer: string; account: string; secret: string }): string {
  const label = `${encodeURIComponent(input.issuer)}:${encodeURIComponent(input.account)}`
  const params = new URLSearchParams({ secret: input.secret, issuer: input.issuer, algorithm: 'SHA1', digits: String(TOTP_DIGITS), period: String(TOTP_STEP_SEC) })
  return `otpauth://totp/${label}?${params.toString().replace(/\+/g, '%20')}`
}
