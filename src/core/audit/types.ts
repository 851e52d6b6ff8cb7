// Who acts and what happened, as the audit log names them: plain types every capability and
// the guards can name without the audit log's functions (which need the dependency bundle).
/** Who caused an event: a client of the HTTP API, or an admin at the CLI. */
export interface Actor {
  ip: string | null
  userAgent: string | null
  /** Set when the admin API acts: the id of the admin-scoped API key. */
  apiKeyId?: string
  /** Set when the admin API acts: the key's tenant. Such an actor sees and changes nothing
   *  outside it: another tenant's ids are answered as unknown ones (404). */
  tenantId?: string
  /** Set when an admin acts in the console: the admin user's id (with tenantId, their tenant). */
  userId?: string
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
  | 'device_code.limited'
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
  | 'group.created'
  | 'group.updated'
  | 'group.deleted'
  | 'group.member_added'
  | 'group.member_removed'
  | 'provider.created'
  | 'provider.updated'
  | 'provider.deleted'
  | 'identity.linked'
  | 'identity.unlinked'
  | 'identity.refused'
  | 'federation.limited'
  | 'device.limited'
  | 'access_rule.created'
  | 'access_rule.deleted'
  | 'forward_auth.denied'
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
  | 'oidc.access_denied'
  | 'oidc.consent_given'
  | 'oidc.consent_withdrawn'
  | 'oidc.logout'
  | 'oidc.service_token_issued'
  | 'oidc.device_authorization_started'
  | 'oidc.device_approved'
  | 'oidc.device_denied'

/** Every audit event type, for a list to choose from (the console's audit log filter): checked
 *  against AuditType below, so a type added there and not here fails the type check. */
export const AUDIT_TYPES = [
  'login.succeeded',
  'login.failed',
  'login.limited',
  'logout',
  'refresh.reused',
  'password_reset.requested',
  'password_reset.limited',
  'otp.failed',
  'otp.limited',
  'device_code.limited',
  'password.changed',
  'password.set_up',
  'password.setup_failed',
  'password.set_by_admin',
  'password.limited',
  'mfa.enrolment_started',
  'mfa.enrolled',
  'mfa.disabled',
  'mfa.reset',
  'mfa.challenged',
  'mfa.failed',
  'mfa.recovery_code_used',
  'session.reauthenticated',
  'passkey.added',
  'passkey.renamed',
  'passkey.removed',
  'passkey.counter_regressed',
  'passkey_options.limited',
  'passkeys.listed',
  'reauth.failed',
  'signup.requested',
  'signup.limited',
  'signup.completed',
  'signup.failed',
  'user.created',
  'user.invited',
  'user.disabled',
  'user.enabled',
  'user.updated',
  'user.deleted',
  'user.viewed',
  'users.listed',
  'sessions.listed',
  'audit.read',
  'users.imported',
  'sessions.revoked',
  'session.ended',
  'sessions.ended_all',
  'tenant.created',
  'tenant.updated',
  'tenant.disabled',
  'tenant.enabled',
  'api_key.created',
  'group.created',
  'group.updated',
  'group.deleted',
  'group.member_added',
  'group.member_removed',
  'provider.created',
  'provider.updated',
  'provider.deleted',
  'identity.linked',
  'identity.unlinked',
  'identity.refused',
  'federation.limited',
  'device.limited',
  'access_rule.created',
  'access_rule.deleted',
  'forward_auth.denied',
  'api_key.revoked',
  'signing_key.rotated',
  'config.untrusted_proxy',
  'signing_key.revoked',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.secret_rotated',
  'webhook_endpoint.deleted',
  'webhook_endpoint.disabled',
  'webhook_delivery.redelivered',
  'oidc_client.created',
  'oidc_client.updated',
  'oidc_client.secret_rotated',
  'oidc_client.deleted',
  'oidc.code_issued',
  'oidc.code_reused',
  'oidc.grant_started',
  'oidc.grant_refreshed',
  'oidc.grant_reused',
  'oidc.grant_revoked',
  'oidc.access_denied',
  'oidc.consent_given',
  'oidc.consent_withdrawn',
  'oidc.logout',
  'oidc.service_token_issued',
  'oidc.device_authorization_started',
  'oidc.device_approved',
  'oidc.device_denied',
] as const satisfies readonly AuditType[]
type UnlistedAuditType = Exclude<AuditType, (typeof AUDIT_TYPES)[number]>
export const AUDIT_TYPES_COMPLETE: [UnlistedAuditType] extends [never] ? true : UnlistedAuditType = true
