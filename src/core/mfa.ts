// Two-factor authentication with TOTP (product spec §17), done so that attackers cannot
// shortcut it:
//   - the second step exists only after the right password (a wrong password is answered as
//     before, with the same work, enrolled or not);
//   - a login challenge is single use, bound to its user and tenant, lives 5 minutes and
//     allows 5 wrong codes; wrong codes also count toward the account's login back-off (§9);
//   - a TOTP code is accepted once (its step is recorded; neither it nor an older one works
//     again), within ±1 step of drift;
//   - recovery codes are single use and stored only as keyed hashes; the TOTP secret is sealed
//     (AES-256-GCM under a server key, bound to the user);
//   - enrolment, removal and the use of a recovery code are audit events and mailed notices.
import { randomBytes } from 'node:crypto'
import { audit, auditEvent, CLI_ACTOR, maskEmail, type Actor } from './audit'
import type { Deps } from './deps'
import { reserveAccountGuess } from './account-guesses'
import { issueDeviceCookie } from './device-cookies'
import { badRequest, conflict, invalidCode, userDisabled } from './errors'
import { judged, sessionLimitUpdates, settle, settleGuess } from './limits'
import { newOutboxMessage } from './mail/outbox'
import { mfaNoticeMail, type MfaNotice } from './mail/templates'
import { base32Encode, matchTotp, newTotpSecret, otpauthUrl, typedTotpCode } from './totp'
import { hmacSha256, randomToken, seal, sha256, unseal } from './secrets'
import type { Caller } from './signed-in-user'
import { requireRecentAuth } from './step-up'
import type { SessionStartRecord } from './store'
import type { MfaChallenge, OutboxMessage, RecoveryCode, Tenant, TotpFactor, User } from './types'
import { getUser } from './users'

export const MFA_CHALLENGE_TTL_MS = 5 * 60_000
export const MFA_CHALLENGE_MAX_ATTEMPTS = 5
export const RECOVERY_CODE_COUNT = 10
export const MFA_METHODS = ['totp', 'recovery'] as const

/** What login answers an enrolled user who gave the right password. */
export interface MfaChallengeAnswer {
  mfaRequired: true
  challengeToken: string
  methods: typeof MFA_METHODS
}

type MfaDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'serverKeys' | 'mailQueued'>

const secretContext = (userId: string) => `totp:${userId}`
const sealSecret = (deps: Pick<Deps, 'serverKeys'>, userId: string, secret: string) => seal(deps.serverKeys.sealing, secretContext(userId), secret)
const openSecret = (deps: Pick<Deps, 'serverKeys'>, userId: string, sealed: string) => unseal(deps.serverKeys.sealing, secretContext(userId), sealed)

/** A recovery code as typed: case, spaces and dashes do not matter. */
const normaliseRecoveryCode = (code: string) => code.toLowerCase().replace(/[\s-]/g, '')
const recoveryCodeHash = (deps: Pick<Deps, 'serverKeys'>, userId: string, code: string) => hmacSha256(deps.serverKeys.hmac, `recovery:${userId}:${normaliseRecoveryCode(code)}`)
/** 50 random bits in base32, shown as xxxxx-xxxxx. */
const newRecoveryCode = () => {
  const raw = base32Encode(randomBytes(7)).slice(0, 10).toLowerCase()
  return `${raw.slice(0, 5)}-${raw.slice(5)}`
}

function notice(deps: Pick<Deps, 'clock'>, user: User, tenant: Tenant, kind: MfaNotice, recoveryCodesLeft?: number): OutboxMessage {
  const now = deps.clock.now()
  const content = mfaNoticeMail({ tenantName: tenant.name, firstName: user.firstName, notice: kind, at: now, recoveryCodesLeft })
  const mailKind = kind === 'enrolled' ? 'mfa-enrolled' : kind === 'recovery-used' ? 'mfa-recovery-used' : 'mfa-disabled'
  return newOutboxMessage({ tenantId: tenant.id, kind: mailKind, recipient: user.email, content, now })
}

/** Whether the user must pass a second step at login. */
export async function hasConfirmedTotp(deps: Pick<Deps, 'store'>, userId: string): Promise<boolean> {
  return (await deps.store.mfa.findTotp(userId))?.confirmedAt != null
}

/** POST /mfa/totp: a new secret, shown once; the factor counts only once a code confirms it.
 *  Needs a recent proof of the user (step-up): whoever holds only a stolen token cannot add a
 *  factor of their own. The confirmation needs the secret, which only this answer showed. */
