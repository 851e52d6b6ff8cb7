// private_key_jwt (RFC 7523 §2.2 and §3, OpenID Connect Core §9, product spec §26): a client
// given a JWKS at creation proves itself with a JWT it signs, never with a shared secret, so
// authd holds nothing a thief of its database could authenticate with. Each assertion is spent
// once: its jti is kept until it expires, and the same assertion sent again is refused.
import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose'
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

/** The bits of an RSA modulus as written (base64url), leading zero bytes not counted. */
function modulusBits(n: string): number {
  const bytes = Buffer.from(n, 'base64url')
  const first = bytes.findIndex((byte) => byte !== 0)
  return first < 0 ? 0 : (bytes.length - first - 1) * 8 + (32 - Math.clz32(bytes[first]!))
}

/** The algorithm a key is imported with to be checked (its own `alg` if it names one). */
function importAlgOf(key: Record<string, unknown>, index: number): string {
  const where = `jwks.keys[${index}]`
  if (key.kty === 'RSA') {
    if (typeof key.n !== 'string' || modulusBits(key.n) < MIN_RSA_BITS) throw badRequest(`${where} must be an RSA key of at least ${MIN_RSA_BITS} bits`)
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
  const kids = new Set<unknown>()
  for (const [index, key] of keys.entries()) {
    const where = `jwks.keys[${index}]`
    if (typeof key !== 'object' || key === null || Array.isArray(key)) throw badRequest(`${where} must be a JSON Web Key`)
    const members = key as Record<string, unknown>
    // (said without echoing anything of the key: it is a secret the operator must now replace)
    if (PRIVATE_MEMBERS.some((name) => name in members)) throw badRequest(`${where} is a private or symmetric key: give the public key only (and treat this one as exposed)`)
    if (members.use !== undefined && members.use !== 'sig') throw badRequest(`${where}: use must be sig`)
    if (members.kid !== undefined && (typeof members.kid !== 'string' || members.kid.length === 0 || members.kid.length > 200)) throw badRequest(`${where}: kid must be a string of 1 to 200 characters`)
    // (a key is found by its kid, or tried in turn when the assertion names none: two keys of one kid would shadow each other)
    if (members.kid !== undefined && kids.has(members.kid)) throw badRequest(`${where}: kid ${String(members.kid)} is given twice: each key needs its own`)
    kids.add(members.kid)
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

/** Whether a key can check a signature of this algorithm (its type and curve, and its own alg if it names one). */
function keyFits(key: Record<string, unknown>, alg: string): boolean {
  if (typeof key.alg === 'string' && key.alg !== alg) return false
  if (alg.startsWith('RS') || alg.startsWith('PS')) return key.kty === 'RSA'
  if (alg === 'EdDSA' || alg === 'Ed25519') return key.kty === 'OKP' && key.crv === 'Ed25519'
  return key.kty === 'EC' && CURVES.EC![key.crv as string] === alg
}

/**
 * RFC 7523 §3: signed by one of the client's keys with an asymmetric algorithm (the key its
 * `kid` names, or each that fits in turn when it names none: a rotation holds two keys); `iss`
 * and `sub` the client; `aud` the issuer alone, one string (not the token endpoint, nor a list:
 * a client that took an endpoint's address from another server's metadata could be made to
 * sign for this one, the audience injection the OpenID Foundation warned of in 2025); `exp`
 * present and at most 10 minutes ahead; a `jti` not seen from this client while its assertion
 * lives. Until the signature is proven, every failure is the same invalid_client; after, the
 * answer says what is wrong, to the key's holder alone.
 */
export async function verifyClientAssertion(deps: Pick<Deps, 'store' | 'clock'>, client: OidcClient & { jwks: ClientJwks }, assertion: string, issuers: readonly string[]): Promise<void> {
  if (assertion.length > MAX_ASSERTION_LENGTH) throw invalidClient()
  const now = deps.clock.now()
  let alg: string
  let kid: unknown
  try {
    ;({ alg = '', kid } = decodeProtectedHeader(assertion))
  } catch {
    throw invalidClient()
  }
  if (!(CLIENT_ASSERTION_ALGS as readonly string[]).includes(alg)) throw invalidClient()
  const candidates = client.jwks.keys.filter((key) => (kid === undefined || key.kid === kid) && keyFits(key, alg))
  let payload: JWTPayload | null = null
  for (const key of candidates) {
    try {
      ;({ payload } = await jwtVerify(assertion, await importJWK(key as JWK, alg), {
        algorithms: [alg],
        issuer: client.id,
        subject: client.id,
        audience: [...issuers],
        currentDate: new Date(now),
        clockTolerance: CLOCK_TOLERANCE_SEC,
        requiredClaims: ['exp', 'jti'],
      }))
      break
    } catch {
      // (the next key that fits, if any)
    }
  }
  if (payload === null) throw invalidClient()
  const refuse = (why: string) => new OAuthError('invalid_client', `client assertion refused: ${why}`, 401)
  if (Array.isArray(payload.aud) && payload.aud.length !== 1) throw refuse('aud must be the issuer alone')
  if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 200) throw refuse('jti must be a string of 1 to 200 characters')
  // (rounded up: a fractional exp is still accepted until its whole second has passed)
  const expiresAt = Math.ceil(payload.exp!) * 1000
  if (expiresAt > now + MAX_ASSERTION_LIFETIME_MS) throw refuse(`exp must be at most ${MAX_ASSERTION_LIFETIME_MS / 60_000} minutes ahead`)
  // (kept past exp by the tolerance, during which the assertion is still accepted)
  if (!(await deps.store.oidc.spendClientAssertion(client.id, sha256(payload.jti), expiresAt + CLOCK_TOLERANCE_SEC * 1000, now))) throw refuse('this jti was used before (an assertion is good for one request)')
}
