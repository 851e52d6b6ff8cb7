// Signing in with a passkey alone (product spec §19): request options with a challenge bound to
// the tenant, then the assertion, verified by @simplewebauthn/server with user verification
// required. The credential is always discoverable (the browser's autofill may offer it), so
// the options are the same for every address. A challenge is spent by its first use; an
// unknown credential and a bad signature get the same 401; every assertion is a guess counted
// before it is judged (§18).
import { generateAuthenticationOptions, type AuthenticationResponseJSON, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { accountGuessChecks, inAccountTurn } from '../guards/account-guesses'
import { auditEvent, maskEmail, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { issueDeviceCookie } from '../guards/device-cookies'
import { badRequest, unauthorized, userDisabled } from '../errors'
import { ipSubject, reserveGuess, sessionLimitUpdates, settle, settleGuess, spendBudget, type Rule } from '../guards/limits'
import { startSession, type LoginResult } from '../sessions/sessions'
import type { Tenant } from '../types'
import { normaliseEmail } from '../names'
import { authenticationResponse, CEREMONY_TTL_MS, checkAssertion, passkeyAmr, userHandleMatches } from './credentials'
import { relyingPartyOf } from '../tenants/relying-party'

type SignInDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'keyRing' | 'serverKeys' | 'limitRules' | 'refusals' | 'guessTurns' | 'events'>

/**
 * POST /passkeys/login/options: the same options whatever e-mail is given (it is checked as an
 * address, nothing more). Every authd passkey is discoverable (registered with a resident key),
 * so the browser finds the user's own without a list, and a list would tell who has passkeys:
 * by its entries, and by the back-off a real credential id meets and a decoy does not.
 */
export async function startPasskeySignIn(deps: SignInDeps, tenant: Tenant, email: unknown, actor: Actor): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  if (email !== undefined) normaliseEmail(email)
  await spendBudget(deps, deps.limitRules.passkeyOptionsIp, ipSubject(actor.ip), { type: 'passkey_options.limited', actor, tenantId: tenant.id })
  const rp = relyingPartyOf(deps.config, tenant)
  const options = await generateAuthenticationOptions({ rpID: rp.rpId, userVerification: 'required', timeout: CEREMONY_TTL_MS })
  const now = deps.clock.now()
  const challengeId = Bun.randomUUIDv7()
  await deps.store.passkeys.createChallenge({ id: challengeId, tenantId: tenant.id, userId: null, purpose: 'login', challenge: options.challenge, createdAt: now, expiresAt: now + CEREMONY_TTL_MS, spentAt: null })
  return { challengeId, options }
}

/** POST /passkeys/login: the login answer for a valid assertion. */
export async function signInWithPasskey(
  deps: SignInDeps,
  input: { tenant: Tenant; challengeId: unknown; response: unknown; rememberMe?: unknown; deviceCookie?: string },
  actor: Actor,
): Promise<LoginResult> {
  const { tenant } = input
  if (typeof input.challengeId !== 'string' || input.challengeId.length > 64) throw badRequest('challengeId must be the challengeId of POST /passkeys/login/options')
  if (input.rememberMe !== undefined && typeof input.rememberMe !== 'boolean') throw badRequest('rememberMe must be a boolean')
  const response = authenticationResponse(input.response)
  const rememberMe = input.rememberMe === true
  const now = deps.clock.now()
  // Spent by its first use, whatever comes of it: one assertion per challenge, on any instance.
  const challenge = await deps.store.passkeys.spendChallenge(input.challengeId, tenant.id, 'login', now)
  if (!challenge) throw unauthorized()
  const passkey = await deps.store.passkeys.findByCredentialId(tenant.id, response.id)
  const user = passkey ? await deps.store.users.get(passkey.userId) : null
  // A known credential is a guess at its account (one budget with the password and codes);
  // an unknown one counts toward the client IP's failures, as a login for an unknown address.
  const inTurn = <T>(work: () => Promise<T>) =>
    user ? inAccountTurn(deps, { tenantId: tenant.id, email: user.email, deviceCookie: input.deviceCookie }, work) : deps.guessTurns.inTurn(`${tenant.id}:passkey:${response.id}`, work)
  return inTurn(async () => {
    const about = { tenantId: tenant.id, userId: user?.id ?? null, detail: user ? { email: maskEmail(user.email), method: 'passkey' } : { method: 'passkey' } }
    const accountChecks = user ? accountGuessChecks(deps, { tenantId: tenant.id, email: user.email, actor, deviceCookie: input.deviceCookie }, true) : null
    const checks: Array<[Rule, string]> = accountChecks?.checks ?? [[deps.limitRules.loginIpFailures, ipSubject(actor.ip)]]
    const guess = await reserveGuess(deps, checks, { type: 'login.limited', actor, tenantId: tenant.id, detail: about.detail })
    const proof =
      passkey && user && userHandleMatches(response.response.userHandle, user.id)
        ? await checkAssertion({ response, passkey, challenge: challenge.challenge, rp: relyingPartyOf(deps.config, tenant), requireUserVerification: true })
        : ({ ok: false, reason: 'invalid' } as const)
    const refuse = async (reason: string) => {
      const type = reason === 'counter-regressed' ? 'passkey.counter_regressed' : 'login.failed'
      await settle(deps, guess, 'failure', auditEvent(deps, type, actor, { ...about, detail: { ...about.detail, reason, ...(passkey && { passkeyId: passkey.id }) } }))
      deps.events.notify({ kind: 'login', outcome: 'failed' })
      return unauthorized()
    }
    if (!proof.ok) throw await refuse(passkey ? proof.reason : 'unknown-credential')
    const signedIn = user!
    if (signedIn.disabledAt !== null) {
      await settle(deps, guess, 'success', auditEvent(deps, 'login.failed', actor, { ...about, detail: { ...about.detail, reason: 'user-disabled' } }))
      throw userDisabled()
    }
    // Checked against the stored counter again as it is written: two assertions with one
    // counter (a clone and its original) can both pass the check above at once.
    if (!(await deps.store.passkeys.recordUse(passkey!.id, proof.newCounter, now))) throw await refuse('counter-regressed')
    const session = await startSession(deps, signedIn, tenant, rememberMe, actor, passkeyAmr(passkey!, proof.userVerified), {
      ...sessionLimitUpdates(settleGuess(deps, guess, 'success')),
      audit: auditEvent(deps, 'login.succeeded', actor, { ...about, detail: { ...about.detail, passkeyId: passkey!.id, rememberMe } }),
    })
    deps.events.notify({ kind: 'login', outcome: 'succeeded' })
    return { ...session, deviceCookie: accountChecks?.device ? input.deviceCookie! : issueDeviceCookie(deps, tenant.id, signedIn.email) }
  })
}

/**
 * A step-up proof with a passkey (POST /reauthenticate, §18): an assertion, with user
 * verification, for a challenge of POST /passkeys/login/options, by one of this user's own
 * passkeys. The challenge is spent by the time this returns, whatever the answer.
 */
export async function provePasskey(
  deps: Pick<Deps, 'store' | 'clock' | 'config'>,
  user: { id: string },
  tenant: Tenant,
  input: { challengeId: string; response: AuthenticationResponseJSON },
): Promise<'proved' | 'wrong'> {
  const now = deps.clock.now()
  const challenge = await deps.store.passkeys.spendChallenge(input.challengeId, tenant.id, 'login', now)
  if (!challenge) return 'wrong'
  const passkey = await deps.store.passkeys.findByCredentialId(tenant.id, input.response.id)
  if (!passkey || passkey.userId !== user.id || !userHandleMatches(input.response.response.userHandle, user.id)) return 'wrong'
  const proof = await checkAssertion({ response: input.response, passkey, challenge: challenge.challenge, rp: relyingPartyOf(deps.config, tenant), requireUserVerification: true })
  return proof.ok && (await deps.store.passkeys.recordUse(passkey.id, proof.newCounter, now)) ? 'proved' : 'wrong'
}
