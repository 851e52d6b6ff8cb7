// Signing in with a password (POST /login, the login page), and the second step for a user with
// a second factor (POST /mfa/verify): proofs of the user that end in a session (sessions.ts).
import { auditEvent, maskEmail, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { AppError, unauthorized, userDisabled, type ErrorCode } from '../errors'
import { inAccountTurn, reserveAccountGuess } from '../guards/account-guesses'
import { judged, sessionLimitUpdates, settle, settleGuess } from '../guards/limits'
import { issueDeviceCookie } from '../guards/device-cookies'
import { issueMfaChallenge, passMfaChallenge, type MfaChallengeAnswer } from '../mfa/challenge'
import { hasConfirmedTotp } from '../mfa/factor'
import { normalisePassword } from '../accounts/password-policy'
import { hmacSha256 } from '../secrets'
import { startSession, type LoginResult, type SessionDeps } from '../sessions/sessions'
import type { Tenant } from '../types'
import { normaliseEmail } from '../names'

type LoginDeps = SessionDeps & Pick<Deps, 'hasher' | 'serverKeys' | 'limitRules' | 'refusals' | 'events' | 'guessTurns'>
type LoginInput = { tenant: Tenant; email: string; password: string; rememberMe: boolean; deviceCookie?: string }

/** How a refused login is reported, by the code of its error (a malformed request is none). */
const LOGIN_OUTCOMES: Partial<Record<ErrorCode, 'failed' | 'limited' | 'overloaded'>> = {
  unauthorized: 'failed',
  user_disabled: 'failed',
  rate_limited: 'limited',
  unavailable: 'overloaded',
}

/** A login's answer: a session, or (for a user with a second factor) the challenge to pass first. */
export type LoginAnswer = ({ kind: 'session' } & LoginResult) | ({ kind: 'mfa' } & MfaChallengeAnswer)

export async function login(deps: LoginDeps, input: LoginInput, actor: Actor): Promise<LoginAnswer> {
  try {
    // One guess at a time per account in this process: see guess-turns.ts.
    const result = await inAccountTurn(deps, { tenantId: input.tenant.id, email: normaliseEmail(input.email), deviceCookie: input.deviceCookie }, () => authenticate(deps, input, actor))
    // A challenge is no login yet: /mfa/verify reports the success.
    deps.events.notify({ kind: 'login', outcome: result.kind === 'mfa' ? 'challenged' : 'succeeded' })
    return result
  } catch (error) {
    const outcome = error instanceof AppError ? LOGIN_OUTCOMES[error.code] : undefined
    if (outcome) deps.events.notify({ kind: 'login', outcome })
    throw error
  }
}

async function authenticate(deps: LoginDeps, input: LoginInput, actor: Actor): Promise<LoginAnswer> {
  // Under a flood, refuse before any database work: a refused login must be cheap.
  deps.hasher.assertCapacity()
  const { tenant } = input
  const email = normaliseEmail(input.email)
  const password = normalisePassword(input.password)
  const about = { tenantId: tenant.id, detail: { email: maskEmail(email) } }
  // Counted before it is judged: a burst of guesses meets the back-off as the same guesses in a row would.
  const guess = await reserveAccountGuess(deps, { tenantId: tenant.id, email, actor, deviceCookie: input.deviceCookie }, { perIpFailures: true, detail: about.detail })
  const { user, verified } = await judged(deps, guess, async () => {
    const user = await deps.store.users.findByEmail(tenant.id, email)
    const verified = user?.passwordHash
      ? await deps.hasher.verify(password, user.passwordHash)
      : // Same work for an unknown e-mail as for a wrong password: no account enumeration by timing.
        await deps.hasher.verifyDummy(password, dummySeed(deps, tenant.id, email))
    return { user, verified }
  })
  if (!user || !verified) {
    await settle(deps, guess, 'failure', auditEvent(deps, 'login.failed', actor, { ...about, userId: user?.id, detail: { ...about.detail, reason: user ? 'wrong-password' : 'unknown-email' } }))
    throw unauthorized()
  }
  // With a second factor, the password alone is no success: the back-off run it would end goes
  // on until the challenge is passed (wrong codes count in it), else knowing the password
  // would reset the guessing budget for codes at every login. The password's own count is
  // taken back (it was right).
  const secondFactor = await hasConfirmedTotp(deps, user.id)
  // Only someone who knows the password learns that the account is disabled.
  if (user.disabledAt !== null) {
    await settle(deps, guess, secondFactor ? 'unjudged' : 'success', auditEvent(deps, 'login.failed', actor, { ...about, userId: user.id, detail: { ...about.detail, reason: 'user-disabled' } }))
    throw userDisabled()
  }
  const now = deps.clock.now()
  if (deps.hasher.needsRehash(user.passwordHash!)) {
    await deps.store.users.setPasswordHash(user.id, await deps.hasher.hash(password), now)
  }

  // The second step exists only after the right password: a wrong one costs the same whether
  // or not the user has a second factor.
  if (secondFactor) {
    await settle(deps, guess, 'unjudged')
    return { kind: 'mfa', ...(await issueMfaChallenge(deps, user, tenant, input.rememberMe, actor)) }
  }
  // The success ends the back-off runs in the session's own transaction, with its audit event.
  const session = await startSession(deps, user, tenant, input.rememberMe, actor, ['pwd'], {
    ...sessionLimitUpdates(settleGuess(deps, guess, 'success')),
    audit: auditEvent(deps, 'login.succeeded', actor, { ...about, userId: user.id, detail: { ...about.detail, rememberMe: input.rememberMe, trustedDevice: guess.device !== null } }),
  })
  return { kind: 'session', ...session, deviceCookie: guess.device ? input.deviceCookie! : issueDeviceCookie(deps, tenant.id, email) }
}

/** POST /mfa/verify: a passed challenge is the login's answer, its access tokens with amr pwd+otp. */
export async function loginWithSecondFactor(
  deps: LoginDeps & Pick<Deps, 'mailQueued'>,
  input: { tenant: Tenant; challengeToken: unknown; code?: unknown; response?: unknown; deviceCookie?: string },
  actor: Actor,
): Promise<LoginResult> {
  const passed = await passMfaChallenge(deps, input, actor)
  const detail = { email: maskEmail(passed.user.email), rememberMe: passed.rememberMe, secondFactor: passed.secondFactor, ...(passed.providerId !== null && { providerId: passed.providerId }) }
  const succeeded = auditEvent(deps, 'login.succeeded', actor, { tenantId: input.tenant.id, userId: passed.user.id, detail })
  const session = await startSession(deps, passed.user, input.tenant, passed.rememberMe, actor, passed.amr, { ...passed.limitUpdates, audit: succeeded, ...(passed.providerId !== null && { providerId: passed.providerId }) })
  deps.events.notify({ kind: 'login', outcome: 'succeeded' })
  return { ...session, deviceCookie: passed.deviceCookie }
}

function dummySeed(deps: Pick<Deps, 'serverKeys'>, tenantId: string, email: string): number {
  return Buffer.from(hmacSha256(deps.serverKeys.hmac, `dummy-hash:${tenantId}:${email}`), 'base64url').readUInt32BE(0) / 2 ** 32
}
