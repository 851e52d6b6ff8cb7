// The audit log of security events: who (tenant, user), from where (IP, user agent), when,
// what. Never a secret: no password, OTP, token or key, and e-mail addresses only masked.
import type { Deps } from '../deps'
import { badRequest, notFoundById } from '../errors'
import type { AuditQuery } from './store'
import type { AuditEvent } from '../types'
import { CLI_ACTOR, type Actor, type AuditType } from './types'

export * from './types'

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
    actorUserId: actor.userId ?? null,
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
