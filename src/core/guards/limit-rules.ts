// The abuse limits' rules (product spec §9), made from the configuration: what the dependency
// bundle holds, apart from the functions that apply them (limits.ts).
import type { Config } from '../../config'

export interface WindowRule {
  name: string
  kind: 'window'
  limit: number
  windowMs: number
}

export interface BackoffRule {
  name: string
  kind: 'backoff'
  threshold: number
  baseMs: number
  capMs: number
  /** A run of failures starts over this long after its first failure. */
  windowMs: number
  /** Whether a success ends the run. The account-wide rules keep counting through the
   *  owner's successes, so the attacker's budget per window stays fixed however often the
   *  owner logs in (the owner is exempt from them with a device cookie: device-cookies.ts). */
  resetOnSuccess: boolean
}

export type Rule = WindowRule | BackoffRule

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE

export function limitRules(config: Pick<Config, 'limits'>) {
  const l = config.limits
  const backoff = (name: string, threshold: number, baseMs: number, capMs: number, resetOnSuccess = true): BackoffRule =>
    ({ name, kind: 'backoff', threshold, baseMs, capMs, windowMs: DAY, resetOnSuccess })
  const window = (name: string, limit: number, windowMs: number): WindowRule => ({ name, kind: 'window', limit, windowMs })
  const loginCapMs = l.loginBackoffMaxSec * 1000
  const otpLockMs = l.otpLockoutSec * 1000
  return {
    // Clients without a device cookie for the account:
    loginAccountIp: backoff('login:account-ip', l.loginBackoffAfter, 1000, loginCapMs),
    loginAccount: backoff('login:account', l.loginAccountBackoffAfter, 1000, loginCapMs, false),
    loginIpFailures: window('login:ip-failures', l.loginIpFailuresPer10Min, 10 * MINUTE),
    // A browser holding a device cookie for the account has a budget of its own instead.
    loginDevice: backoff('login:device', l.loginBackoffAfter, 1000, loginCapMs),
    forgotIp: window('forgot:ip', l.forgotIpPerHour, 60 * MINUTE),
    changePasswordIp: window('change-password:ip', l.passwordIpPer10Min, 10 * MINUTE),
    setupPasswordIp: window('setup-password:ip', l.passwordIpPer10Min, 10 * MINUTE),
    signupIp: window('signup:ip', l.signupIpPerHour, 60 * MINUTE),
    verifyEmailIp: window('verify-email:ip', l.passwordIpPer10Min, 10 * MINUTE),
    // Each options request stores a challenge: without a budget, anyone could fill the table.
    passkeyOptionsIp: window('passkey-options:ip', l.passkeyOptionsIpPer10Min, 10 * MINUTE),
    // Each "Continue with {provider}" stores a flow, anonymously: the same budget as a ceremony's.
    federationStartIp: window('federation-start:ip', l.passkeyOptionsIpPer10Min, 10 * MINUTE),
    // Each device authorization stores a row and one more live user code a guesser could hit.
    deviceStartIp: window('device-start:ip', l.passkeyOptionsIpPer10Min, 10 * MINUTE),
    otpAccount: backoff('otp:account', l.otpFailuresBeforeLockout, otpLockMs, otpLockMs, false),
    otpDevice: backoff('otp:device', l.otpFailuresBeforeLockout, otpLockMs, otpLockMs),
    // Device user codes typed at /t/{tenant}/device, per client IP (or IPv6 /64), like OTPs. A
    // right code never ends the run: anyone can start a device authorization and type its code.
    deviceCodeIp: backoff('device-code:ip', l.otpFailuresBeforeLockout, otpLockMs, otpLockMs, false),
    // ... and per signed-in account, the same numbers: a guesser spreading over many addresses
    // gets one account's budget, not one per address. (Only the account's own sessions count
    // here: nobody else can spend it, so it locks no one else out.)
    deviceCodeUser: backoff('device-code:user', l.otpFailuresBeforeLockout, otpLockMs, otpLockMs, false),
  }
}

export type LimitRules = ReturnType<typeof limitRules>

/** Why a reservation was refused: the rules that block, and the longest wait. */
export type Blocked = { limits: string[]; waitMs: number }
