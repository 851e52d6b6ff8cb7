// The abuse limits of product spec §9: every count and duration configurable.
import { int, parseDuration, type Read } from './parse'

/** The abuse limits of product spec §9 (all counts and durations configurable). */
export interface LimitSettings {
  /** Per (account, IP): back-off after this many consecutive failed logins. */
  loginBackoffAfter: number
  /** Per account across IPs (NIST's cap of 100). */
  loginAccountBackoffAfter: number
  /** The back-off starts at 1 s and doubles up to this. */
  loginBackoffMaxSec: number
  /** Per client IP: failed logins allowed per 10 minutes. */
  loginIpFailuresPer10Min: number
  /** Per address: one reset mail per this many seconds, and at most `forgotAddressPerHour`. */
  forgotAddressIntervalSec: number
  forgotAddressPerHour: number
  /** Per client IP: forgot-password requests per hour. */
  forgotIpPerHour: number
  /** Per client IP: sign-up requests per hour. */
  signupIpPerHour: number
  /** Per client IP: change-password, setup-password and verify-email requests per 10 minutes. */
  passwordIpPer10Min: number
  /** Per client IP: passkey sign-in options (each stores a challenge) per 10 minutes. */
  passkeyOptionsIpPer10Min: number
  /** Per account: consecutive wrong OTPs (across OTPs) before change-password is refused ... */
  otpFailuresBeforeLockout: number
  /** ... for this long. */
  otpLockoutSec: number
}

export function readLimitSettings(read: Read): LimitSettings {
  return {
    loginBackoffAfter: read('AUTHD_LOGIN_BACKOFF_AFTER', 5, int(1, 1000)),
    loginAccountBackoffAfter: read('AUTHD_LOGIN_ACCOUNT_BACKOFF_AFTER', 100, int(1, 100000)),
    loginBackoffMaxSec: read('AUTHD_LOGIN_BACKOFF_MAX', 15 * 60, parseDuration),
    loginIpFailuresPer10Min: read('AUTHD_LOGIN_IP_FAILURES', 100, int(1, 1000000)),
    forgotAddressIntervalSec: read('AUTHD_FORGOT_ADDRESS_INTERVAL', 60, parseDuration),
    forgotAddressPerHour: read('AUTHD_FORGOT_ADDRESS_PER_HOUR', 5, int(1, 1000)),
    forgotIpPerHour: read('AUTHD_FORGOT_IP_PER_HOUR', 30, int(1, 1000000)),
    signupIpPerHour: read('AUTHD_SIGNUP_IP_PER_HOUR', 20, int(1, 1000000)),
    passwordIpPer10Min: read('AUTHD_PASSWORD_IP_PER_10MIN', 30, int(1, 1000000)),
    passkeyOptionsIpPer10Min: read('AUTHD_PASSKEY_OPTIONS_IP_PER_10MIN', 300, int(1, 1000000)),
    otpFailuresBeforeLockout: read('AUTHD_OTP_FAILURES_BEFORE_LOCKOUT', 20, int(1, 1000)),
    otpLockoutSec: read('AUTHD_OTP_LOCKOUT', 15 * 60, parseDuration),
  }
}
