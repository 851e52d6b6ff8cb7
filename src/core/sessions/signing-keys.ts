// `authd keys rotate` and `authd keys revoke`: the operator's changes to the key ring (key-ring.ts).
import { audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { notFoundById } from '../errors'
import { generateSigningKey, KEY_RING_RELOAD_MS, rotateSigningKey, SIGNING_ALGS } from './key-ring'
import type { SigningAlg, SigningKeyRecord } from '../types'

export * from './key-ring'

/** `authd keys rotate`: a new key of each algorithm, each audited; access tokens' (ES256) first. */
export async function rotateKeys(deps: Pick<Deps, 'store' | 'clock'>, actor: Actor = CLI_ACTOR): Promise<SigningKeyRecord[]> {
  const keys: SigningKeyRecord[] = []
  for (const alg of SIGNING_ALGS) {
    const key = await rotateSigningKey(deps.store.signingKeys, deps.clock, alg)
    await audit(deps, 'signing_key.rotated', actor, { detail: { kid: key.kid, alg } })
    keys.push(key)
  }
  return keys
}

/**
 * `authd keys revoke KID`, for a leaked key: out of the JWKS at once (so no verifier that
 * refetches it accepts a token the key signed, genuine or forged), a new active key of its
 * algorithm if it was the active one, and every session it signed an access token for ended
 * (an RSA key signs ID tokens only, so none). Servers re-read the
 * key ring every KEY_RING_RELOAD_MS, so one may still sign with the key until then: the
 * sessions are swept once more after that interval has passed.
 */
export async function revokeSigningKey(
  deps: Pick<Deps, 'store' | 'clock'>,
  kid: string,
  actor: Actor = CLI_ACTOR,
  settleMs = KEY_RING_RELOAD_MS + 1000,
): Promise<{ kid: string; alg: SigningAlg; replacementKid: string | null; sessionsRevoked: number }> {
  const key = (await deps.store.signingKeys.list()).find((k) => k.kid === kid)
  if (!key) throw notFoundById('Signing key', kid)
  const replacement = key.retiredAt === null && key.revokedAt === null ? generateSigningKey(deps.clock.now(), key.alg) : null
  const first = await deps.store.signingKeys.revoke(kid, deps.clock.now(), replacement)
  if (!first) throw notFoundById('Signing key', kid)
  let late = 0
  // (an RSA key signs no access token, so it has no session to sweep again)
  if (key.alg === 'ES256') {
    await Bun.sleep(settleMs)
    late = await deps.store.signingKeys.revokeSessionsSignedBy(kid, deps.clock.now())
  }
  const sessionsRevoked = first.sessionsRevoked + late
  await audit(deps, 'signing_key.revoked', actor, { detail: { kid, alg: key.alg, replacementKid: replacement?.kid ?? null, sessionsRevoked } })
  return { kid, alg: key.alg, replacementKid: replacement?.kid ?? null, sessionsRevoked }
}

