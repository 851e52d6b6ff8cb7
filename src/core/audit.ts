// The audit log of security events: who (tenant, user), from where (IP, user agent), when,
// what. Never a secret: no password, OTP, token or key, and e-mail addresses only masked.
import type { Deps } from './deps'

/** Who caused an event: a client of the HTTP API, or an admin at the CLI. */
export interface Actor {
  ip: string | null
  userAgent: string | null
}

export const CLI_ACTOR: Actor = { ip: null, userAgent: 'authd-cli' }

export type AuditType =
  | 'login.succeeded'
  | 'login.failed'
  | 'login.limited'
  | 'logout'
  | 'refresh.reused'
  | 'password_reset.requested'
  | 'password_reset.limited'
  | 'otp.failed'
  | 'otp.limited'
  | 'password.changed'
  | 'password.set_up'
  | 'password.setup_failed'
  | 'password.set_by_admin'
  | 'password.limited'
  | 'user.created'
  | 'user.invited'
  | 'user.disabled'
  | 'user.enabled'
  | 'users.imported'
  | 'sessions.revoked'
  | 'session.ended'
  | 'sessions.ended_all'
  | 'tenant.created'
  | 'tenant.updated'
  | 'tenant.disabled'
  | 'tenant.enabled'
  | 'api_key.created'
  | 'api_key.revoked'
  | 'signing_key.rotated'
  | 'config.untrusted_proxy'
  | 'signing_key.revoked'

/** a***@example.com: enough to tell addresses apart in an investigation, not to harvest them. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@')
  if (at < 1) return '***'
  return `${email[0]}***${email.slice(at)}`
}

export function auditEvent(
  deps: Pick<Deps, 'clock'>,
  type: AuditType,
  actor: Actor,
  fields: { tenantId?: string | null; userId?: string | null; detail?: Record<string, unknown> } = {},
) {
  return {
    at: deps.clock.now(),
    type,
    tenantId: fields.tenantId ?? null,
    userId: fields.userId ?? null,
    ip: actor.ip,
    userAgent: actor.userAgent?.slice(0, 256) ?? null,
    detail: fields.detail ?? null,
  }
}

export async function audit(
  deps: Pick<Deps, 'clock' | 'store'>,
  type: AuditType,
  actor: Actor,
  fields: { tenantId?: string | null; userId?: string | null; detail?: Record<string, unknown> } = {},
): Promise<void> {
  await deps.store.audit.record(auditEvent(deps, type, actor, fields))
}
