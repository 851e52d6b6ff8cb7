// Step-up (product spec §18): what changes how an account is protected (a second factor turned
// on or off, a passkey added or removed, the password changed from a session) needs a proof of
// the user within the last few minutes of that session, not only a live access token. A token
// or refresh cookie stolen from a browser then cannot turn the owner's protection off, nor add
// the thief's own factor. The session records when its user last proved who they are
// (`authAt`: its login, or POST /reauthenticate); the proof (password, TOTP code or passkey)
// meets the account's login limits, counted before it is judged like every guess.
import type { AuthenticationResponseJSON } from '@simplewebauthn/server'
import { inAccountTurn, reserveAccountGuess } from '../guards/account-guesses'
import { auditEvent, maskEmail, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { badRequest, invalidCredentials, unauthorized } from '../errors'
import { judged, settle } from '../guards/limits'
import { proveTotpCode } from '../mfa/factor'
import { authenticationResponse } from '../passkeys/credentials'
import { provePasskey } from '../passkeys/sign-in'
import { normalisePassword } from '../accounts/password-policy'
import type { Caller } from '../sessions/signed-in-user'

type ReauthDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'serverKeys' | 'hasher' | 'limitRules' | 'refusals' | 'mailQueued' | 'guessTurns'>

type Proof = { with: 'password'; password: string } | { with: 'totp'; code: string } | { with: 'passkey'; challengeId: string; response: AuthenticationResponseJSON }

/**
 * POST /reauthenticate: the signed-in user proves who they are again, with their password, a
 * current TOTP code or a passkey (exactly one), and the session may make protected changes for
 * the next five minutes. A wrong proof is one more failure of the account's login back-off.
 */
export async function reauthenticate(
  deps: ReauthDeps,
  caller: Caller,
  input: { password?: unknown; code?: unknown; challengeId?: unknown; response?: unknown; deviceCookie?: string },
  actor: Actor,
): Promise<{ authTime: string }> {
  const { user, tenant } = caller
  const proof = proofOf(input)
  if (proof.with === 'password') deps.hasher.assertCapacity()
  return inAccountTurn(deps, { tenantId: tenant.id, email: user.email, deviceCookie: input.deviceCookie }, () => proveAgain(deps, caller, proof, input.deviceCookie, actor))
}

/**
 * A signed-in session proves a second factor (a current TOTP code): an application behind a
 * `two_factor` access rule (core/forward-auth) admits it from then on. The session's amr gains
 * `otp`, as if its sign-in had asked for the code; it counts as a reauthentication too.
 */
export async function proveSecondFactorInSession(deps: ReauthDeps, caller: Caller, input: { code?: unknown; deviceCookie?: string }, actor: Actor): Promise<{ amr: string[] }> {
  const { user, tenant } = caller
  if (typeof input.code !== 'string') throw badRequest('code must be a string')
  const amr = [...new Set([...caller.amr, 'otp'])]
  await inAccountTurn(deps, { tenantId: tenant.id, email: user.email, deviceCookie: input.deviceCookie }, () => proveAgain(deps, caller, { with: 'totp', code: input.code as string }, input.deviceCookie, actor, amr))
  return { amr }
}

function proofOf(input: { password?: unknown; code?: unknown; challengeId?: unknown; response?: unknown }): Proof {
  const given = [input.password, input.code, input.response].filter((v) => v !== undefined).length
  if (given !== 1) throw badRequest('Give exactly one of password, code, or a passkey response with its challengeId')
  if (input.password !== undefined) {
    if (typeof input.password !== 'string') throw badRequest('password must be a string')
    return { with: 'password', password: input.password }
  }
  if (input.code !== undefined) {
    if (typeof input.code !== 'string') throw badRequest('code must be a string')
    return { with: 'totp', code: input.code }
  }
  if (typeof input.challengeId !== 'string' || input.challengeId.length > 64) throw badRequest('challengeId must be the challengeId of POST /passkeys/login/options')
  return { with: 'passkey', challengeId: input.challengeId, response: authenticationResponse(input.response) }
}

/** @param amr the session's amr from now on (a second factor proved in it); absent: as it was */
async function proveAgain(deps: ReauthDeps, caller: Caller, proof: Proof, deviceCookie: string | undefined, actor: Actor, amr?: string[]): Promise<{ authTime: string }> {
  const { user, tenant } = caller
  const about = { tenantId: tenant.id, userId: user.id, detail: { email: maskEmail(user.email), with: proof.with } }
  const guess = await reserveAccountGuess(deps, { tenantId: tenant.id, email: user.email, actor, deviceCookie }, { perIpFailures: false, detail: about.detail })
  const outcome = await judged(deps, guess, async () => {
    if (proof.with === 'totp') return proveTotpCode(deps, user, proof.code)
    if (proof.with === 'passkey') return provePasskey(deps, user, tenant, proof)
    return user.passwordHash !== null && (await deps.hasher.verify(normalisePassword(proof.password), user.passwordHash)) ? 'proved' : 'wrong'
  })
  if (outcome === 'replay') {
    await settle(deps, guess, 'unjudged')
    throw invalidCredentials()
  }
  if (outcome === 'wrong') {
    await settle(deps, guess, 'failure', auditEvent(deps, 'reauth.failed', actor, about))
    throw invalidCredentials()
  }
  await settle(deps, guess, 'success')
  const now = deps.clock.now()
  // The session may have ended meanwhile (logout elsewhere): nothing to mark, and no proof of it.
  if (!(await deps.store.sessions.markAuthenticated(caller.sessionId, now, auditEvent(deps, 'session.reauthenticated', actor, about), amr?.join(',')))) throw unauthorized()
  return { authTime: new Date(now).toISOString() }
}
