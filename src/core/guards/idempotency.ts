// Idempotency-Key (the admin API's POST /users): a client that retries a create after a lost
// answer gets the first answer, not a second user or a 409 for its own address. The key is
// claimed before the work runs, so two copies of one request in flight create one user; the
// second is told the first is still running. Failed requests free the key (nothing was
// created, so a retry must run again). The first answer can carry a setup token: it is
// stored sealed (secrets.ts) and erased with the user.
import type { Deps } from '../deps'
import { badRequest, idempotencyConflict } from '../errors'
import { seal, sha256, unseal } from '../secrets'

const RETENTION_MS = 24 * 60 * 60 * 1000
/** A claim still unanswered after this long belongs to a request whose process died. */
const ABANDONED_AFTER_MS = 60 * 1000
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

export interface Answer<T> {
  statusCode: number
  body: T
  /** The user the request created, so that erasing the user erases this answer too. */
  userId: string | null
}

/**
 * Runs `work` once per (tenant, key) within 24 hours. `request` is what makes two requests
 * the same (method, path, body, secrets left out); another request with a key already used is
 * a 409.
 */
export async function withIdempotencyKey<T>(
  deps: Pick<Deps, 'store' | 'clock' | 'serverKeys'>,
  scope: { tenantId: string; key: string | undefined; request: unknown },
  work: () => Promise<Answer<T>>,
): Promise<Answer<T> & { replayed: boolean }> {
  const { tenantId, key } = scope
  if (key === undefined) return { ...(await work()), replayed: false }
  if (!KEY_PATTERN.test(key)) throw badRequest('Idempotency-Key must be 1 to 255 visible ASCII characters')
  const requestHash = sha256(JSON.stringify(withoutSecrets(scope.request)))
  const now = deps.clock.now()
  const held = await deps.store.idempotency.claim({ tenantId, key, requestHash, createdAt: now }, { staleBefore: now - RETENTION_MS, abandonedBefore: now - ABANDONED_AFTER_MS })
  if (held) {
    if (held.requestHash !== requestHash) throw idempotencyConflict('This Idempotency-Key was used for a different request')
    if (held.statusCode === null || held.sealedResponse === null) throw idempotencyConflict('A request with this Idempotency-Key is still in progress; retry later')
    const body = JSON.parse(unseal(deps.serverKeys.sealing, sealContext(tenantId, key), held.sealedResponse)) as T
    return { statusCode: held.statusCode, body, userId: held.userId, replayed: true }
  }
  let answer: Answer<T>
  try {
    answer = await work()
  } catch (error) {
    await deps.store.idempotency.release(tenantId, key)
    throw error
  }
  const sealedResponse = seal(deps.serverKeys.sealing, sealContext(tenantId, key), JSON.stringify(answer.body))
  await deps.store.idempotency.complete(tenantId, key, { userId: answer.userId, statusCode: answer.statusCode, sealedResponse })
  return { ...answer, replayed: false }
}

const sealContext = (tenantId: string, key: string) => `idempotency:${tenantId}:${key}`

/** Fields whose values never enter a fingerprint: a fast hash of a body holding a password
 *  would let anyone with a backup test guesses at SHA-256 speed (product spec §18). */
const SECRET_FIELDS = new Set(['password'])

/**
 * The request as fingerprinted: a secret field counts by its presence only. Two requests that
 * differ only in a password are then "the same request" for 24 hours: the retry gets the
 * first answer (the user made with the first password), as a retry should.
 */
function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELDS.has(k) ? v !== undefined : withoutSecrets(v)]))
}