export async function startTotpEnrolment(deps: MfaDeps, caller: Caller, actor: Actor): Promise<{ secret: string; otpauthUrl: string }> {
  requireRecentAuth(deps, caller)
  const { user, tenant } = caller
  const secret = newTotpSecret()
  const now = deps.clock.now()
  const started = await deps.store.mfa.beginTotp({ userId: user.id, sealedSecret: sealSecret(deps, user.id, secret), createdAt: now, confirmedAt: null, lastUsedStep: null })
  if (!started) throw conflict('Two-factor authentication is already on: turn it off first')
  await audit(deps, 'mfa.enrolment_started', actor, { tenantId: tenant.id, userId: user.id })
  return { secret, otpauthUrl: otpauthUrl({ issuer: tenant.name, account: user.email, secret }) }
}

/** POST /mfa/totp/confirm: the first code turns the factor on and gives the recovery codes,
 *  once, and ends the user's other sessions: those opened with the password alone must not
 *  keep an account its owner has just protected. */
export async function confirmTotpEnrolment(deps: VerifyDeps, caller: Caller, code: string, actor: Actor, deviceCookie?: string): Promise<{ recoveryCodes: string[] }> {
  const { user, tenant } = caller
  return deps.guessTurns.inTurn(`${tenant.id}:${user.email}`, async () => {
    const factor = await deps.store.mfa.findTotp(user.id)
    if (!factor || factor.confirmedAt !== null) throw badRequest('No two-factor enrolment in progress: start one with POST /mfa/totp')
    // A guess like any other: whoever holds a stolen token and guesses the code of an
    // enrolment its owner started would be handed the recovery codes.
    const about = { tenantId: tenant.id, userId: user.id, detail: { email: maskEmail(user.email) } }
    const guess = await reserveAccountGuess(deps, { tenantId: tenant.id, email: user.email, actor, deviceCookie }, { perIpFailures: false, detail: about.detail })
    const now = deps.clock.now()
    const typed = typedTotpCode(code)
    const step = typed === null ? null : matchTotp(openSecret(deps, user.id, factor.sealedSecret), typed, now, null)
    if (step === null) {
      await settle(deps, guess, 'failure', auditEvent(deps, 'mfa.failed', actor, { ...about, detail: { ...about.detail, stage: 'enrolment' } }))
      throw invalidCode()
    }
    await settle(deps, guess, 'success')
    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
    const stored: RecoveryCode[] = recoveryCodes.map((c) => ({ id: Bun.randomUUIDv7(), userId: user.id, codeHash: recoveryCodeHash(deps, user.id, c), usedAt: null }))
    const confirmed = await deps.store.mfa.confirmTotp({
      userId: user.id,
      step,
      now,
      keepSessionId: caller.sessionId,
      recoveryCodes: stored,
      mail: notice(deps, user, tenant, 'enrolled'),
      audit: auditEvent(deps, 'mfa.enrolled', actor, { tenantId: tenant.id, userId: user.id }),
    })
    if (!confirmed) throw conflict('Two-factor authentication is already on')
    deps.mailQueued.notify()
    return { recoveryCodes }
  })
}

/** A code that matches the user's factor, not yet spent. */
type MatchedCode = { kind: 'totp'; step: number } | { kind: 'recovery'; codeHash: string }

/** Whether `code` is a current TOTP code (after the last one used) or an unused recovery code of the user's factor. Reads only. */
async function matchSecondFactor(deps: MfaDeps, user: User, factor: TotpFactor | null, code: unknown): Promise<MatchedCode | null> {
  if (typeof code !== 'string' || code.length > 64) return null
  if (!factor || factor.confirmedAt === null) return null
  const typed = typedTotpCode(code)
  if (typed !== null) {
    const step = matchTotp(openSecret(deps, user.id, factor.sealedSecret), typed, deps.clock.now(), factor.lastUsedStep)
    return step === null ? null : { kind: 'totp', step }
  }
  const codeHash = recoveryCodeHash(deps, user.id, code)
  return (await deps.store.mfa.hasRecoveryCode(user.id, codeHash)) ? { kind: 'recovery', codeHash } : null
}

/**
 * Spends a matched code: false if a concurrent request spent it (or a newer step) first. A
 * recovery code used to log in is mailed; one used to turn the factor off is not (that has
 * its own notice, and the codes go with the factor).
 */
