// What webhooks are made of: endpoints (where a tenant's events go), events (what happened,
// written by the storage in the same transaction as the change) and deliveries (one event to
// one endpoint, retried until it succeeds or dies).

export interface WebhookEndpoint {
  id: string
  tenantId: string
  url: string
  /** Event types or patterns (`user.*`, `*`), as given. */
  eventTypes: string[]
  description: string
  sealedSecret: string
  /** After a rotation the previous secret signs too, until `previousSecretUntil`. */
  previousSealedSecret: string | null
  previousSecretUntil: number | null
  disabledAt: number | null
  disabledReason: string | null
  /** Since when every attempt has failed; null after a success. */
  failingSince: number | null
  createdAt: number
  updatedAt: number
}

export interface WebhookEvent {
  /** Also the `webhook-id` of every delivery of the event: stable across retries. */
  id: string
  tenantId: string
  type: string
  /** The payload's `data`, as JSON text. */
  data: string
  createdAt: number
}

export type WebhookDeliveryStatus = 'pending' | 'sending' | 'succeeded' | 'dead'

export interface WebhookDelivery {
  id: string
  tenantId: string
  endpointId: string
  eventId: string
  status: WebhookDeliveryStatus
  attempts: number
  nextAttemptAt: number
  leaseUntil: number | null
  giveUpAt: number
  lastAttemptAt: number | null
  lastStatus: number | null
  lastError: string | null
  lastResponse: string | null
  createdAt: number
  deliveredAt: number | null
}

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  delivery: WebhookDelivery
  event: WebhookEvent
  endpoint: WebhookEndpoint
}

/** What one attempt came to. */
export interface AttemptResult {
  at: number
  status: number | null
  error: string | null
  /** At most 1 KiB of the answer. */
  response: string | null
}
