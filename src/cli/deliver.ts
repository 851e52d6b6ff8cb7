// Commands that queue mail (users invite, init) try to deliver it at once, and say what
// happened: sent, written to a file, or still queued with the reason, for `authd serve`
// retries what could not be sent now.
import { deliverDue } from '../core/mail/outbox'
import { silentLogger } from '../log'
import { mailTransportFor } from '../mail/transports'
import type { Runtime } from '../runtime'

export interface Delivery {
  status: 'sent' | 'queued'
  /** Why it is still queued (the SMTP server's answer). */
  error?: string
  /** The outcome in words, after "invitation ...". */
  says: string
}

export async function deliverNow(rt: Runtime, mailId: string): Promise<Delivery> {
  await deliverDue(rt, mailTransportFor(rt.config, silentLogger), silentLogger)
  const message = (await rt.store.outbox.list({})).find((m) => m.id === mailId)
  if (message?.status === 'sent') {
    return { status: 'sent', says: rt.config.smtpUrl ? 'e-mailed' : `written to ${rt.config.dataDir}/mail (no SMTP configured)` }
  }
  const error = message?.lastError ?? 'unknown'
  return { status: 'queued', error, says: `queued; SMTP refused: ${error} (authd serve retries it)` }
}
