// Turning TOTP on and off (product spec §17, §18): enrolment needs step-up, its confirmation
// ends the user's other sessions, and every code typed is a guess counted against the
// account's login back-off before it is judged. Enrolment, removal and an admin's reset are
// audit events and mailed notices.
import { inAccountTurn, reserveAccountGuess } from '../guards/account-guesses'
import { audit, auditEvent, CLI_ACTOR, maskEmail, type Actor } from '../audit/audit'
import { badRequest, conflict, invalidCode } from '../errors'
import { judged, settle } from '../guards/limits'
import type { Caller } from '../sessions/signed-in-user'
import { requireRecentAuth } from '../sessions/recent-auth'
import type { RecoveryCode } from '../types'
import { getUser } from '../accounts/users'
import { matchSecondFactor, newRecoveryCode, notice, openSecret, RECOVERY_CODE_COUNT, recoveryCodeHash, sealSecret, spendSecondFactor, type MfaDeps } from './factor'
import { matchTotp, newTotpSecret, otpauthUrl, typedTotpCode } from './totp'
import type { VerifyDeps } from './challenge'

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
  return inAccountTurn(deps, { tenantId: tenant.id, email: user.email, deviceCookie }, async () => {
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
      mail: notice(deps, user, tenant, 'enrolled', actor.language),
      audit: auditEvent(deps, 'mfa.enrolled', actor, { tenantId: tenant.id, userId: user.id }),
    })
    if (!confirmed) throw conflict('Two-factor authentication is already on')
    deps.mailQueued.notify()
    return { recoveryCodes }
  })
}

/**
 * DELETE /mfa/totp: the user turns the factor off, with a recent proof (step-up) and a code of
 * the factor. The code is a guess like any other: counted against the account's login limits
 * before it is judged, so a stolen token cannot try codes until one fits.
 */
export async function disableTotp(deps: VerifyDeps, caller: Caller, code: unknown, actor: Actor, deviceCookie?: string): Promise<void> {
  requireRecentAuth(deps, caller)
  const { user, tenant } = caller
  await inAccountTurn(deps, { tenantId: tenant.id, email: user.email, deviceCookie }, async () => {
    const factor = await deps.store.mfa.findTotp(user.id)
    if (factor?.confirmedAt == null) throw badRequest('Two-factor authentication is not on')
    const about = { tenantId: tenant.id, userId: user.id, detail: { email: maskEmail(user.email) } }
    const guess = await reserveAccountGuess(deps, { tenantId: tenant.id, email: user.email, actor, deviceCookie }, { perIpFailures: false, detail: about.detail })
    const matched = await judged(deps, guess, () => matchSecondFactor(deps, user, factor, code))
    if (matched === 'replay') {
      await settle(deps, guess, 'unjudged')
      throw invalidCode()
    }
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
    await deps.store.mfa.removeTotp({ userId: user.id, mail: notice(deps, user, tenant, 'disabled', actor.language), audit: auditEvent(deps, 'mfa.disabled', actor, { ...about, detail: { with: matched.kind } }) })
  })
  deps.mailQueued.notify()
}

/** `authd users mfa-reset ID` and the admin API: removes a user's factor (a lost phone). Returns whether there was one. */
export async function resetMfa(deps: MfaDeps, userId: string, actor: Actor = CLI_ACTOR): Promise<boolean> {
  const user = await getUser(deps, userId, actor)
  const tenant = (await deps.store.tenants.get(user.tenantId))!
  const removed = await deps.store.mfa.removeTotp({
    userId,
    mail: notice(deps, user, tenant, 'reset', actor.language),
    audit: auditEvent(deps, 'mfa.reset', actor, { tenantId: user.tenantId, userId }),
  })
  deps.mailQueued.notify()
  return removed
}