async function spendSecondFactor(deps: MfaDeps, user: User, tenant: Tenant, matched: MatchedCode, purpose: 'login' | 'disable'): Promise<boolean> {
  if (matched.kind === 'totp') return deps.store.mfa.useTotpStep(user.id, matched.step)
  if (purpose === 'disable') return deps.store.mfa.useRecoveryCode(user.id, matched.codeHash, deps.clock.now())
  // The notice says how many codes are left after this one; it is queued only if the code is spent.
  const left = Math.max(0, (await deps.store.mfa.countRecoveryCodes(user.id)) - 1)
  const used = await deps.store.mfa.useRecoveryCode(user.id, matched.codeHash, deps.clock.now(), notice(deps, user, tenant, 'recovery-used', left))
  if (used) deps.mailQueued.notify()
  return used
}

/**
 * DELETE /mfa/totp: the user turns the factor off, with a recent proof (step-up) and a code of
 * the factor. The code is a guess like any other: counted against the account's login limits
 * before it is judged, so a stolen token cannot try codes until one fits.
 */
export async function disableTotp(deps: VerifyDeps, caller: Caller, code: unknown, actor: Actor, deviceCookie?: string): Promise<void> {
  requireRecentAuth(deps, caller)
  const { user, tenant } = caller
  await deps.guessTurns.inTurn(`${tenant.id}:${user.email}`, async () => {
    const factor = await deps.store.mfa.findTotp(user.id)
    if (factor?.confirmedAt == null) throw badRequest('Two-factor authentication is not on')
    const about = { tenantId: tenant.id, userId: user.id, detail: { email: maskEmail(user.email) } }
    const guess = await reserveAccountGuess(deps, { tenantId: tenant.id, email: user.email, actor, deviceCookie }, { perIpFailures: false, detail: about.detail })
    const matched = await judged(deps, guess, () => matchSecondFactor(deps, user, factor, code))
    if (!matched) {
      await settle(deps, guess, 'failure', auditEvent(deps, 'mfa.failed', actor, { ...about, detail: { ...about.detail, stage: 'disable' } }))
      throw invalidCode()
    }
    // A right code that a concurrent request spent first is no guess of this one's: not counted.
    if (!(await spendSecondFactor(deps, user, tenant, matched, 'disable'))) {
      await settle(deps, guess, 'unjudged')
      throw invalidCode()
    }
    await settle(deps, guess, 'success')
    await deps.store.mfa.removeTotp({ userId: user.id, mail: notice(deps, user, tenant, 'disabled'), audit: auditEvent(deps, 'mfa.disabled', actor, { ...about, detail: { with: matched.kind } }) })
  })
  deps.mailQueued.notify()
}

/** Whether `code` is a current TOTP code of the user's factor, spending its step if so (a
 *  recovery code is no proof here: it is for a lost phone at login). For reauthenticate. */
export async function proveTotpCode(deps: MfaDeps, user: User, code: unknown): Promise<boolean> {
  const factor = await deps.store.mfa.findTotp(user.id)
  if (typeof code !== 'string' || typedTotpCode(code) === null) return false
  const matched = await matchSecondFactor(deps, user, factor, code)
  return matched?.kind === 'totp' && (await deps.store.mfa.useTotpStep(user.id, matched.step))
}

/** `authd users mfa-reset ID` and the admin API: removes a user's factor (a lost phone). Returns whether there was one. */
export async function resetMfa(deps: MfaDeps, userId: string, actor: Actor = CLI_ACTOR): Promise<boolean> {
  const user = await getUser(deps, userId, actor)
  const tenant = (await deps.store.tenants.get(user.tenantId))!
  const removed = await deps.store.mfa.removeTotp({
    userId,
    mail: notice(deps, user, tenant, 'reset'),
    audit: auditEvent(deps, 'mfa.reset', actor, { tenantId: user.tenantId, userId }),
  })
  deps.mailQueued.notify()
  return removed
}

/** The second step of a login: called by login once the password is right. */
export async function issueMfaChallenge(deps: Pick<Deps, 'store' | 'clock'>, user: User, tenant: Tenant, rememberMe: boolean, actor: Actor): Promise<MfaChallengeAnswer> {
  const token = randomToken(32)
  const now = deps.clock.now()
  await deps.store.mfa.createChallenge({
    id: Bun.randomUUIDv7(),
    tokenHash: sha256(token),
    userId: user.id,
    tenantId: tenant.id,
    rememberMe,
    createdAt: now,
    expiresAt: now + MFA_CHALLENGE_TTL_MS,
    attempts: 0,
    spentAt: null,
  })
  await audit(deps, 'mfa.challenged', actor, { tenantId: tenant.id, userId: user.id, detail: { email: maskEmail(user.email) } })
  return { mfaRequired: true, challengeToken: token, methods: MFA_METHODS }
}

