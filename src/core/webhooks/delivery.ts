// One delivery attempt, and what its outcome means: a 2xx within the timeout is a success;
// anything else (an error, a timeout, a redirect, a refused address) is retried with
// exponential back-off and jitter until three days after the delivery was queued, then it is
// dead (`redeliver` queues it again). An endpoint whose every attempt has failed for five days
// is disabled and the tenant's admins are mailed.
import { checkServerIdentity } from 'node:tls'
import type { Logger } from '../../log'
import type { Deps } from '../deps'
import { auditEvent } from '../audit/audit'
import { webhookDisabledMail } from '../mail/templates'
import { newOutboxMessage } from '../mail/outbox'
import { RefusedAddress, resolveTarget, type Resolver } from './address'
import { payloadOf } from './events'
import { signDelivery } from './signing'
import type { AttemptResult, ClaimedDelivery } from './types'

/** The whole attempt's deadline: resolving the host name, connecting, sending, the answer. */
export const ATTEMPT_TIMEOUT_MS = 10_000
/** A worker that dies mid-attempt leaves its delivery to another after this: comfortably longer
 *  than an attempt can last (everything in it, resolution included, is cut at
 *  ATTEMPT_TIMEOUT_MS), short enough to resume soon after a crash. Should an attempt outlast it
 *  all the same (a process paused, a database slow to answer), its outcome is dropped, not
 *  written over the next claim's: see attemptDelivery. */
export const DELIVERY_LEASE_MS = 15_000
export const RETRY_FOR_MS = 3 * 86400_000
export const DISABLE_AFTER_FAILING_MS = 5 * 86400_000
export const KEPT_RESPONSE_BYTES = 1024
const FIRST_RETRY_MS = 5_000
const MAX_RETRY_DELAY_MS = 6 * 3600_000

/** Exponential from 5 s (doubling per attempt, at most 6 h), less a random part of up to half:
 *  so the first retry comes within 5 s, and endpoints that failed together do not retry in step. */
export function retryDelayMs(attempts: number, random = Math.random()): number {
  const full = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1))
  return Math.round(full * (0.5 + random / 2))
}

export type WebhookDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'serverKeys' | 'mailQueued'>

/** What an attempt came to; 'requeued': cut short by a shutdown, put back uncounted; 'lost':
 *  the attempt outlasted its claim and its outcome was dropped. */
export type AttemptOutcome = 'succeeded' | 'failed' | 'dead' | 'requeued' | 'lost'

/** Sends one attempt of a claimed delivery and records its outcome. */
export async function attemptDelivery(
  deps: WebhookDeps,
  claimed: ClaimedDelivery,
  options: { resolve: Resolver; logger: Logger; timeoutMs?: number; stopping?: AbortSignal },
): Promise<AttemptOutcome> {
  const { delivery, event, endpoint } = claimed
  const { refusedAddress, refusedDetail, ...result } = await send(deps, claimed, options)
  const about = { deliveryId: delivery.id, endpointId: endpoint.id, eventType: event.type, attempt: delivery.attempts, status: result.status }
  // The claim's lease is its token: an outcome is written only while this attempt still holds
  // the delivery, so an attempt that outlasted its lease neither puts back nor overwrites the
  // attempt of the worker that took the delivery over.
  const claim = delivery.leaseUntil!
  const lost = () => {
    options.logger.log('warn', 'webhook attempt outlasted its claim: its outcome is dropped (another attempt has the delivery)', about)
    return 'lost' as const
  }
  if (result.status !== null && result.status >= 200 && result.status < 300) {
    if (!(await deps.store.webhooks.recordSuccess(delivery.id, endpoint.id, claim, result))) return lost()
    options.logger.log('info', 'webhook delivered', about)
    return 'succeeded'
  }
  const now = deps.clock.now()
  if (options.stopping?.aborted && result.status === null) {
    // Not the endpoint's failure: another instance, or this one after its restart, sends it now.
    await deps.store.webhooks.requeue(delivery.id, claim, now)
    return 'requeued'
  }
  const dead = now >= delivery.giveUpAt
  const retryAt = dead ? null : now + retryDelayMs(delivery.attempts)
  const failingSince = await deps.store.webhooks.recordFailure(delivery.id, endpoint.id, claim, result, retryAt)
  if (failingSince === null) return lost()
  // (the refused address, or the resolver's error, is the operator's to read, in this line
  // only: result.error, which the tenant lists, names neither)
  options.logger.log('warn', dead ? 'webhook delivery dead (authd webhooks redeliver sends it again)' : 'webhook delivery failed, will retry', { ...about, error: result.error, ...refusedDetail && { refusedBecause: refusedDetail }, ...refusedAddress && { refusedAddress: refusedAddress.address, refusedRange: refusedAddress.range } })
  if (now - failingSince >= DISABLE_AFTER_FAILING_MS) await disableFailingEndpoint(deps, claimed, failingSince, options.logger)
  return dead ? 'dead' : 'failed'
}

