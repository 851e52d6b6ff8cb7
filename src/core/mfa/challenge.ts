// The second step of a login (product spec §17): it exists only after the right password (a
// wrong password is answered as before, with the same work, enrolled or not); a challenge is
// single use, bound to its user and tenant, lives 5 minutes and allows 5 wrong codes, and
// wrong codes count toward the account's login back-off (§9), each before it is judged.
import { reserveAccountGuess } from '../account-guesses'
import { audit, auditEvent, maskEmail, type Actor } from '../audit'
import type { Deps } from '../deps'
import { issueDeviceCookie } from '../device-cookies'
import { invalidCode, userDisabled } from '../errors'
import { judged, sessionLimitUpdates, settle, settleGuess } from '../limits'
import { randomToken, sha256 } from '../secrets'
import type { SessionStartRecord } from '../store'
import type { MfaChallenge, Tenant, User } from '../types'
import { matchSecondFactor, spendSecondFactor, type MfaDeps } from './factor'

export const MFA_CHALLENGE_TTL_MS = 5 * 60_000
export const MFA_CHALLENGE_MAX_ATTEMPTS = 5
export const MFA_METHODS = ['totp', 'recovery'] as const

/** What login answers an enrolled user who gave the right password. */
export interface MfaChallengeAnswer {
  mfaRequired: true
  challengeToken: string
  methods: typeof MFA_METHODS
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
    webauthnChallenge: null,
  })
  await audit(deps, 'mfa.challenged', actor, { tenantId: tenant.id, userId: user.id, detail: { email: maskEmail(user.email) } })
  return { mfaRequired: true, challengeToken: token, methods: MFA_METHODS }
}

export type VerifyDeps = MfaDeps & Pick<Deps, 'keyRing' | 'limitRules' | 'refusals' | 'guessTurns'>

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

