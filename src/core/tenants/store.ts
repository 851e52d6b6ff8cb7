// The storage contract of tenants and their API keys: composed into Store (core/store.ts), implemented by
// each engine in src/db.
import type { ApiKey, AuditEvent, OutboxMessage, SetupToken, Tenant, TenantSettings, User } from '../types'

export interface TenantStore {
  /** False when another tenant has this audience. */
  insert(tenant: Tenant): Promise<boolean>
  /** The tenant after the change, null if there is none; throws a conflict for a taken audience. */
  setAudience(id: string, audience: string): Promise<Tenant | null | 'audience-taken'>
  /** The tenant after the change, null if there is none. */
  setSignup(id: string, signup: string): Promise<Tenant | null>
  /** Changes optional settings (slug, branding, passkey relying party); the tenant after it,
   *  null if there is none, 'slug-taken' when another tenant has the slug. */
  updateSettings(id: string, changes: Partial<TenantSettings & Pick<Tenant, 'signup'>>): Promise<Tenant | null | 'slug-taken'>
  get(id: string): Promise<Tenant | null>
  /** The tenant whose pages are under /t/{slug}/ (slugs are stored in lower case). */
  findBySlug(slug: string): Promise<Tenant | null>
  list(): Promise<Tenant[]>
  /** Disabling also ends every session of the tenant's users and spends their OTPs and setup
   *  tokens, in the same transaction: enabling it again revives none of them. */
  setDisabledAt(id: string, disabledAt: number | null): Promise<Tenant | null>
  /** The first run (`authd init`): everything in one transaction, so a failure leaves nothing
   *  behind; false, writing nothing, when the database already holds a tenant. */
  initialise(first: FirstTenant): Promise<boolean>
}

/** What `authd init` writes: the tenant, its first API key, its first admin (with the setup
 *  token and the invitation that carries it, when the admin has no password) and the audit events. */
export interface FirstTenant {
  tenant: Tenant
  apiKey: ApiKey
  keyHash: string
  user: User
  setupToken?: SetupToken
  invitation?: OutboxMessage
  audit: AuditEvent[]
}

export interface ApiKeyStore {
  insert(key: ApiKey, keyHash: string): Promise<void>
  /** The key and its tenant, if the key exists and is not revoked. */
  findActiveByHash(keyHash: string): Promise<{ apiKey: ApiKey; tenant: Tenant } | null>
  list(tenantId?: string): Promise<ApiKey[]>
  revoke(id: string, revokedAt: number): Promise<ApiKey | null>
}
