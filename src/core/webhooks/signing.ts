// Signing as Standard Webhooks says (standardwebhooks.com), with its own library, so what a
// receiver verifies with the spec's libraries is exactly what was computed here: `v1,` +
// base64 HMAC-SHA256 of `id.timestamp.body` under a `whsec_` secret. During a rotation the
// previous secret signs too (both signatures, space-separated), so a receiver still holding it
// keeps verifying until it has the new one.
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { seal, unseal } from '../secrets'
import type { WebhookEndpoint } from './types'

/** How long the previous secret keeps signing after a rotation. */
export const PREVIOUS_SECRET_WINDOW_MS = 24 * 3600_000

/** A new secret: `whsec_` + base64 of 32 random bytes. Shown once, stored only sealed. */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`

/** Sealed for this endpoint only: copied to another row it does not open (seal()'s context). */
const contextOf = (endpointId: string) => `webhook-secret:${endpointId}`
export const sealSecret = (sealingKey: string, endpointId: string, secret: string) => seal(sealingKey, contextOf(endpointId), secret)

export interface SignedHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

/** The three headers of one attempt, stamped `sentAt` (wall-clock time, which the receiver
 *  checks against its own), signed by the current secret and, if its window is still open at
 *  `now`, the previous one. */
export function signDelivery(sealingKey: string, endpoint: WebhookEndpoint, messageId: string, body: string, now: number, sentAt = now): SignedHeaders {
  const secrets = [unseal(sealingKey, contextOf(endpoint.id), endpoint.sealedSecret)]
  if (endpoint.previousSealedSecret && endpoint.previousSecretUntil !== null && endpoint.previousSecretUntil > now) {
    secrets.push(unseal(sealingKey, contextOf(endpoint.id), endpoint.previousSealedSecret))
  }
  const timestamp = new Date(sentAt)
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(sentAt / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body)).join(' '),
  }
}
