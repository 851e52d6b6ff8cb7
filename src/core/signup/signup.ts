// Sign-up with e-mail verification (product spec §15), off by default per tenant.
//
// No enumeration: POST /signup answers the same 202, with the same body, after the same
// work, for a new address (a code is mailed), a registered one (its owner is told that someone
// tried) and one the tenant's domains refuse (no mail): the password is hashed, a code drawn,
// both mails composed and one write transaction run (the request logged, whatever it decided)
// in every case, and mail leaves later through the outbox, never inline.
//
// No pre-hijacking: a pending sign-up is not a user. It reserves nothing, so the CLI, the
// admin API or another sign-up can still create the address. A newer sign-up for an address
// replaces its pending one, whoever asked (product spec §28): the older code stops working,
// its mail is withdrawn if still unsent, and the newer code is mailed as the per-address
// limits allow (at the latest once the interval since the last mail is over), saying that it
// replaced an earlier one and that only it works. So someone who signs up with another's
// address cannot keep its owner out for longer than that interval: the owner's own next
// sign-up ends theirs. The account is created, with the password of the sign-up whose code
// was verified, only when that code is verified by someone who reads the mailbox; the mail
// of a replacing code tells them not to enter it unless the newest sign-up was theirs.
import { audit, auditEvent, CLI_ACTOR, maskEmail, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { issueDeviceCookie, trustedDevice } from '../guards/device-cookies'
import { invalidOtp, notFoundById, signupClosed } from '../errors'
import { ipSubject, spendBudget } from '../guards/limits'
import { newOutboxMessage } from '../mail/outbox'
import { signupAttemptMail, signupCodeMail } from '../mail/templates'
import { emailKey, generateOtp, OTP_MAX_ATTEMPTS, OTP_PATTERN, OTP_TTL_MS, otpHash } from '../accounts/otp'
import { checkPasswordPolicy } from '../accounts/password-policy'
import { safeEqual } from '../secrets'
import { startSession, type LoginResult } from '../sessions/sessions'
import { validateName, tenantTitle } from '../tenants/tenants'
import type { MailSlot } from './store'
import { parseSignupPolicy, formatSignupPolicy, signupAllows, type SignupPolicy } from '../tenants/signup-policy'
import type { ResetHistory } from '../accounts/store'
import type { PendingSignup, Tenant, User } from '../types'
import { normaliseEmail } from '../names'

export const SIGNUP_MESSAGE = 'If the address can be registered, a verification code has been sent'

/** Refuses (403) unless the tenant accepts sign-ups at all. */
function openPolicyOf(tenant: Tenant): SignupPolicy {
  const policy = parseSignupPolicy(tenant.signup)
  if (policy.kind === 'closed') throw signupClosed()
  return policy
}

/** `authd tenants update ID --signup open|closed|domains:…`: who may sign up from now on. */
export async function setTenantSignup(deps: Pick<Deps, 'store' | 'clock'>, tenantId: string, signup: string, actor: Actor = CLI_ACTOR): Promise<Tenant> {
  const value = formatSignupPolicy(parseSignupPolicy(signup))
  const tenant = await deps.store.tenants.setSignup(tenantId, value)
  if (!tenant) throw notFoundById('Tenant', tenantId)
  await audit(deps, 'tenant.updated', actor, { tenantId, detail: { signup: value } })
  return tenant
}

const HOUR_MS = 3600_000

/** When the next mail to an address may leave: at once, or when the interval since the last
 *  one is over; none once the hour's budget is spent (product spec §9, §15, §18). */
export function nextMailSlot(
  limits: Pick<Deps['config']['limits'], 'forgotAddressIntervalSec' | 'forgotAddressPerHour'>,
  lastHour: ResetHistory,
  now: number,
): MailSlot {
  if (lastHour.issued >= limits.forgotAddressPerHour) return null
  return { at: lastHour.lastIssuedAt === null ? now : Math.max(now, lastHour.lastIssuedAt + limits.forgotAddressIntervalSec * 1000) }
}

/** The code of a pending sign-up is bound to its tenant and address, as an OTP to its user. */
const codeOwner = (addressKey: string) => `signup:${addressKey}`

type SignupDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'serverKeys' | 'hasher' | 'mailQueued' | 'limitRules' | 'refusals' | 'events'>

/** Returns the normalised address (the response's data), whatever became of the request. */
export async function requestSignup(
  deps: SignupDeps,
  input: { tenant: Tenant; email: unknown; password: string; firstName: unknown; lastName: unknown },
  actor: Actor,
): Promise<string> {
  const { tenant } = input
  const policy = openPolicyOf(tenant)
  const email = normaliseEmail(input.email)
  const firstName = validateName('firstName', input.firstName)
  const lastName = validateName('lastName', input.lastName)
  // The policy first: a weak password is a 400 for every address alike.
  const password = await checkPasswordPolicy(input.password, deps.config.passwordMinLength, { email, firstName, lastName })
  // Refused for load before any budget is spent (503, the same for every address).
  deps.hasher.assertCapacity()
  await spendBudget(deps, deps.limitRules.signupIp, ipSubject(actor.ip), { type: 'signup.limited', actor, tenantId: tenant.id })

  // The same work for every address, whatever the outcome: hash, look-up, code, both mails.
  const passwordHash = await deps.hasher.hash(password)
  const now = deps.clock.now()
  const user = await deps.store.users.findByEmail(tenant.id, email)
  const addressKey = emailKey(deps.serverKeys.hmac, tenant.id, email)
  const code = generateOtp()
  const pending: PendingSignup = {
    tenantId: tenant.id,
    emailKey: addressKey,
    firstName,
    lastName,
    passwordHash,
    codeHash: otpHash(deps.serverKeys.hmac, codeOwner(addressKey), code),
    createdAt: now,
    expiresAt: now + OTP_TTL_MS,
    attempts: 0,
    spentAt: null,
  }
  const codeMail = (replacing: boolean) =>
    newOutboxMessage({
      tenantId: tenant.id,
      kind: 'signup-code',
      recipient: email,
      content: signupCodeMail({ tenantName: tenantTitle(tenant), firstName, code, validMinutes: OTP_TTL_MS / 60000, at: now, replacing, language: actor.language }),
      now,
      secretExpiresAt: pending.expiresAt,
    })
  const attemptMail = newOutboxMessage({
    tenantId: tenant.id,
    kind: 'signup-attempt',
    recipient: email,
    content: signupAttemptMail({ tenantName: tenantTitle(tenant), firstName: user?.firstName ?? '', at: now, language: actor.language }),
    now,
  })
  // Both forms of the code's mail are composed for every address: the store picks one,
  // seeing in its transaction whether a live pending sign-up is being replaced.
  const [freshMail, replacingMail] = [codeMail(false), codeMail(true)]
  const outcome = user ? 'registered' : signupAllows(policy, email) ? 'new' : 'refused'
  // Its mail leaves as the per-address limits (those of forgot-password) allow: now, or once
  // the interval since the last one is over; past the hourly budget no code is live at all.
  // The answer is the same 202 in every case.
  await deps.store.signups.request({
    tenantId: tenant.id,
    emailKey: addressKey,
    at: now,
    historySince: now - HOUR_MS,
    slot: (history) => nextMailSlot(deps.config.limits, history, now),
    audit: auditEvent(deps, 'signup.requested', actor, { tenantId: tenant.id, userId: user?.id, detail: { email: maskEmail(email), outcome } }),
    pending: outcome === 'new' ? pending : undefined,
    mail: outcome === 'new' ? freshMail : outcome === 'registered' && user!.disabledAt === null ? attemptMail : undefined,
    replacingMail: outcome === 'new' ? replacingMail : undefined,
  })
  deps.mailQueued.notify()
  deps.events.notify({ kind: 'signup', outcome: 'requested' })
  return email
}

/** Verifies a sign-up's code: creates the account and logs it in, as a login would. */
export async function verifyEmail(
  deps: SignupDeps & Pick<Deps, 'keyRing'>,
  input: { tenant: Tenant; email: unknown; otp: string; deviceCookie?: string },
  actor: Actor,
): Promise<LoginResult> {
  const { tenant } = input
  const policy = openPolicyOf(tenant)
  const email = normaliseEmail(input.email)
  await spendBudget(deps, deps.limitRules.verifyEmailIp, ipSubject(actor.ip), { type: 'signup.limited', actor, tenantId: tenant.id })
  const now = deps.clock.now()
  const addressKey = emailKey(deps.serverKeys.hmac, tenant.id, email)
  const pending = await deps.store.signups.find(tenant.id, addressKey)
  // The try is counted before the code is compared: a burst of codes gets no more
  // comparisons than five in a row would.
  const admitted = await deps.store.signups.reserveTry({ tenantId: tenant.id, emailKey: addressKey, now, maxAttempts: OTP_MAX_ATTEMPTS })
  const presented = otpHash(deps.serverKeys.hmac, codeOwner(addressKey), input.otp)
  const about = { tenantId: tenant.id, detail: { email: maskEmail(email) } }
  if (!pending || !admitted || !OTP_PATTERN.test(input.otp) || !safeEqual(presented, pending.codeHash)) {
    await deps.store.audit.record(auditEvent(deps, 'signup.failed', actor, about))
    throw invalidOtp()
  }
  // The tenant's domains may have changed since the code was sent.
  if (!signupAllows(policy, email)) throw signupClosed()

  const user: User = {
    id: Bun.randomUUIDv7(),
    tenantId: tenant.id,
    email,
    firstName: pending.firstName,
    lastName: pending.lastName,
    type: 'user',
    passwordHash: pending.passwordHash,
    createdAt: now,
    updatedAt: now,
    disabledAt: null,
    sessionEpoch: 0,
    // The code was read in the mailbox.
    emailVerifiedAt: now,
  }
  const created = await deps.store.signups.complete({
    user,
    emailKey: addressKey,
    codeHash: pending.codeHash,
    now,
    maxAttempts: OTP_MAX_ATTEMPTS,
    audit: auditEvent(deps, 'signup.completed', actor, { ...about, userId: user.id }),
  })
  // Lost the race to a concurrent verification of the same code, or the address became a
  // user meanwhile (an admin created it): this code creates nothing.
  if (created !== 'created') throw invalidOtp()
  deps.events.notify({ kind: 'signup', outcome: 'completed' })
  const session = await startSession(deps, user, tenant, false, actor)
  // The browser that proved the mailbox is the owner's: it becomes a trusted device.
  const device = trustedDevice(deps, tenant.id, email, input.deviceCookie)
  return { ...session, deviceCookie: device ? input.deviceCookie! : issueDeviceCookie(deps, tenant.id, email) }
}
