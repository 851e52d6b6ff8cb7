// Runs webhooks in the server: fans new events out into deliveries, and sends due deliveries,
// several at once. A delivery is claimed by one worker across instances, and an endpoint has
// at most one delivery in flight (claimNext skips endpoints that have one), so an endpoint that
// never answers holds one slot for the attempt's 10 s, never another endpoint's deliveries, and
// never a request: requests only write the event row. A tenant has at most a quarter of the
// slots (2 of 8) in flight, counted across instances (claimNext skips a tenant that has its
// share), so one tenant's endpoints that never answer cannot hold every slot while other
// tenants' deliveries wait: those go first, oldest due first.
import type { Logger } from '../../log'
import { subscribes } from './events'
import { attemptDelivery, DELIVERY_LEASE_MS, RETRY_FOR_MS, type AttemptOutcome, type WebhookDeps } from './delivery'
import { systemResolver, type Resolver } from './address'
import type { WebhookDelivery, WebhookEndpoint, WebhookEvent } from './types'

const FAN_OUT_BATCH = 100
const DEFAULT_CONCURRENCY = 8

/** A tenant's share of the delivery slots: a quarter, at least one (2 of the default 8). */
export const perTenantShare = (concurrency: number) => Math.max(1, Math.floor(concurrency / 4))

export interface WebhookWorkerOptions {
  resolve?: Resolver
  /** Deliveries in flight at once in this process. */
  concurrency?: number
  pollMs?: number
  timeoutMs?: number
  /** Told each attempt's outcome (not a requeue at shutdown). */
  observe?: (outcome: Exclude<AttemptOutcome, 'requeued'>) => void
}

/** The deliveries of one event: one per enabled endpoint of its tenant that subscribes to its type. */
export function deliveriesOf(event: WebhookEvent, endpoints: WebhookEndpoint[], now: number): WebhookDelivery[] {
  return endpoints
    .filter((endpoint) => endpoint.tenantId === event.tenantId && endpoint.disabledAt === null && subscribes(endpoint, event.type))
    .map((endpoint) => ({
      id: Bun.randomUUIDv7(),
      tenantId: event.tenantId,
      endpointId: endpoint.id,
      eventId: event.id,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      leaseUntil: null,
      giveUpAt: now + RETRY_FOR_MS,
      lastAttemptAt: null,
      lastStatus: null,
      lastError: null,
      lastResponse: null,
      createdAt: now,
      deliveredAt: null,
    }))
}

/** Fans out every event waiting; returns how many. */
export async function fanOutEvents(deps: Pick<WebhookDeps, 'store' | 'clock'>): Promise<number> {
  let total = 0
  for (;;) {
    const now = deps.clock.now()
    const handled = await deps.store.webhooks.fanOut(FAN_OUT_BATCH, now, (event, endpoints) => deliveriesOf(event, endpoints, now))
    total += handled
    if (handled < FAN_OUT_BATCH) return total
  }
}

export class WebhookWorker {
  private running = false
  private loop: Promise<void> | undefined
  private wakeUp: (() => void) | undefined
  /** Set by wake() while a round runs, so the round that follows starts at once. */
  private woken = false
  private readonly inFlight = new Set<Promise<void>>()
  private readonly stopping = new AbortController()

  constructor(
    private readonly deps: WebhookDeps,
    private readonly logger: Logger,
    private readonly options: WebhookWorkerOptions = {},
  ) {}

  start() {
    this.running = true
    this.loop = this.run()
  }

  wake() {
    this.woken = true
    this.wakeUp?.()
  }

  /** Stops claiming; attempts in flight are cut short and put back, due at once, uncounted
   *  (for another instance, or this one after its restart). */
  async stop() {
    this.running = false
    this.stopping.abort()
    this.wake()
    await this.loop
    await Promise.all(this.inFlight)
  }

  private async run() {
    const concurrency = this.options.concurrency ?? DEFAULT_CONCURRENCY
    const perTenant = perTenantShare(concurrency)
    while (this.running) {
      this.woken = false
      try {
        await fanOutEvents(this.deps)
        while (this.running && this.inFlight.size < concurrency) {
          const claimed = await this.deps.store.webhooks.claimNext(this.deps.clock.now(), DELIVERY_LEASE_MS, perTenant)
          if (!claimed) break
          const attempt = attemptDelivery(this.deps, claimed, { resolve: this.options.resolve ?? systemResolver, logger: this.logger, timeoutMs: this.options.timeoutMs, stopping: this.stopping.signal })
            .then((outcome) => {
              if (outcome !== 'requeued') this.options.observe?.(outcome)
            })
            .catch((error) => this.logger.log('error', 'webhook delivery error', { deliveryId: claimed.delivery.id, error: error instanceof Error ? error.message : String(error) }))
            .finally(() => {
              this.inFlight.delete(attempt)
              this.wake()
            })
          this.inFlight.add(attempt)
        }
      } catch (error) {
        // The database may be briefly unavailable; the next round tries again.
        this.logger.log('error', 'webhook worker error', { error: error instanceof Error ? error.message : String(error) })
      }
      if (!this.running) break
      if (this.woken) continue
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollMs ?? 1000)
        this.wakeUp = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
  }
}
