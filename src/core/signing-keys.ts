// Access-token signing keys. ES256 (P-256) rather than EdDSA: every mainstream JWT library
// and API gateway verifies it. The newest key signs; a rotated-out key stays in the JWKS
// until every token it signed has expired, then drops out.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { audit, CLI_ACTOR, type Actor } from './audit'
import type { Clock } from './clock'
import type { Deps } from './deps'
import { notFoundById } from './errors'
import { randomToken } from './secrets'
import type { SigningKeyStore } from './store'
import type { JsonWebKey, SigningKeyRecord } from './types'

/** A random kid that does not begin with '-': operators pass it to `authd keys revoke`, where
 *  one that did (1 in 64) was read as an option. */
export function commandLineSafeKid(): string {
  for (;;) {
    const kid = randomToken(12)
    if (!kid.startsWith('-')) return kid
  }
}

export function generateSigningKey(now: number): SigningKeyRecord {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const kid = commandLineSafeKid()
  return {
    kid,
    alg: 'ES256',
    publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' },
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    createdAt: now,
    retiredAt: null,
    revokedAt: null,
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

/**
 * `authd keys revoke KID`, for a leaked key: out of the JWKS at once (so no verifier that
 * refetches it accepts a token the key signed, genuine or forged), a new active key if it was
 * the active one, and every session it signed an access token for ended. Servers re-read the
 * key ring every KEY_RING_RELOAD_MS, so one may still sign with the key until then: the
 * sessions are swept once more after that interval has passed.
 */
export async function revokeSigningKey(
  deps: Pick<Deps, 'store' | 'clock'>,
  kid: string,
  actor: Actor = CLI_ACTOR,
  settleMs = KEY_RING_RELOAD_MS + 1000,
): Promise<{ kid: string; replacementKid: string | null; sessionsRevoked: number }> {
  const key = (await deps.store.signingKeys.list()).find((k) => k.kid === kid)
  if (!key) throw notFoundById('Signing key', kid)
  const replacement = key.retiredAt === null && key.revokedAt === null ? generateSigningKey(deps.clock.now()) : null
  const first = await deps.store.signingKeys.revoke(kid, deps.clock.now(), replacement)
  if (!first) throw notFoundById('Signing key', kid)
  await Bun.sleep(settleMs)
  const late = await deps.store.signingKeys.revokeSessionsSignedBy(kid, deps.clock.now())
  const sessionsRevoked = first.sessionsRevoked + late
  await audit(deps, 'signing_key.revoked', actor, { detail: { kid, replacementKid: replacement?.kid ?? null, sessionsRevoked } })
  return { kid, replacementKid: replacement?.kid ?? null, sessionsRevoked }
}

/** Still published: not revoked, and active or retired recently enough that tokens it signed may be live. */
export function isPublished(key: SigningKeyRecord, now: number, accessTokenTtlSec: number): boolean {
  return key.revokedAt === null && (key.retiredAt === null || key.retiredAt + accessTokenTtlSec * 1000 > now)
}

/** How often a server re-reads the key ring for signing (a rotation by the CLI or another instance). */
export const KEY_RING_RELOAD_MS = 5000

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
  private readonly publicKeys = new Map<string, KeyObject>()

  constructor(
    private readonly store: SigningKeyStore,
    private readonly clock: Clock,
    private readonly accessTokenTtlSec: number,
    private readonly reloadMs = KEY_RING_RELOAD_MS,
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

  /** Read fresh from the store every time: a revoked key leaves the JWKS at once. */
  async jwks(): Promise<{ keys: JsonWebKey[] }> {
    await this.reload()
    const now = this.clock.now()
    return { keys: this.records.filter((k) => isPublished(k, now, this.accessTokenTtlSec)).map((k) => k.publicJwk) }
  }

  /**
   * The public key of a published key (for verifying tokens), or null. The ring re-reads the
   * store at most every reload interval, so a revocation or rotation elsewhere counts within it.
   */
  async publicKey(kid: string): Promise<KeyObject | null> {
    const find = () => this.records.find((k) => k.kid === kid && isPublished(k, this.clock.now(), this.accessTokenTtlSec))
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
    const newest = this.records.findLast((k) => k.retiredAt === null && k.revokedAt === null)
    if (newest && newest.kid !== this.active?.kid) {
      this.active = { kid: newest.kid, privateKey: createPrivateKey(newest.privateKeyPem) }
    } else if (!newest) {
      this.active = null
    }
    this.loadedAt = this.clock.now()
  }
}
