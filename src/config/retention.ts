// How long rows are kept after they stop mattering.
import { parseDuration, type Read } from './parse'

/** How long rows are kept after they stop mattering (pruned in the background). */
export interface RetentionSettings {
  auditSec: number
  /** Ended sessions (revoked or past their absolute end) and their tokens. */
  sessionsSec: number
  /** Delivered or expired mail (metadata only: bodies are erased at delivery). */
  mailSec: number
  /** Delivered or dead webhook deliveries. */
  webhooksSec: number
  /** Forgot-password request records, and spent or expired OTPs and setup tokens. */
  resetDataSec: number
}

export function readRetentionSettings(read: Read): RetentionSettings {
  return {
    auditSec: read('AUTHD_RETAIN_AUDIT', 365 * 86400, parseDuration),
    sessionsSec: read('AUTHD_RETAIN_SESSIONS', 30 * 86400, parseDuration),
    mailSec: read('AUTHD_RETAIN_MAIL', 30 * 86400, parseDuration),
    webhooksSec: read('AUTHD_RETAIN_WEBHOOKS', 30 * 86400, parseDuration),
    resetDataSec: read('AUTHD_RETAIN_RESET_DATA', 7 * 86400, parseDuration),
  }
}
