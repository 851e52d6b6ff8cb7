// Signing keys. ES256 (P-256) rather than EdDSA for access tokens: every mainstream JWT library
// and API gateway verifies it. RS256 (RSA 2048) beside it for ID tokens only: OpenID Connect's
// default, the one algorithm every relying party accepts (Discovery §3: the OP MUST offer it),
// for clients that do not ask for ES256. One key of each algorithm is active at a time; the
// newest signs, and a rotated-out key stays in the JWKS until every token it signed has
// expired, then drops out.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import type { Clock } from '../clock'
import { randomToken } from '../secrets'
import type { SigningKeyStore } from './store'
import type { JsonWebKey, SigningAlg, SigningKeyRecord } from '../types'

export const SIGNING_ALGS: readonly SigningAlg[] = ['ES256', 'RS256']

/** A random kid that does not begin with '-': operators pass it to `authd keys revoke`, where
 *  one that did (1 in 64) was read as an option. */
export function commandLineSafeKid(): string {
  for (;;) {
    const kid = randomToken(12)
    if (!kid.startsWith('-')) return kid
  }
}

export function generateSigningKey(now: number, alg: SigningAlg = 'ES256'): SigningKeyRecord {
  const { publicKey, privateKey } = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const kid = commandLineSafeKid()
  return {
    kid,
    alg,
    publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' },
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    createdAt: now,
    retiredAt: null,
    revokedAt: null,
  }
}

/** A new key for `alg`, retiring that algorithm's active key (the other algorithm's stays). */
export async function rotateSigningKey(store: SigningKeyStore, clock: Clock, alg: SigningAlg = 'ES256'): Promise<SigningKeyRecord> {
  const key = generateSigningKey(clock.now(), alg)
  await store.insertAndRetireOthers(key)
  return key
}

/** Still published: not revoked, and active or retired recently enough that tokens it signed may be live. */
export function isPublished(key: SigningKeyRecord, now: number, accessTokenTtlSec: number): boolean {
  return key.revokedAt === null && (key.retiredAt === null || key.retiredAt + accessTokenTtlSec * 1000 > now)
}

/** How often a server re-reads the key ring for signing (a rotation by the CLI or another instance). */
export const KEY_RING_RELOAD_MS = 5000

export interface ActiveSigningKey {
  kid: string
  alg: SigningAlg
  privateKey: KeyObject
}

/**
 * The keys as the server uses them, re-read from the store at most every `reloadMs` so a
 * `authd keys rotate` from the CLI (or another instance) is picked up without a restart.
 */
export class KeyRing {
  private loadedAt = -Infinity
  private records: SigningKeyRecord[] = []
  private readonly active = new Map<SigningAlg, ActiveSigningKey>()
  private readonly publicKeys = new Map<string, KeyObject>()

  constructor(
    private readonly store: SigningKeyStore,
    private readonly clock: Clock,
    private readonly accessTokenTtlSec: number,
    private readonly reloadMs = KEY_RING_RELOAD_MS,
  ) {}

  /**
   * Makes sure a key of each of `algs` is active: the first start creates them, and the first
   * start after an upgrade the RSA key. The store adds one only while none of its algorithm is
   * active, so instances starting together add one in all.
   */
  async ensureKey(algs: readonly SigningAlg[] = SIGNING_ALGS): Promise<void> {
    await this.reload()
    const missing = algs.filter((alg) => !this.active.has(alg))
    if (missing.length === 0) return
    for (const alg of missing) await this.store.insertIfNoneActive(generateSigningKey(this.clock.now(), alg))
    await this.reload()
  }

  /** The active key of `alg` (ES256: access tokens'). */
  async signingKey(alg: SigningAlg = 'ES256'): Promise<ActiveSigningKey> {
    if (this.clock.now() - this.loadedAt > this.reloadMs || !this.active.has(alg)) await this.ensureKey([alg])
    return this.active.get(alg)!
  }

  /**
   * Read fresh from the store every time: a revoked key leaves the JWKS at once. `algs` narrows
   * it (the HTTP API's JWKS lists the access-token keys only).
   */
  async jwks(algs: readonly SigningAlg[] = SIGNING_ALGS): Promise<{ keys: JsonWebKey[] }> {
    await this.reload()
    const now = this.clock.now()
    return { keys: this.records.filter((k) => algs.includes(k.alg) && isPublished(k, now, this.accessTokenTtlSec)).map((k) => k.publicJwk) }
  }

  /**
   * The public key of a published key of `alg` (for verifying tokens), or null: a token whose
   * header names an RSA key is no access token, whatever else it says. The ring re-reads the
   * store at most every reload interval, so a revocation or rotation elsewhere counts within it.
   */
  async publicKey(kid: string, alg: SigningAlg = 'ES256'): Promise<KeyObject | null> {
    const find = () => this.records.find((k) => k.kid === kid && k.alg === alg && isPublished(k, this.clock.now(), this.accessTokenTtlSec))
    if (this.clock.now() - this.loadedAt > this.reloadMs) await this.reload()
    const record = find()
    if (!record) return null
    let key = this.publicKeys.get(kid)
    if (!key) {
      key = createPublicKey({ key: record.publicJwk as never, format: 'jwk' })
      this.publicKeys.set(kid, key)
    }
    return key
  }

  private async reload(): Promise<void> {
    this.records = await this.store.list()
    for (const alg of SIGNING_ALGS) {
      const newest = this.records.findLast((k) => k.alg === alg && k.retiredAt === null && k.revokedAt === null)
      if (!newest) this.active.delete(alg)
      else if (newest.kid !== this.active.get(alg)?.kid) this.active.set(alg, { kid: newest.kid, alg, privateKey: createPrivateKey(newest.privateKeyPem) })
    }
    this.loadedAt = this.clock.now()
  }
}
