// Password-reset one-time passwords: 6 decimal digits, valid 10 minutes, single use, spent
// after 5 wrong tries. Stored only as an HMAC under a server key (a 6-digit code is too
// small a space for a plain hash: a stolen database would give every live code away).
import { randomInt } from 'node:crypto'
import { hmacSha256 } from '../secrets'

export const OTP_TTL_MS = 10 * 60 * 1000
export const OTP_MAX_ATTEMPTS = 5
export const OTP_PATTERN = /^\d{6}$/

/** crypto.randomInt draws by rejection sampling: uniform, with no modulo bias. */
export const generateOtp = (): string => String(randomInt(0, 1_000_000)).padStart(6, '0')

/** Bound to the user, so a code can only ever match that user's OTP. */
export const otpHash = (key: string, userId: string, code: string): string => hmacSha256(key, `otp:${userId}:${code}`)

/** Identifies an address in the request log without storing it. */
export const emailKey = (key: string, tenantId: string, email: string): string => hmacSha256(key, `email:${tenantId}:${email}`)
