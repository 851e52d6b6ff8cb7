// A user's TOTP factor and recovery codes (product spec §17): the secret sealed (AES-256-GCM
// under a server key, bound to the user), recovery codes single use and stored only as keyed
// hashes, a TOTP code accepted once (its step is recorded; neither it nor an older one works
// again) within ±1 step of drift. Shared by enrolment, the login challenge and step-up.
import { tenantTitle } from '../tenants/tenants'
import { randomBytes } from 'node:crypto'
import type { Deps } from '../deps'
import { newOutboxMessage } from '../mail/outbox'
import { mfaNoticeMail, type MfaNotice } from '../mail/templates'
import { hmacSha256, seal, unseal } from '../secrets'
import type { OutboxMessage, Tenant, TotpFactor, User } from '../types'
import { base32Encode, matchTotp, typedTotpCode } from './totp'

export const RECOVERY_CODE_COUNT = 10

export type MfaDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'serverKeys' | 'mailQueued'>

const secretContext = (userId: string) => `totp:${userId}`
export const sealSecret = (deps: Pick<Deps, 'serverKeys'>, userId: string, secret: string) => seal(deps.serverKeys.sealing, secretContext(userId), secret)
export const openSecret = (deps: Pick<Deps, 'serverKeys'>, userId: string, sealed: string) => unseal(deps.serverKeys.sealing, secretContext(userId), sealed)

/** A recovery code as typed: case, spaces and dashes do not matter. */
const normaliseRecoveryCode = (code: string) => code.toLowerCase().replace(/[\s-]/g, '')
export const recoveryCodeHash = (deps: Pick<Deps, 'serverKeys'>, userId: string, code: string) => hmacSha256(deps.serverKeys.hmac, `recovery:${userId}:${normaliseRecoveryCode(code)}`)
/** 50 random bits in base32, shown as xxxxx-xxxxx. */
export const newRecoveryCode = () => {
  const raw = base32Encode(randomBytes(7)).slice(0, 10).toLowerCase()
  return `${raw.slice(0, 5)}-${raw.slice(5)}`
}

export function notice(deps: Pick<Deps, 'clock'>, user: User, tenant: Tenant, kind: MfaNotice, language: string | undefined, recoveryCodesLeft?: number): OutboxMessage {
  const now = deps.clock.now()
  const content = mfaNoticeMail({ tenantName: tenantTitle(tenant), firstName: user.firstName, notice: kind, at: now, recoveryCodesLeft, language })
  const mailKind = kind === 'enrolled' ? 'mfa-enrolled' : kind === 'recovery-used' ? 'mfa-recovery-used' : 'mfa-disabled'
  return newOutboxMessage({ tenantId: tenant.id, kind: mailKind, recipient: user.email, content, now })
}

/** Whether the user must pass a second step at login. */
export async function hasConfirmedTotp(deps: Pick<Deps, 'store'>, userId: string): Promise<boolean> {
  return (await deps.store.mfa.findTotp(userId))?.confirmedAt != null
}
/** A code that matches the user's factor, not yet spent. */
export type MatchedCode = { kind: 'totp'; step: number } | { kind: 'recovery'; codeHash: string }

/** Whether `code` is a current TOTP code (after the last one used) or an unused recovery code of the user's factor. Reads only. */
export async function matchSecondFactor(deps: MfaDeps, user: User, factor: TotpFactor | null, code: unknown): Promise<MatchedCode | 'replay' | null> {
  if (typeof code !== 'string' || code.length > 64) return null
  if (!factor || factor.confirmedAt === null) return null
  const typed = typedTotpCode(code)
  if (typed !== null) {
    const secret = openSecret(deps, user.id, factor.sealedSecret)
    const step = matchTotp(secret, typed, deps.clock.now(), factor.lastUsedStep)
    if (step !== null) return { kind: 'totp', step }
    // A code of this window already used (a double click, a form sent twice) is refused but is
    // no guess: it would otherwise count toward the back-off of its own owner.
    return matchTotp(secret, typed, deps.clock.now(), null) === null ? null : 'replay'
  }
  const codeHash = recoveryCodeHash(deps, user.id, code)
  return (await deps.store.mfa.hasRecoveryCode(user.id, codeHash)) ? { kind: 'recovery', codeHash } : null
}

/**
 * Spends a matched code: false if a concurrent request spent it (or a newer step) first. A
 * recovery code used to log in is mailed; one used to turn the factor off is not (that has
 * its own notice, and the codes go with the factor).
 */
export async function spendSecondFactor(deps: MfaDeps, user: User, tenant: Tenant, matched: MatchedCode, purpose: 'login' | 'disable', language?: string): Promise<boolean> {
  if (matched.kind === 'totp') return deps.store.mfa.useTotpStep(user.id, matched.step)
  if (purpose === 'disable') return deps.store.mfa.useRecoveryCode(user.id, matched.codeHash, deps.clock.now())
  // The notice says how many codes are left after this one; it is queued only if the code is spent.
  const left = Math.max(0, (await deps.store.mfa.countRecoveryCodes(user.id)) - 1)
  const used = await deps.store.mfa.useRecoveryCode(user.id, matched.codeHash, deps.clock.now(), notice(deps, user, tenant, 'recovery-used', language, left))
  if (used) deps.mailQueued.notify()
  return used
}

/** Whether `code` is a current TOTP code of the user's factor, spending its step if so (a
 *  recovery code is no proof here: it is for a lost phone at login). For reauthenticate. */
export async function proveTotpCode(deps: MfaDeps, user: User, code: unknown): Promise<'proved' | 'replay' | 'wrong'> {
  const factor = await deps.store.mfa.findTotp(user.id)
  if (typeof code !== 'string' || typedTotpCode(code) === null) return 'wrong'
  const matched = await matchSecondFactor(deps, user, factor, code)
  if (matched === 'replay') return 'replay'
  if (matched?.kind !== 'totp') return 'wrong'
  // Spent by a concurrent request first: a replay of it.
  return (await deps.store.mfa.useTotpStep(user.id, matched.step)) ? 'proved' : 'replay'
}

