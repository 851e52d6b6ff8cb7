// Step-up (product spec §18): what changes how an account is protected (a second factor turned
// on or off, a passkey added or removed, the password changed from a session) needs a proof of
// the user within the last few minutes of that session, not only a live access token. A token
// or refresh cookie stolen from a browser then cannot turn the owner's protection off, nor add
// the thief's own factor. The session records when its user last proved who they are
// (`authAt`: its login, or POST /reauthenticate); the proof itself meets the account's login
// limits, counted before it is judged like every guess.
import { inAccountTurn, reserveAccountGuess } from './account-guesses'
import { auditEvent, maskEmail, type Actor } from './audit'
import type { Deps } from './deps'
import { badRequest, invalidCredentials, stepUpRequired, unauthorized } from './errors'
import { judged, settle } from './limits'
import { proveTotpCode } from './mfa/factor'
import { normalisePassword } from './password-policy'
import type { Caller } from './signed-in-user'

/** How long a proof of the user lets such changes through. */
export const STEP_UP_WINDOW_MS = 5 * 60_000

/** Whether the caller's session proved its user within the window (a page shows the proof's form if not). */
export const hasRecentAuth = (deps: Pick<Deps, 'clock'>, caller: Pick<Caller, 'authAt'>) => deps.clock.now() - caller.authAt <= STEP_UP_WINDOW_MS

/** Refuses (403 step_up_required) unless the caller's session proved its user within the window. */
export function requireRecentAuth(deps: Pick<Deps, 'clock'>, caller: Pick<Caller, 'authAt'>): void {
  if (!hasRecentAuth(deps, caller)) throw stepUpRequired(STEP_UP_WINDOW_MS / 1000)
}

type ReauthDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'serverKeys' | 'hasher' | 'limitRules' | 'refusals' | 'mailQueued' | 'guessTurns'>

/**
 * POST /reauthenticate: the signed-in user proves who they are again, with their password or
 * a current TOTP code (exactly one), and the session may make protected changes for the next
 * five minutes. A wrong proof is one more failure of the account's login back-off.
 */
export async function reauthenticate(
  deps: ReauthDeps,
  caller: Caller,
  input: { password?: unknown; code?: unknown; deviceCookie?: string },
  actor: Actor,
): Promise<{ authTime: string }> {
  const { user, tenant } = caller
  const byPassword = input.password !== undefined
  if (byPassword === (input.code !== undefined)) throw badRequest('Give either password or code')
  if (byPassword && typeof input.password !== 'string') throw badRequest('password must be a string')
  if (!byPassword && typeof input.code !== 'string') throw badRequest('code must be a string')
  if (byPassword) deps.hasher.assertCapacity()
  return inAccountTurn(deps, { tenantId: tenant.id, email: user.email, deviceCookie: input.deviceCookie }, () => proveAgain(deps, caller, input, byPassword, actor))
}

async function proveAgain(deps: ReauthDeps, caller: Caller, input: { password?: unknown; code?: unknown; deviceCookie?: string }, byPassword: boolean, actor: Actor): Promise<{ authTime: string }> {
  const { user, tenant } = caller
  const about = { tenantId: tenant.id, userId: user.id, detail: { email: maskEmail(user.email), with: byPassword ? 'password' : 'totp' } }
  const guess = await reserveAccountGuess(deps, { tenantId: tenant.id, email: user.email, actor, deviceCookie: input.deviceCookie }, { perIpFailures: false, detail: about.detail })
  const proof = await judged(deps, guess, async () => {
    if (!byPassword) return proveTotpCode(deps, user, input.code)
    return user.passwordHash !== null && (await deps.hasher.verify(normalisePassword(input.password as string), user.passwordHash)) ? 'proved' : 'wrong'
  })
  if (proof === 'replay') {
    await settle(deps, guess, 'unjudged')
    throw invalidCredentials()
  }
  if (proof === 'wrong') {
    await settle(deps, guess, 'failure', auditEvent(deps, 'reauth.failed', actor, about))
    throw invalidCredentials()
  }
  await settle(deps, guess, 'success')
  const now = deps.clock.now()
  // The session may have ended meanwhile (logout elsewhere): nothing to mark, and no proof of it.
  if (!(await deps.store.sessions.markAuthenticated(caller.sessionId, now, auditEvent(deps, 'session.reauthenticated', actor, about)))) throw unauthorized()
  return { authTime: new Date(now).toISOString() }
}