/** An attempt's result, and for a refused address which one it was (logged, never stored). */
type SentAttempt = AttemptResult & { refusedAddress?: RefusedAddress['address']; refusedDetail?: string }

async function send(deps: WebhookDeps, { event, endpoint }: ClaimedDelivery, options: { resolve: Resolver; timeoutMs?: number; stopping?: AbortSignal }): Promise<SentAttempt> {
  const at = deps.clock.now()
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS
  const failed = (error: string): AttemptResult => ({ at, status: null, error: error.slice(0, 500), response: null })
  // One deadline for the whole attempt, resolution included (a slow DNS answer must not make
  // an attempt outlast its claim).
  const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(options.stopping ? [options.stopping] : [])])
  const cutShort = () => (options.stopping?.aborted ? 'authd stopped during the attempt' : `no answer within ${timeoutMs / 1000} s`)
  let target
  try {
    target = await untilAborted(resolveTarget(endpoint.url, deps.config.webhooks, options.resolve), signal)
  } catch (error) {
    if (signal.aborted) return failed(`${cutShort()} (resolving ${new URL(endpoint.url).hostname})`)
    if (error instanceof RefusedAddress) return { ...failed(`refused: ${error.message}`), refusedAddress: error.address, refusedDetail: error.detail }
    return failed(`cannot resolve: ${messageOf(error)}`)
  }
  const body = payloadOf(event)
  // The timestamp is checked against the receiver's wall clock (5 minutes' tolerance), so it is the real time.
  const headers = { ...signDelivery(deps.serverKeys.sealing, endpoint, event.id, body, at, Date.now()), 'content-type': 'application/json', 'user-agent': 'authd-webhooks', host: new URL(endpoint.url).host }
  const hostname = target.hostname
  const post = (url: string) =>
    fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal,
      // The connection goes to the checked address; the certificate must still name the host.
      tls: { serverName: hostname, checkServerIdentity: (_: string, cert: Parameters<typeof checkServerIdentity>[1]) => checkServerIdentity(hostname, cert) },
    } as RequestInit)
  try {
    let response: Response | undefined
    for (const [i, url] of target.urls.entries()) {
      try {
        response = await post(url)
        break
      } catch (error) {
        // The next checked address, if this one could not be reached (not after a timeout).
        if (signal.aborted || i === target.urls.length - 1) throw error
      }
    }
    const answered = response!
    const kept = await firstBytes(answered, KEPT_RESPONSE_BYTES)
    const ok = answered.status >= 200 && answered.status < 300
    return { at, status: answered.status, error: ok ? null : answered.status >= 300 && answered.status < 400 ? `redirect (${answered.status}) not followed` : `answered ${answered.status}`, response: kept }
  } catch (error) {
    return failed(signal.aborted ? cutShort() : messageOf(error))
  }
}

/** The promise's value, or a rejection as soon as `signal` aborts (the resolver cannot be
 *  cancelled: its late answer is ignored). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/** At most `limit` bytes of the answer, read no further (a huge or endless answer costs nothing). */
async function firstBytes(response: Response, limit: number): Promise<string | null> {
  if (!response.body) return null
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    while (size < limit) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.byteLength
    }
  } catch {
    // what arrived before the error is kept
  } finally {
    reader.cancel().catch(() => {})
  }
  const bytes = Buffer.concat(chunks).subarray(0, limit)
  return bytes.length === 0 ? null : new TextDecoder('utf-8', { fatal: false }).decode(bytes)
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500)

async function disableFailingEndpoint(deps: WebhookDeps, { endpoint }: ClaimedDelivery, failingSince: number, logger: Logger) {
  const now = deps.clock.now()
  const tenant = await deps.store.tenants.get(endpoint.tenantId)
  const admins = await deps.store.webhooks.adminAddresses(endpoint.tenantId)
  const mails = admins.map((admin) =>
    newOutboxMessage({
      tenantId: endpoint.tenantId,
      kind: 'webhook-disabled',
      recipient: admin.email,
      content: webhookDisabledMail({ tenantName: tenant?.name ?? endpoint.tenantId, firstName: admin.firstName, url: endpoint.url, failingSince, endpointId: endpoint.id }),
      now,
    }),
  )
  // (the audit event is committed with the disabling: none without the other, and a reader
  // that sees the endpoint disabled sees why)
  const disabled = auditEvent(deps, 'webhook_endpoint.disabled', { ip: null, userAgent: 'authd-webhooks' }, { tenantId: endpoint.tenantId, detail: { endpointId: endpoint.id, failingSince, adminsMailed: mails.length } })
  if (await deps.store.webhooks.disableEndpoint(endpoint.id, now, 'failing for 5 days', mails, disabled)) {
    deps.mailQueued.notify()
    logger.log('warn', 'webhook endpoint disabled: failing for 5 days; its tenant admins were mailed', { endpointId: endpoint.id, tenantId: endpoint.tenantId, admins: mails.length })
  }
}
