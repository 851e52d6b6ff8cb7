// private_key_jwt (RFC 7523 §2.2 and §3, OpenID Connect Core §9, product spec §26): a client
// given a JWKS at creation proves itself with a JWT it signs, never with a shared secret, so
// authd holds nothing a thief of its database could authenticate with. Each assertion is spent
// once: its jti is kept until it expires, and the same assertion sent again is refused.
import { createLocalJWKSet, decodeJwt, importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose'
import type { Deps } from '../deps'
import { badRequest } from '../errors'
import { sha256 } from '../secrets'
import { invalidClient, OAuthError } from './errors'
import type { ClientJwks, OidcClient } from './types'

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

/** Asymmetric signatures only: an HMAC would need the secret this method exists to avoid, and `none` proves nothing. */
export const CLIENT_ASSERTION_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const

const MAX_KEYS = 10
const MAX_JWKS_BYTES = 64 * 1024
const MAX_ASSERTION_LENGTH = 8192
/** How far ahead an assertion may expire: a longer-lived one is a bearer credential, and its jti must be kept that long. */
const MAX_ASSERTION_LIFETIME_MS = 10 * 60_000
/** Clock difference tolerated between the client and authd. */
const CLOCK_TOLERANCE_SEC = 60
const MIN_RSA_BITS = 2048
/** The members of a public key that are kept; a private member refuses the whole set. */
const PUBLIC_MEMBERS = ['kty', 'kid', 'use', 'alg', 'n', 'e', 'crv', 'x', 'y'] as const
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']
const CURVES: Record<string, Record<string, string>> = { EC: { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }, OKP: { Ed25519: 'EdDSA' } }

/** The algorithm a key is imported with to be checked (its own `alg` if it names one). */
function importAlgOf(key: Record<string, unknown>, index: number): string {
  const where = `jwks.keys[${index}]`
  if (key.kty === 'RSA') {
    if (typeof key.n !== 'string' || Buffer.from(key.n, 'base64url').length * 8 < MIN_RSA_BITS) throw badRequest(`${where} must be an RSA key of at least ${MIN_RSA_BITS} bits`)
    return typeof key.alg === 'string' ? key.alg : 'RS256'
  }
  const byCurve = CURVES[key.kty as string]
  if (!byCurve) throw badRequest(`${where} must be an RSA, EC or OKP (Ed25519) public key`)
  const alg = byCurve[key.crv as string]
  if (!alg) throw badRequest(`${where}: the curve must be ${Object.keys(byCurve).join(', ')}`)
  return typeof key.alg === 'string' ? key.alg : alg
}

/**
 * A client's JWKS as `--jwks-file` or the admin API gives it: 1 to 10 public signing keys
 * (RSA of 2048 bits or more, EC P-256/384/521, Ed25519), each importable. A private or
 * symmetric key is refused, naming no part of it; only the public members are kept.
 */
export async function validateClientJwks(raw: unknown): Promise<ClientJwks> {
  const shape = `jwks must be a JSON Web Key Set ({"keys": [...]}) of 1 to ${MAX_KEYS} public keys`
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest(shape)
  if (JSON.stringify(raw).length > MAX_JWKS_BYTES) throw badRequest(`jwks must be at most ${MAX_JWKS_BYTES / 1024} KiB`)
  const keys = (raw as { keys?: unknown }).keys
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_KEYS) throw badRequest(shape)
  const kept: ClientJwks['keys'] = []
  for (const [index, key] of keys.entries()) {
    const where = `jwks.keys[${index}]`
    if (typeof key !== 'object' || key === null || Array.isArray(key)) throw badRequest(`${where} must be a JSON Web Key`)
    const members = key as Record<string, unknown>
    // (said without echoing anything of the key: it is a secret the operator must now replace)
    if (PRIVATE_MEMBERS.some((name) => name in members)) throw badRequest(`${where} is a private or symmetric key: give the public key only (and treat this one as exposed)`)
    if (members.use !== undefined && members.use !== 'sig') throw badRequest(`${where}: use must be sig`)
    if (members.kid !== undefined && (typeof members.kid !== 'string' || members.kid.length === 0 || members.kid.length > 200)) throw badRequest(`${where}: kid must be a string of 1 to 200 characters`)
    const alg = importAlgOf(members, index)
    if (!(CLIENT_ASSERTION_ALGS as readonly string[]).includes(alg)) throw badRequest(`${where}: alg must be one of ${CLIENT_ASSERTION_ALGS.join(', ')}`)
    const publicKey = Object.fromEntries(PUBLIC_MEMBERS.filter((name) => members[name] !== undefined).map((name) => [name, members[name]]))
    // An Ed25519 key signs as `EdDSA` or as `Ed25519` (RFC 9864's name, which openid-client
    // sends): kept without alg, so either header finds it.
    if (members.kty === 'OKP') delete publicKey.alg
    try {
      await importJWK(publicKey as JWK, alg)
    } catch {
      throw badRequest(`${where} is not a valid ${String(members.kty)} public key for ${alg}`)
    }
    kept.push(publicKey)
  }
  return { keys: kept }
}

/**
 * The client an assertion says it is (its `sub`, which RFC 7523 §3 makes the client_id), read
 * before anything is verified: only to find the keys to verify it with.
 */
export function assertedClientId(assertion: string): string | null {
  if (assertion.length > MAX_ASSERTION_LENGTH) return null
  try {
    const { sub } = decodeJwt(assertion)
    return typeof sub === 'string' && sub.length > 0 ? sub : null
  } catch {
    return null
  }
}

/**
 * RFC 7523 §3: signed by one of the client's keys with an asymmetric algorithm; `iss` and `sub`
 * the client; `aud` one of `audiences` (the issuer, or the endpoint's URL as OpenID Connect Core
 * §9 has it); `exp` present and at most 10 minutes ahead; a `jti` not seen from this client
 * while its assertion lives. Until the signature is proven, every failure is the same
 * invalid_client; after, the answer says what is wrong, to the key's holder alone.
 */
export async function verifyClientAssertion(deps: Pick<Deps, 'store' | 'clock'>, client: OidcClient & { jwks: ClientJwks }, assertion: string, audiences: readonly string[]): Promise<void> {
  if (assertion.length > MAX_ASSERTION_LENGTH) throw invalidClient()
  const now = deps.clock.now()
  let payload: JWTPayload
  try {
    ;({ payload } = await jwtVerify(assertion, createLocalJWKSet(client.jwks as { keys: JWK[] }), {
      algorithms: [...CLIENT_ASSERTION_ALGS],
      issuer: client.id,
      subject: client.id,
      audience: [...audiences],
      currentDate: new Date(now),
      clockTolerance: CLOCK_TOLERANCE_SEC,
      requiredClaims: ['exp', 'jti'],
    }))
  } catch {
    throw invalidClient()
  }
  const refuse = (why: string) => new OAuthError('invalid_client', `client assertion refused: ${why}`, 401)
  if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 200) throw refuse('jti must be a string of 1 to 200 characters')
  const expiresAt = payload.exp! * 1000
  if (expiresAt > now + MAX_ASSERTION_LIFETIME_MS) throw refuse(`exp must be at most ${MAX_ASSERTION_LIFETIME_MS / 60_000} minutes ahead`)
  // (kept past exp by the tolerance, during which the assertion is still accepted)
  if (!(await deps.store.oidc.spendClientAssertion(client.id, sha256(payload.jti), expiresAt + CLOCK_TOLERANCE_SEC * 1000, now))) throw refuse('this jti was used before (an assertion is good for one request)')
}
