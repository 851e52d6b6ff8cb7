// What every passkey ceremony shares: the WebAuthn JSON forms a client sends (checked field by
// field, so a malformed body is a 400 naming the field, never a library exception), an
// assertion verified against a stored passkey (by @simplewebauthn/server: no CBOR, COSE or
// signature code of ours) with the signature-counter rule, and the passkey as users and admins
// see it.
import { verifyAuthenticationResponse, type AuthenticationResponseJSON, type RegistrationResponseJSON } from '@simplewebauthn/server'
import { isoBase64URL } from '@simplewebauthn/server/helpers'
import { badRequest } from '../errors'
import type { Passkey } from '../types'
import { authenticatorName } from './aaguids'
import type { RelyingParty } from '../tenants/relying-party'

/** A ceremony's challenge lives this long (product spec §19). */
export const CEREMONY_TTL_MS = 5 * 60_000
/** Passkeys a user may hold. */
export const MAX_PASSKEYS = 20

// Long enough for a post-quantum signature (ML-DSA-44: 2,420 bytes), which the library offers
// where the runtime verifies it; the 16 KiB body limit bounds it anyway.
const BASE64URL = /^[A-Za-z0-9_-]{1,12000}$/
const b64 = (value: unknown, field: string) => {
  if (typeof value !== 'string' || !BASE64URL.test(value)) throw badRequest(`${field} must be a base64url string`)
  return value
}
const object = (value: unknown, field: string): Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`${field} must be an object (the credential's toJSON())`)
  return value as Record<string, unknown>
}

function credentialFields(raw: unknown): Record<string, unknown> {
  const credential = object(raw, 'response')
  b64(credential.id, 'response.id')
  b64(credential.rawId, 'response.rawId')
  if (credential.type !== 'public-key') throw badRequest('response.type must be "public-key"')
  if (credential.clientExtensionResults !== undefined) object(credential.clientExtensionResults, 'response.clientExtensionResults')
  return credential
}

/** A RegistrationResponseJSON (credential.toJSON() of navigator.credentials.create). */
export function registrationResponse(raw: unknown): RegistrationResponseJSON {
  const credential = credentialFields(raw)
  const inner = object(credential.response, 'response.response')
  b64(inner.clientDataJSON, 'response.response.clientDataJSON')
  b64(inner.attestationObject, 'response.response.attestationObject')
  if (inner.transports !== undefined && (!Array.isArray(inner.transports) || !inner.transports.every((t) => typeof t === 'string' && t.length <= 32) || inner.transports.length > 10)) {
    throw badRequest('response.response.transports must be a list of transport names')
  }
  return { clientExtensionResults: {}, ...credential } as unknown as RegistrationResponseJSON
}

/** An AuthenticationResponseJSON (credential.toJSON() of navigator.credentials.get). */
export function authenticationResponse(raw: unknown): AuthenticationResponseJSON {
  const credential = credentialFields(raw)
  const inner = object(credential.response, 'response.response')
  b64(inner.clientDataJSON, 'response.response.clientDataJSON')
  b64(inner.authenticatorData, 'response.response.authenticatorData')
  b64(inner.signature, 'response.response.signature')
  if (inner.userHandle !== undefined && inner.userHandle !== null) b64(inner.userHandle, 'response.response.userHandle')
  return { clientExtensionResults: {}, ...credential } as unknown as AuthenticationResponseJSON
}

/** What an assertion proved: or why it proved nothing. */
export type AssertionCheck =
  | { ok: true; newCounter: number; userVerified: boolean }
  | { ok: false; reason: 'invalid' | 'counter-regressed' }

/**
 * Verifies an assertion made with `passkey` for `challenge`: origin, RP ID, challenge, type,
 * user presence (and user verification if `requireUserVerification`), and the signature. A
 * signature counter that does not move forward (other than 0 both times) is refused: the
 * credential may have been cloned.
 */
export async function checkAssertion(input: { response: AuthenticationResponseJSON; passkey: Passkey; challenge: string; rp: RelyingParty; requireUserVerification: boolean }): Promise<AssertionCheck> {
  const { response, passkey, rp } = input
  let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: input.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.rpId,
      // The counter rule is ours (below), so that a regression is told apart and audited.
      credential: { id: passkey.credentialId, publicKey: isoBase64URL.toBuffer(passkey.publicKey), counter: 0, transports: JSON.parse(passkey.transports) },
      requireUserVerification: input.requireUserVerification,
    })
  } catch {
    return { ok: false, reason: 'invalid' }
  }
  if (!verification.verified) return { ok: false, reason: 'invalid' }
  const { newCounter, userVerified } = verification.authenticationInfo
  if ((passkey.counter > 0 || newCounter > 0) && newCounter <= passkey.counter) return { ok: false, reason: 'counter-regressed' }
  return { ok: true, newCounter, userVerified }
}

/** A discoverable credential names its user (the userID of its registration): it must be the
 *  passkey's own user. Absent, the credential id alone identifies it. */
export function userHandleMatches(userHandle: string | null | undefined, userId: string): boolean {
  return userHandle === undefined || userHandle === null || userHandle === isoBase64URL.fromUTF8String(userId)
}

/**
 * The access tokens' `amr` for a sign-in with a passkey (RFC 8176): `hwk` for a key bound to
 * its device, `swk` for one synced between devices; `user` (presence); `mfa` when the
 * authenticator verified the user (PIN or biometrics: two factors in one gesture).
 */
export function passkeyAmr(passkey: Pick<Passkey, 'deviceType'>, userVerified: boolean): string[] {
  return [passkey.deviceType === 'singleDevice' ? 'hwk' : 'swk', 'user', ...(userVerified ? ['mfa'] : [])]
}

/** A passkey as its user and an admin see it: never the key or the credential id. */
export type PasskeyView = {
  passkeyId: string
  name: string
  createdAt: string
  lastUsedAt: string | null
  backedUp: boolean
  deviceType: string
  /** The authenticator's name, from its AAGUID, when known. */
  authenticator: string | null
}

export function toPasskeyView(passkey: Passkey): PasskeyView {
  return {
    passkeyId: passkey.id,
    name: passkey.name,
    createdAt: new Date(passkey.createdAt).toISOString(),
    lastUsedAt: passkey.lastUsedAt === null ? null : new Date(passkey.lastUsedAt).toISOString(),
    backedUp: passkey.backedUp,
    deviceType: passkey.deviceType,
    authenticator: authenticatorName(passkey.aaguid),
  }
}
