// Access-token signing keys. ES256 (P-256) rather than EdDSA: every mainstream JWT library
// and API gateway verifies it. The newest key signs; a rotated-out key stays in the JWKS
// until every token it signed has expired, then drops out.
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { audit, CLI_ACTOR, type Actor } from './audit'
import type { Clock } from './clock'
import type { Deps } from './deps'
import { randomToken } from './secrets'
import type { SigningKeyStore } from './store'
import type { JsonWebKey, SigningKeyRecord } from './types'

export function generateSigningKey(now: number): SigningKeyRecord {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const kid = randomToken(12)
  return {
    kid,
    alg: 'ES256',
    publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' },
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    createdAt: now,
    retiredAt: null,
  }
}

export async function rotateSigningKey(store: SigningKeyStore, clock: Clock): Promise<SigningKeyRecord> {
  const key = generateSigningKey(clock.now())
  await store.insertAndRetireOthers(key)
  return key
}

/** `authd keys rotate`: a new signing key, audited. */
export async function rotateKeys(deps: Pick<Deps, 'store' | 'clock'>, actor: Actor = CLI_ACTOR): Promise<SigningKeyRecord> {
  const key = await rotateSigningKey(deps.store.signingKeys, deps.clock)
  await audit(deps, 'signing_key.rotated', actor, { detail: { kid: key.kid } })
  return key
}

/** Still published: active, or retired recently enough that tokens it signed may be live. */
export function isPublished(key: SigningKeyRecord, now: number, accessTokenTtlSec: number): boolean {
  return key.retiredAt === null || key.retiredAt + accessTokenTtlSec * 1000 > now
}

export interface ActiveSigningKey {
  kid: string
  privateKey: KeyObject
}

/**
 * The keys as the server uses them, re-read from the store at most every `reloadMs` so a
 * `authd keys rotate` from the CLI (or another instance) is picked up without a restart.
 */
export class KeyRing {
  private loadedAt = -Infinity
  private records: SigningKeyRecord[] = []
  private active: ActiveSigningKey | null = null

  constructor(
    private readonly store: SigningKeyStore,
    private readonly clock: Clock,
    private readonly accessTokenTtlSec: number,
    private readonly reloadMs = 5000,
  ) {}

  /** Makes sure a signing key exists (the first start creates one). */
  async ensureKey(): Promise<void> {
    await this.reload()
    if (!this.active) {
      await rotateSigningKey(this.store, this.clock)
      await this.reload()
    }
  }

  async signingKey(): Promise<ActiveSigningKey> {
    if (this.clock.now() - this.loadedAt > this.reloadMs || !this.active) await this.ensureKey()
    return this.active!
  }

  async jwks(): Promise<{ keys: JsonWebKey[] }> {
    if (this.clock.now() - this.loadedAt > this.reloadMs) await this.reload()
    const now = this.clock.now()
    return { keys: this.records.filter((k) => isPublished(k, now, this.accessTokenTtlSec)).map((k) => k.publicJwk) }
  }

  private async reload(): Promise<void> {
    this.records = await this.store.list()
    const newest = this.records.findLast((k) => k.retiredAt === null)
    if (newest && newest.kid !== this.active?.kid) {
      this.active = { kid: newest.kid, privateKey: createPrivateKey(newest.privateKeyPem) }
    } else if (!newest) {
      this.active = null
    }
    this.loadedAt = this.clock.now()
  }
}
