// Adding a passkey (product spec §19): the signed-in user, with step-up (§18), asks for creation
// options, the browser's authenticator makes a credential, and the response is verified by
// @simplewebauthn/server against the challenge, the tenant's RP ID and origins. A challenge is
// bound to its tenant and user and spent by its first use; a credential id is registered once
// (the options exclude the user's own); a user holds at most 20; the user is mailed.
import { generateRegistrationOptions, verifyRegistrationResponse, type PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server'
import { isoBase64URL } from '@simplewebauthn/server/helpers'
import { auditEvent, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { AppError, badRequest, conflict } from '../errors'
import { newOutboxMessage } from '../mail/outbox'
import { passkeyAddedMail } from '../mail/templates'
import type { Caller } from '../sessions/signed-in-user'
import { requireRecentAuth } from '../sessions/recent-auth'
import { validateName, tenantTitle } from '../tenants/tenants'
import type { Passkey } from '../types'
import { authenticatorName } from './aaguids'
import { CEREMONY_TTL_MS, MAX_PASSKEYS, registrationResponse, toPasskeyView, type PasskeyView } from './credentials'
import { relyingPartyOf } from '../tenants/relying-party'

type RegistrationDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'mailQueued'>

const tooMany = () => conflict(`At most ${MAX_PASSKEYS} passkeys per user: remove one first`)
/** Any failure of a registration response: never says which check failed (the client's own
 *  values, an origin or challenge, are not repeated back). */
const registrationRefused = () => new AppError(400, 'invalid_request', 'The passkey could not be verified: start again with POST /passkeys/register/options')

/** POST /passkeys/register/options: creation options for the caller's next passkey. */
export async function startPasskeyRegistration(deps: RegistrationDeps, caller: Caller): Promise<{ challengeId: string; options: PublicKeyCredentialCreationOptionsJSON }> {
  requireRecentAuth(deps, caller)
  const { user, tenant } = caller
  const held = await deps.store.passkeys.listByUser(user.id)
  if (held.length >= MAX_PASSKEYS) throw tooMany()
  const rp = relyingPartyOf(deps.config, tenant)
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.rpId,
    userName: user.email,
    userID: new TextEncoder().encode(user.id),
    userDisplayName: `${user.firstName} ${user.lastName}`,
    timeout: CEREMONY_TTL_MS,
    attestationType: 'none',
    excludeCredentials: held.map((p) => ({ id: p.credentialId, transports: JSON.parse(p.transports) as string[] })),
    // A discoverable credential, so that it signs in without an e-mail (and with autofill).
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  })
  const now = deps.clock.now()
  const challengeId = Bun.randomUUIDv7()
  await deps.store.passkeys.createChallenge({ id: challengeId, tenantId: tenant.id, userId: user.id, purpose: 'register', challenge: options.challenge, createdAt: now, expiresAt: now + CEREMONY_TTL_MS, spentAt: null })
  return { challengeId, options }
}

/** POST /passkeys/register: verifies the new credential and adds it. */
export async function finishPasskeyRegistration(
  deps: RegistrationDeps,
  caller: Caller,
  input: { challengeId: string; response: unknown; name?: unknown },
  actor: Actor,
): Promise<PasskeyView> {
  requireRecentAuth(deps, caller)
  const { user, tenant } = caller
  const response = registrationResponse(input.response)
  const name = input.name === undefined ? undefined : validateName('name', input.name)
  const now = deps.clock.now()
  // Spent by its first use, whatever comes of it.
  const challenge = await deps.store.passkeys.spendChallenge(input.challengeId, tenant.id, 'register', now)
  if (!challenge || challenge.userId !== user.id) throw registrationRefused()
  const rp = relyingPartyOf(deps.config, tenant)
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>
  try {
    verification = await verifyRegistrationResponse({ response, expectedChallenge: challenge.challenge, expectedOrigin: rp.origins, expectedRPID: rp.rpId, requireUserVerification: false })
  } catch {
    throw registrationRefused()
  }
  if (!verification.verified) throw registrationRefused()
  const info = verification.registrationInfo
  const passkey: Passkey = {
    id: Bun.randomUUIDv7(),
    tenantId: tenant.id,
    userId: user.id,
    credentialId: info.credential.id,
    publicKey: isoBase64URL.fromBuffer(info.credential.publicKey),
    counter: info.credential.counter,
    transports: JSON.stringify(info.credential.transports ?? []),
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
    aaguid: info.aaguid,
    name: name ?? authenticatorName(info.aaguid) ?? 'Passkey',
    createdAt: now,
    lastUsedAt: null,
  }
  const mail = newOutboxMessage({
    tenantId: tenant.id,
    kind: 'passkey-added',
    recipient: user.email,
    content: passkeyAddedMail({ tenantName: tenantTitle(tenant), firstName: user.firstName, passkeyName: passkey.name, at: now, language: actor.language }),
    now,
  })
  const added = await deps.store.passkeys.insert({
    passkey,
    max: MAX_PASSKEYS,
    mail,
    audit: auditEvent(deps, 'passkey.added', actor, { tenantId: tenant.id, userId: user.id, detail: { passkeyId: passkey.id, deviceType: passkey.deviceType, aaguid: passkey.aaguid } }),
  })
  if (added === 'too-many') throw tooMany()
  if (added === 'taken') throw conflict('This passkey is registered already')
  deps.mailQueued.notify()
  return toPasskeyView(passkey)
}

/** A passkey's name as typed (shown in the user's list and in the mail): one line, 1 to 100 characters. */
export const validatePasskeyName = (raw: unknown) => {
  if (typeof raw !== 'string') throw badRequest('name must be a string')
  return validateName('name', raw)
}
