// The outbox: mail is written in the same transaction as the secret it carries, and a
// worker delivers it. A failed try is retried with exponential back-off capped at one
// minute (so mail flows again within a minute of SMTP coming back); after
// `mailMaxAttempts` the message is marked failed (dead letter, `authd mail retry`). A
// message whose secret expired is not sent late. A delivered message's body is erased.
import { tenantTitle } from '../tenants/tenants'
import type { Logger } from '../../log'
import type { Deps } from '../deps'
import type { MailKind, OutboxMessage, Tenant, User } from '../types'
import { passwordChangedMail, type MailContent } from './templates'

export interface OutgoingMail {
  id: string
  to: string
  subject: string
  text: string
  html: string
}

/** Where mail goes: SMTP, or .eml files when no SMTP is configured. */
export interface MailTransport {
  send(mail: OutgoingMail): Promise<void>
}

/** While one worker sends a message, no other takes it; after this, a dead sender's message is taken over. */
export const SEND_LEASE_MS = 60_000
const MAX_RETRY_DELAY_MS = 60_000

export const retryDelayMs = (attempts: number) => Math.min(MAX_RETRY_DELAY_MS, 1000 * 2 ** Math.max(0, attempts - 1))

export function newOutboxMessage(input: {
  tenantId: string
  kind: MailKind
  recipient: string
  content: MailContent
  now: number
  secretExpiresAt?: number
}): OutboxMessage {
  return {
    id: Bun.randomUUIDv7(),
    tenantId: input.tenantId,
    kind: input.kind,
    recipient: input.recipient,
    subject: input.content.subject,
    textBody: input.content.text,
    htmlBody: input.content.html,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: input.now,
    leaseUntil: null,
    lastError: null,
    secretExpiresAt: input.secretExpiresAt ?? null,
    createdAt: input.now,
    sentAt: null,
  }
}

/** The "your password was changed" notice, however the password was changed. */
export function passwordChangedNotice(tenant: Tenant, user: User, now: number, language?: string): OutboxMessage {
  const content = passwordChangedMail({ tenantName: tenantTitle(tenant), firstName: user.firstName, changedAt: now, language })
  return newOutboxMessage({ tenantId: tenant.id, kind: 'password-changed', recipient: user.email, content, now })
}

type OutboxDeps = Pick<Deps, 'store' | 'clock' | 'config'>

export type DeliveryOutcome = 'sent' | 'retry' | 'failed' | 'expired'

/** Claims and handles one due message; null when none is due. */
export async function deliverNext(deps: OutboxDeps, transport: MailTransport, logger: Logger, observe?: (outcome: DeliveryOutcome) => void): Promise<DeliveryOutcome | null> {
  const now = deps.clock.now()
  const message = await deps.store.outbox.claimNext(now, SEND_LEASE_MS)
  if (!message) return null
  const about = { mailId: message.id, kind: message.kind, attempt: message.attempts }
  if ((message.secretExpiresAt !== null && message.secretExpiresAt <= now) || message.textBody === null) {
    await deps.store.outbox.markExpired(message.id)
    logger.log('warn', 'mail expired before it could be sent', about)
    observe?.('expired')
    return 'expired'
  }
  try {
    await transport.send({ id: message.id, to: message.recipient, subject: message.subject, text: message.textBody, html: message.htmlBody ?? '' })
    await deps.store.outbox.markSent(message.id, deps.clock.now())
    logger.log('info', 'mail sent', about)
    observe?.('sent')
    return 'sent'
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).slice(0, 500)
    if (message.attempts >= deps.config.mailMaxAttempts) {
      await deps.store.outbox.markFailed(message.id, reason)
      logger.log('error', 'mail failed for good (authd mail retry re-queues it)', { ...about, error: reason })
      observe?.('failed')
      return 'failed'
    }
    await deps.store.outbox.markRetry(message.id, deps.clock.now() + retryDelayMs(message.attempts), reason)
    logger.log('warn', 'mail delivery failed, will retry', { ...about, error: reason })
    observe?.('retry')
    return 'retry'
  }
}

/** Delivers every message that is due now; returns how many it handled. Bodies erased on
 *  the way (sent or expired) are then purged from the storage files too. */
export async function deliverDue(deps: OutboxDeps, transport: MailTransport, logger: Logger, observe?: (outcome: DeliveryOutcome) => void): Promise<number> {
  let handled = 0
  let erased = false
  let outcome: DeliveryOutcome | null
  while ((outcome = await deliverNext(deps, transport, logger, observe)) !== null) {
    handled++
    erased ||= outcome === 'sent' || outcome === 'expired'
  }
  if (erased) await deps.store.outbox.purgeErased()
  return handled
}