type VerifyDeps = MfaDeps & Pick<Deps, 'keyRing' | 'limitRules' | 'refusals' | 'guessTurns'>

/** A passed challenge: who logged in, and how (sessions.ts starts the session). */
export interface PassedChallenge {
  user: User
  rememberMe: boolean
  secondFactor: 'totp' | 'recovery'
  /** The device cookie to set: the one presented if it is this account's, else a new one. */
  deviceCookie: string
  /** What the success does to the account's counters, committed with the session it starts. */
  limitUpdates: Pick<SessionStartRecord, 'limitResets' | 'limitRefunds'>
}

/** POST /mfa/verify: checks the code against a live challenge and spends the challenge. */
export async function passMfaChallenge(
  deps: VerifyDeps,
  input: { tenant: Tenant; challengeToken: unknown; code: unknown; deviceCookie?: string },
  actor: Actor,
): Promise<PassedChallenge> {
  const { tenant } = input
  if (typeof input.challengeToken !== 'string' || input.challengeToken.length > 128) throw invalidCode()
  const challenge = await deps.store.mfa.findChallenge(sha256(input.challengeToken))
  const now = deps.clock.now()
  // Bound to its tenant: another tenant's API key finds no challenge here.
  if (!challenge || challenge.tenantId !== tenant.id) throw invalidCode()
  const user = await deps.store.users.get(challenge.userId)
  if (!user || user.tenantId !== tenant.id) throw invalidCode()
  // Disabled since the challenge was issued: said as login says it (the token proved the
  // password). Disabling also spent the challenge, so re-enabling does not revive it.
  if (user.disabledAt !== null) throw userDisabled()
  if (challenge.spentAt !== null || challenge.expiresAt <= now || challenge.attempts >= MFA_CHALLENGE_MAX_ATTEMPTS) throw invalidCode()
  return deps.guessTurns.inTurn(`${tenant.id}:${user.email}`, () => judgeChallenge(deps, { ...input, challenge, user, now }, actor))
}

async function judgeChallenge(
  deps: VerifyDeps,
  input: { tenant: Tenant; code: unknown; deviceCookie?: string; challenge: MfaChallenge; user: User; now: number },
  actor: Actor,
): Promise<PassedChallenge> {
  const { tenant, challenge, user, now } = input
  // Wrong codes meet the account's login back-off (§9), keyed as login keys it; the guess is
  // counted there, and against the challenge's own tries, before it is judged.
  const about = { tenantId: tenant.id, userId: user.id, detail: { email: maskEmail(user.email) } }
  // A challenge out of tries (or spent, or expired) takes no guess and counts none, as five
  // wrong codes in a row would leave it, however many arrive at once.
  const guess = await reserveAccountGuess(deps, { tenantId: tenant.id, email: user.email, actor, deviceCookie: input.deviceCookie }, { perIpFailures: false, detail: about.detail }, (limits, at, verdict) =>
    deps.store.mfa.reserveChallengeTry({ id: challenge.id, now: at, maxAttempts: MFA_CHALLENGE_MAX_ATTEMPTS, limits, verdict }),
  )
  if (!guess.admitted) throw invalidCode()
  const matched = await judged(deps, guess, async () => matchSecondFactor(deps, user, await deps.store.mfa.findTotp(user.id), input.code))
  if (!matched) {
    await settle(deps, guess, 'failure', auditEvent(deps, 'mfa.failed', actor, { ...about, detail: { ...about.detail, stage: 'login' } }))
    throw invalidCode()
  }
  // A right code: the challenge first (one session per challenge, however many right codes
  // race), then the code (once across challenges). Losing either race is no guess: not counted.
  const won = await judged(deps, guess, async () => (await deps.store.mfa.spendChallenge(challenge.id, now, MFA_CHALLENGE_MAX_ATTEMPTS)) && (await spendSecondFactor(deps, user, tenant, matched, 'login')))
  if (!won) {
    await settle(deps, guess, 'unjudged')
    throw invalidCode()
  }
  if (matched.kind === 'recovery') await audit(deps, 'mfa.recovery_code_used', actor, about)
  return {
    user,
    rememberMe: challenge.rememberMe,
    secondFactor: matched.kind,
    deviceCookie: guess.device ? input.deviceCookie! : issueDeviceCookie(deps, tenant.id, user.email),
    limitUpdates: sessionLimitUpdates(settleGuess(deps, guess, 'success')),
  }
}
