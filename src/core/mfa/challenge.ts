// The second step of a login (product spec §17): it exists only after the right password (a
// wrong password is answered as before, with the same work, enrolled or not); a challenge is
// single use, bound to its user and tenant, lives 5 minutes and allows 5 wrong codes, and
// wrong codes count toward the account's login back-off (§9), each before it is judged.
import { inAccountTurn, reserveAccountGuess } from '../guards/account-guesses'
import { audit, auditEvent, maskEmail, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { issueDeviceCookie } from '../guards/device-cookies'
import { badRequest, invalidCode, userDisabled } from '../errors'
import { judged, sessionLimitUpdates, settle, settleGuess } from '../guards/limits'
import { randomToken, sha256 } from '../secrets'
import type { SessionStartRecord } from '../sessions/store'
import type { MfaChallenge, Passkey, Tenant, User } from '../types'
import { generateAuthenticationOptions, type AuthenticationResponseJSON, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { authenticationResponse, checkAssertion, passkeyAmr, userHandleMatches } from '../passkeys/credentials'
import { relyingPartyOf } from '../tenants/relying-party'
import { matchSecondFactor, spendSecondFactor, type MatchedCode, type MfaDeps } from './factor'

export const MFA_CHALLENGE_TTL_MS = 5 * 60_000
export const MFA_CHALLENGE_MAX_ATTEMPTS = 5
export type MfaMethod = 'totp' | 'recovery' | 'passkey'

/** What login answers an enrolled user who gave the right password. */
export interface MfaChallengeAnswer {
  mfaRequired: true
  challengeToken: string
  methods: MfaMethod[]
  /** For a user with passkeys: request options (WebAuthn JSON) whose assertion passes the challenge. */
  passkeyOptions?: PublicKeyCredentialRequestOptionsJSON
}

/** The second step of a login: called by login once the password is right (or by an upstream
 *  sign-in, `providerId`, core/federation). A user with passkeys may pass it with one of them,
 *  signing the WebAuthn challenge issued with it. */
export async function issueMfaChallenge(deps: Pick<Deps, 'store' | 'clock' | 'config'>, user: User, tenant: Tenant, rememberMe: boolean, actor: Actor, providerId: string | null = null): Promise<MfaChallengeAnswer> {
  const token = randomToken(32)
  const now = deps.clock.now()
  const held = await deps.store.passkeys.listByUser(user.id)
  const passkeyOptions =
    held.length === 0
      ? undefined
      : await generateAuthenticationOptions({
          rpID: relyingPartyOf(deps.config, tenant).rpId,
          allowCredentials: held.map((p) => ({ id: p.credentialId, transports: JSON.parse(p.transports) as string[] })),
          userVerification: 'preferred',
          timeout: MFA_CHALLENGE_TTL_MS,
        })
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
    webauthnChallenge: passkeyOptions?.challenge ?? null,
    providerId,
  })
  await audit(deps, 'mfa.challenged', actor, { tenantId: tenant.id, userId: user.id, detail: { email: maskEmail(user.email) } })
  return { mfaRequired: true, challengeToken: token, methods: passkeyOptions ? ['totp', 'recovery', 'passkey'] : ['totp', 'recovery'], ...(passkeyOptions && { passkeyOptions }) }
}

export type VerifyDeps = MfaDeps & Pick<Deps, 'keyRing' | 'limitRules' | 'refusals' | 'guessTurns'>

/** A passed challenge: who logged in, and how (sessions.ts starts the session). */
export interface PassedChallenge {
  user: User
  rememberMe: boolean
  secondFactor: 'totp' | 'recovery' | 'passkey'
  /** The access tokens' amr for the session the challenge starts. */
  amr: string[]
  /** The upstream provider whose sign-in the challenge completed; null: a password's. */
  providerId: string | null
  /** The device cookie to set: the one presented if it is this account's, else a new one. */
  deviceCookie: string
  /** What the success does to the account's counters, committed with the session it starts. */
  limitUpdates: Pick<SessionStartRecord, 'limitResets' | 'limitRefunds'>
}

