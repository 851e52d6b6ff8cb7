// The audit log of security events: who (tenant, user), from where (IP, user agent), when,
// what. Never a secret: no password, OTP, token or key, and e-mail addresses only masked.
import type { Deps } from './deps'
import { badRequest, notFoundById } from './errors'
import type { AuditQuery } from './store'
import type { AuditEvent } from './types'

/** Who caused an event: a client of the HTTP API, or an admin at the CLI. */
export interface Actor {
  ip: string | null
  userAgent: string | null
  /** Set when the admin API acts: the id of the admin-scoped API key. */
  apiKeyId?: string
  /** Set when the admin API acts: the key's tenant. Such an actor sees and changes nothing
   *  outside it: another tenant's ids are answered as unknown ones (404). */
  tenantId?: string
  /** The language the request asked for (Accept-Language, among the mails' catalogues): the
   *  mails it causes are written in it. Absent (the CLI): English. */
  language?: string
}

/** The admin API's actor: the caller's address, the key that authorised the call, its tenant. */
export const adminActor = (client: Actor, apiKey: { id: string; tenantId: string }): Actor => ({ ...client, apiKeyId: apiKey.id, tenantId: apiKey.tenantId })

/** Whether the actor may see this tenant's rows. */
export const actorSees = (actor: Actor, tenantId: string) => actor.tenantId === undefined || actor.tenantId === tenantId

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
  | 'mfa.enrolment_started'
  | 'mfa.enrolled'
  | 'mfa.disabled'
  | 'mfa.reset'
  | 'mfa.challenged'
  | 'mfa.failed'
  | 'mfa.recovery_code_used'
  | 'session.reauthenticated'
  | 'passkey.added'
  | 'passkey.renamed'
  | 'passkey.removed'
  | 'passkey.counter_regressed'
  | 'passkey_options.limited'
  | 'passkeys.listed'
  | 'reauth.failed'
  | 'signup.requested'
  | 'signup.limited'
  | 'signup.completed'
  | 'signup.failed'
  | 'user.created'
  | 'user.invited'
  | 'user.disabled'
  | 'user.enabled'
  | 'user.updated'
  | 'user.deleted'
  | 'user.viewed'
  | 'users.listed'
  | 'sessions.listed'
  | 'audit.read'
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
  | 'webhook_endpoint.created'
  | 'webhook_endpoint.updated'
  | 'webhook_endpoint.secret_rotated'
  | 'webhook_endpoint.deleted'
  | 'webhook_endpoint.disabled'
  | 'webhook_delivery.redelivered'
  | 'oidc_client.created'
  | 'oidc_client.updated'
  | 'oidc_client.secret_rotated'
  | 'oidc_client.deleted'
  | 'oidc.code_issued'
  | 'oidc.code_reused'
  | 'oidc.grant_started'
  | 'oidc.grant_refreshed'
  | 'oidc.grant_reused'
  | 'oidc.grant_revoked'
  | 'oidc.consent_given'
  | 'oidc.consent_withdrawn'
  | 'oidc.logout'

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
    apiKeyId: actor.apiKeyId ?? null,
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

/** An audit event as `authd audit` and the admin API show it. */
export type AuditView = Omit<AuditEvent, 'at'> & { at: string }

export const toAuditView = ({ at, ...event }: AuditEvent): AuditView => ({ at: new Date(at).toISOString(), ...event })

export const MAX_AUDIT_LIMIT = 1000

/** The audit log, newest first. An admin API key reads only its tenant's events. */
export async function readAudit(deps: Pick<Deps, 'store' | 'clock'>, query: AuditQuery, actor: Actor = CLI_ACTOR): Promise<AuditView[]> {
  const limit = query.limit ?? 100
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_LIMIT) throw badRequest(`limit must be an integer from 1 to ${MAX_AUDIT_LIMIT}`)
  const filter = { ...query, limit }
  if (actor.tenantId !== undefined) {
    if (query.tenantId !== undefined && query.tenantId !== actor.tenantId) throw notFoundById('Tenant', query.tenantId)
    filter.tenantId = actor.tenantId
    // A live user of another tenant is as unknown here as everywhere else; a deleted user's id
    // still finds its (own tenant's) events.
    const user = query.userId === undefined ? null : await deps.store.users.get(query.userId)
    if (user && user.tenantId !== actor.tenantId) throw notFoundById('User', user.id)
  }
  const events = await deps.store.audit.query(filter)
  await audit(deps, 'audit.read', actor, { tenantId: filter.tenantId ?? null, detail: { count: events.length } })
  return events.map(({ id: _, ...event }) => toAuditView(event))
}
