// Forgot-password and change-password. Forgot-password answers the same for registered and
// unknown addresses, after the same work: one OTP drawn and hashed, one mail composed, one
// write transaction (the request is logged either way), and the mail is delivered later by
// the outbox worker, never inline. Every OTP failure is the same 400.
import { tenantTitle } from '../tenants/tenants'
import { inAccountTurn } from '../guards/account-guesses'
import { auditEvent, maskEmail, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { invalidOtp, userDisabled } from '../errors'
import { ipSubject, judged, reserveGuess, settle, spendBudget, type Rule } from '../guards/limits'
import { issueDeviceCookie, trustedDevice } from '../guards/device-cookies'
import { newOutboxMessage, passwordChangedNotice } from '../mail/outbox'
import { passwordResetOtpMail } from '../mail/templates'
import { emailKey, generateOtp, OTP_MAX_ATTEMPTS, OTP_PATTERN, OTP_TTL_MS, otpHash } from './otp'
import { checkPasswordPolicy } from './password-policy'
import { safeEqual } from '../secrets'
import type { ResetHistory } from './store'
import type { PasswordResetOtp, Tenant } from '../types'
import { toPublicUser, type PublicUser } from './users'
import { normaliseEmail } from '../names'

export const FORGOT_PASSWORD_MESSAGE = 'If the e-mail is registered, a password-reset OTP has been sent'

const HOUR_MS = 3600_000

/** The per-address limit on reset mails (product spec §9): none within the interval after the
 *  last one, and fewer than perHour in the last hour. */
export function underAddressLimits(
  limits: Pick<Deps['config']['limits'], 'forgotAddressIntervalSec' | 'forgotAddressPerHour'>,
  lastHour: ResetHistory,
  now: number,
): boolean {
  const intervalOver = lastHour.lastIssuedAt === null || lastHour.lastIssuedAt <= now - limits.forgotAddressIntervalSec * 1000
  return intervalOver && lastHour.issued < limits.forgotAddressPerHour
}

type ResetDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'serverKeys' | 'mailQueued' | 'limitRules' | 'refusals' | 'events' | 'guessTurns'>

/** Returns the normalised address (the response's data). */
export async function requestPasswordReset(deps: ResetDeps, input: { tenant: Tenant; email: string }, actor: Actor): Promise<string> {
  const { tenant } = input
  const email = normaliseEmail(input.email)
  await spendBudget(deps, deps.limitRules.forgotIp, ipSubject(actor.ip), { type: 'password_reset.limited', actor, tenantId: tenant.id })
  const now = deps.clock.now()
  const user = await deps.store.users.findByEmail(tenant.id, email)
  const eligible = user !== null && user.disabledAt === null && user.type !== 'tenant'

  const code = generateOtp()
  const otp: PasswordResetOtp = {
    userId: user?.id ?? email,
    codeHash: otpHash(deps.serverKeys.hmac, user?.id ?? email, code),
    createdAt: now,
    expiresAt: now + OTP_TTL_MS,
    attempts: 0,
    spentAt: null,
  }
  const mail = newOutboxMessage({
    tenantId: tenant.id,
    kind: 'password-reset-otp',
    recipient: email,
    content: passwordResetOtpMail({ tenantName: tenantTitle(tenant), firstName: user?.firstName ?? '', code, validMinutes: OTP_TTL_MS / 60000, language: actor.language }),
    now,
    secretExpiresAt: otp.expiresAt,
  })
  // Over the per-address limits the answer is the same 200; the mail is simply not sent.
  await deps.store.passwordResets.request({
    tenantId: tenant.id,
    emailKey: emailKey(deps.serverKeys.hmac, tenant.id, email),
    at: now,
    historySince: now - HOUR_MS,
    allowed: (history) => underAddressLimits(deps.config.limits, history, now),
    audit: auditEvent(deps, 'password_reset.requested', actor, { tenantId: tenant.id, userId: eligible ? user.id : null, detail: { email: maskEmail(email) } }),
    otp: eligible ? otp : undefined,
    mail: eligible ? mail : undefined,
  })
  deps.mailQueued.notify()
  deps.events.notify({ kind: 'password_reset_requested' })
  return email
}

export async function changePassword(
  deps: ResetDeps & Pick<Deps, 'hasher'>,
  input: { tenant: Tenant; email: string; otp: string; newPassword: string; deviceCookie?: string },
  actor: Actor,
): Promise<{ user: PublicUser; deviceCookie: string }> {
  const { tenant } = input
  const email = normaliseEmail(input.email)
  await spendBudget(deps, deps.limitRules.changePasswordIp, ipSubject(actor.ip), { type: 'password.limited', actor, tenantId: tenant.id })
  // One guess at a time per account in this process: see guess-turns.ts.
  return inAccountTurn(deps, { tenantId: tenant.id, email, deviceCookie: input.deviceCookie }, () => judgeOtp(deps, { ...input, email }, actor))
}

async function judgeOtp(
  deps: ResetDeps & Pick<Deps, 'hasher'>,
  input: { tenant: Tenant; email: string; otp: string; newPassword: string; deviceCookie?: string },
  actor: Actor,
): Promise<{ user: PublicUser; deviceCookie: string }> {
  const { tenant, email } = input
  // Wrong codes are counted per address across OTPs: asking for a new code does not reset
  // the count (NIST). A browser with a device cookie for the account counts its own instead,
  // so a lock set by someone else does not keep the owner's browser from resetting.
  const device = trustedDevice(deps, tenant.id, email, input.deviceCookie)
  const rules = deps.limitRules
  const lock: [Rule, string] = device ? [rules.otpDevice, `${tenant.id}:${email}:${device}`] : [rules.otpAccount, `${tenant.id}:${email}`]
  const about = { tenantId: tenant.id, detail: { email: maskEmail(email) } }
  const now = deps.clock.now()
  const addressKey = emailKey(deps.serverKeys.hmac, tenant.id, email)
  // The same look-ups for every address: an unknown one reads the OTP of a key no row has.
  const user = await deps.store.users.findByEmail(tenant.id, email)
  const otpOwner = user?.id ?? addressKey
  const record = await deps.store.passwordResets.findOtp(otpOwner)
  // The try is counted before the code is compared, in one transaction whatever the address:
  // against the OTP's own tries (a burst of codes gets no more comparisons than 5 in a row)
  // and, only while a code could have matched (a reset was issued in the last 10 minutes,
  // with tries left, decided from the request log that registered and unknown addresses
  // alike have), toward the account's lock: wrong codes sent when no code exists cannot
  // lock the owner's reset.
  const guess = await reserveGuess(deps, [lock], { type: 'otp.limited', actor, ...about }, (hits, at, verdict) =>
    deps.store.passwordResets.reserveTry({ tenantId: tenant.id, emailKey: addressKey, otpOwner, now: at, ttlMs: OTP_TTL_MS, maxAttempts: OTP_MAX_ATTEMPTS, limits: hits, verdict }),
  )
  const presented = otpHash(deps.serverKeys.hmac, otpOwner, input.otp)
  if (!user || !record || !guess.admitted || !OTP_PATTERN.test(input.otp) || !safeEqual(presented, record.codeHash)) {
    await settle(deps, guess, 'failure', auditEvent(deps, 'otp.failed', actor, { ...about, userId: user?.id, detail: { ...about.detail, counted: guess.counted } }))
    throw invalidOtp()
  }
  if (user.disabledAt !== null) throw userDisabled()

  // A weak password does not spend the OTP: the user may try again with a better one (each
  // submission is one of the code's tries), and the account's lock takes the count back.
  const passwordHash = await judged(deps, guess, async () => deps.hasher.hash(await checkPasswordPolicy(input.newPassword, deps.config.passwordMinLength, user)))
  const notice = passwordChangedNotice(tenant, user, now, actor.language)
  const changed = await deps.store.passwordResets.complete({
    userId: user.id,
    tenantId: tenant.id,
    emailKey: addressKey,
    codeHash: record.codeHash,
    now,
    maxAttempts: OTP_MAX_ATTEMPTS,
    passwordHash,
    notice,
  })
  // Lost the race to a concurrent use of the same code: that one changed the password.
  if (!changed) throw invalidOtp()
  deps.mailQueued.notify()
  await settle(deps, guess, 'success', auditEvent(deps, 'password.changed', actor, { ...about, userId: user.id }))
  // The browser that proved the mailbox is the owner's: it becomes a trusted device.
  return { user: toPublicUser({ ...user, passwordHash }, tenant), deviceCookie: input.deviceCookie && device ? input.deviceCookie : issueDeviceCookie(deps, tenant.id, email) }
}