/** POST /mfa/verify: checks the code against a live challenge and spends the challenge. */
export async function passMfaChallenge(
  deps: VerifyDeps,
  input: { tenant: Tenant; challengeToken: unknown; code?: unknown; response?: unknown; deviceCookie?: string },
  actor: Actor,
): Promise<PassedChallenge> {
  const { tenant } = input
  if ((input.code === undefined) === (input.response === undefined)) throw badRequest('Give either code or response (a passkey assertion)')
  // A passkey's assertion, checked in shape before anything is counted.
  const response = input.response === undefined ? undefined : authenticationResponse(input.response)
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
  return inAccountTurn(deps, { tenantId: tenant.id, email: user.email, deviceCookie: input.deviceCookie }, () => judgeChallenge(deps, { ...input, response, challenge, user, now }, actor))
}

/** What passed a challenge: a TOTP or recovery code, or a passkey's assertion. */
type SecondFactorProof = MatchedCode | { kind: 'passkey'; passkey: Passkey; newCounter: number; userVerified: boolean } | { kind: 'counter-regressed'; passkey: Passkey }

/** Whether the assertion is one of the user's passkeys signing this challenge's WebAuthn challenge. */
async function matchPasskey(deps: VerifyDeps, user: User, tenant: Tenant, challenge: MfaChallenge, response: AuthenticationResponseJSON): Promise<SecondFactorProof | null> {
  if (challenge.webauthnChallenge === null) return null
  const passkey = await deps.store.passkeys.findByCredentialId(tenant.id, response.id)
  if (!passkey || passkey.userId !== user.id || !userHandleMatches(response.response.userHandle, user.id)) return null
  const proof = await checkAssertion({ response, passkey, challenge: challenge.webauthnChallenge, rp: relyingPartyOf(deps.config, tenant), requireUserVerification: false })
  if (proof.ok) return { kind: 'passkey', passkey, newCounter: proof.newCounter, userVerified: proof.userVerified }
  return proof.reason === 'counter-regressed' ? { kind: 'counter-regressed', passkey } : null
}

async function judgeChallenge(
  deps: VerifyDeps,
  input: { tenant: Tenant; code?: unknown; response?: AuthenticationResponseJSON; deviceCookie?: string; challenge: MfaChallenge; user: User; now: number },
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
  const matched: SecondFactorProof | 'replay' | null = await judged(deps, guess, async () =>
    input.response ? matchPasskey(deps, user, tenant, challenge, input.response) : matchSecondFactor(deps, user, await deps.store.mfa.findTotp(user.id), input.code),
  )
  if (matched === 'replay') {
    await settle(deps, guess, 'unjudged')
    throw invalidCode()
  }
  if (!matched || matched.kind === 'counter-regressed') {
    const detail = { ...about.detail, stage: 'login', ...(matched && { passkeyId: matched.passkey.id }) }
    await settle(deps, guess, 'failure', auditEvent(deps, matched ? 'passkey.counter_regressed' : 'mfa.failed', actor, { ...about, detail }))
    throw invalidCode()
  }
  // A right code: the challenge first (one session per challenge, however many right codes
  // race), then the code (once across challenges). Losing either race is no guess: not counted.
  const won = await judged(deps, guess, async () => {
    if (!(await deps.store.mfa.spendChallenge(challenge.id, now, MFA_CHALLENGE_MAX_ATTEMPTS))) return false
    if (matched.kind !== 'passkey') return spendSecondFactor(deps, user, tenant, matched, 'login', actor.language)
    return deps.store.passkeys.recordUse(matched.passkey.id, matched.newCounter, now)
  })
  if (!won) {
    await settle(deps, guess, 'unjudged')
    throw invalidCode()
  }
  if (matched.kind === 'recovery') await audit(deps, 'mfa.recovery_code_used', actor, about)
  return {
    user,
    rememberMe: challenge.rememberMe,
    secondFactor: matched.kind,
    providerId: challenge.providerId,
    amr: [challenge.providerId === null ? 'pwd' : 'fed', ...(matched.kind === 'passkey' ? passkeyAmr(matched.passkey, matched.userVerified) : ['otp'])],
    deviceCookie: guess.device ? input.deviceCookie! : issueDeviceCookie(deps, tenant.id, user.email),
    limitUpdates: sessionLimitUpdates(settleGuess(deps, guess, 'success')),
  }
}

