// The events authd sends (product spec §22), and which of them an endpoint subscribes to.
// The events themselves are written by the storage, by triggers in the webhooks migration of
// each engine, in the same transaction as the change they report. Each payload's `data` names
// the user by id (and, for user.* and signup.verified, by address and names), the session or
// passkey by id; never a secret.
import { badRequest } from '../errors'
import type { WebhookEndpoint, WebhookEvent } from './types'

export const WEBHOOK_EVENT_TYPES = [
  'user.created',
  'user.updated',
  'user.disabled',
  'user.enabled',
  'user.deleted',
  'user.password_changed',
  'user.mfa_enabled',
  'user.mfa_disabled',
  'passkey.added',
  'passkey.removed',
  'session.created',
  'session.ended',
  'signup.verified',
  'group.created',
  'group.updated',
  'group.deleted',
  'group.member_added',
  'group.member_removed',
  'identity.linked',
  'identity.unlinked',
] as const

const MAX_PATTERNS = 50

/**
 * Parses `user.*,session.created`: each item an event type, a family with `.*`, or `*` for
 * every event. An unknown type or family is refused, so a typo does not silently subscribe
 * to nothing.
 */
export function parseEventPatterns(raw: string | string[]): string[] {
  const items = (Array.isArray(raw) ? raw : raw.split(','))
    .map((item) => item.trim())
    .filter((item) => item !== '')
  if (items.length === 0) throw badRequest(`events must name at least one event type or pattern (such as user.*,session.created or *)`)
  if (items.length > MAX_PATTERNS) throw badRequest(`events may list at most ${MAX_PATTERNS} types or patterns`)
  for (const item of items) {
    if (!WEBHOOK_EVENT_TYPES.some((type) => matchesPattern(item, type))) {
      throw badRequest(`events: "${item.slice(0, 100)}" is no event type or pattern; the types are ${WEBHOOK_EVENT_TYPES.join(', ')} (or a family such as user.*, or *)`)
    }
  }
  return [...new Set(items)]
}

function matchesPattern(pattern: string, type: string): boolean {
  if (pattern === '*') return true
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1))
  return pattern === type
}

export const subscribes = (endpoint: Pick<WebhookEndpoint, 'eventTypes'>, type: string) => endpoint.eventTypes.some((pattern) => matchesPattern(pattern, type))

/** The request body: Standard Webhooks' `{type, timestamp, data}`, the same on every attempt. */
export const payloadOf = (event: WebhookEvent): string => JSON.stringify({ type: event.type, timestamp: new Date(event.createdAt).toISOString(), data: JSON.parse(event.data) })
