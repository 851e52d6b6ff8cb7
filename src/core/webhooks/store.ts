// The storage boundary of webhooks (see ../store.ts for the others). Events are not written
// through it: the storage writes them itself, by triggers in the same transaction as the
// change (the webhooks migration of each engine), so no code path can change a user and forget
// the event, and a change that rolls back leaves none.
import type { AuditEvent, OutboxMessage } from '../types'
import type { AttemptResult, ClaimedDelivery, WebhookDelivery, WebhookDeliveryStatus, WebhookEndpoint, WebhookEvent } from './types'

export interface WebhookStore {
  insertEndpoint(endpoint: WebhookEndpoint): Promise<void>
  getEndpoint(id: string): Promise<WebhookEndpoint | null>
  /** Oldest first; every tenant's when no tenant is given. */
  listEndpoints(tenantId?: string): Promise<WebhookEndpoint[]>
  /** The endpoint after the change, null if there is none. */
  updateEndpoint(id: string, changes: Partial<Omit<WebhookEndpoint, 'id' | 'tenantId' | 'createdAt'>>): Promise<WebhookEndpoint | null>
  /** Deletes the endpoint and its deliveries; false if there was none. */
  deleteEndpoint(id: string): Promise<boolean>
  /**
   * Takes up to `limit` events not yet fanned out (oldest first; on PostgreSQL, ones no other
   * instance holds), writes the deliveries `route` makes of each (given the tenant's enabled
   * endpoints) and marks the events fanned out, in one transaction. Returns how many events.
   */
  fanOut(limit: number, now: number, route: (event: WebhookEvent, endpoints: WebhookEndpoint[]) => WebhookDelivery[]): Promise<number>
  /**
   * Claims the next due delivery (pending and due, or sending with a lapsed lease) of an
   * enabled endpoint that has no other delivery in flight, of a tenant with fewer than
   * `perTenant` deliveries in flight (across instances: one tenant's slow endpoints cannot take
   * every slot), oldest due first, for one worker across instances: status 'sending', one more
   * attempt, a lease until `now + leaseMs`. Null when none is due.
   * The claimed delivery's `leaseUntil` is the claim's token: a later claim of the same
   * delivery (after the lease ran out) has a later one.
   */
  claimNext(now: number, leaseMs: number, perTenant: number): Promise<ClaimedDelivery | null>
  /** Records a 2xx: the delivery succeeded, and the endpoint is no longer failing. Only while
   *  the claim `leaseUntil` still holds it; false (nothing written) if the claim was lost. */
  recordSuccess(id: string, endpointId: string, leaseUntil: number, result: AttemptResult): Promise<boolean>
  /**
   * Records a failed attempt: pending again at `retryAt`, or dead when null; the endpoint
   * failing since this attempt if it was not already. Returns since when it has been failing;
   * null (nothing written) if the claim `leaseUntil` no longer holds the delivery.
   */
  recordFailure(id: string, endpointId: string, leaseUntil: number, result: AttemptResult, retryAt: number | null): Promise<number | null>
  /** Puts back a delivery whose attempt was cut short by a shutdown: due at `at`, the attempt
   *  not counted, the endpoint not marked failing (only while the claim `leaseUntil` holds it). */
  requeue(id: string, leaseUntil: number, at: number): Promise<void>
  /** Disables the endpoint if it is enabled, queuing `mails` and writing `audit` with it; false if it was already disabled. */
  disableEndpoint(id: string, now: number, reason: string, mails: OutboxMessage[], audit: AuditEvent): Promise<boolean>
  /** The e-mail addresses of the tenant's enabled admins. */
  adminAddresses(tenantId: string): Promise<Array<{ email: string; firstName: string }>>
  /** The endpoint's deliveries, newest first, with each one's event type. */
  listDeliveries(endpointId: string, filter: { status?: WebhookDeliveryStatus; limit: number }): Promise<Array<WebhookDelivery & { eventType: string }>>
  getDelivery(id: string): Promise<WebhookDelivery | null>
  /** Queues a dead or succeeded delivery again (due now, three more days); null if it is pending or in flight, or unknown. */
  redeliver(id: string, now: number, giveUpAt: number): Promise<(WebhookDelivery & { eventType: string }) | null>
  /** Deliveries by status, and when the oldest pending (or in flight) one was queued. */
  stats(): Promise<{ byStatus: Record<WebhookDeliveryStatus, number>; oldestPendingAt: number | null; eventsWaiting: number }>
}
