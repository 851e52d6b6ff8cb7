// The storage boundary. Core depends on this interface only; src/db implements it over
// SQLite and PostgreSQL. Each capability declares its own part of the contract beside its
// rules (tenants/store.ts, sessions/store.ts, ...); Store composes them. Every method is atomic by itself: where a rule needs
// "check, then write" (spending a refresh token), the store offers a conditional write that
// reports whether it won, so the rule holds without holding a transaction open across awaits.
import type { WebhookStore } from './webhooks/store'
import type { ApiKeyStore, TenantStore } from './tenants/store'
import type { PasswordResetStore, SetupTokenStore, UserStore } from './accounts/store'
import type { SignupStore } from './signup/store'
import type { MfaStore } from './mfa/store'
import type { PasskeyStore } from './passkeys/store'
import type { OidcStore } from './oidc/store'
import type { OutboxStore } from './mail/store'
import type { SessionStore, SigningKeyStore } from './sessions/store'
import type { IdempotencyStore, LimitStore } from './guards/store'
import type { AuditStore } from './audit/store'
import type { PruneTarget } from './retention/store'
import type { GroupStore } from './groups/store'
import type { AccessRuleStore } from './forward-auth/store'
import type { FederationFlowStore, IdentityStore, ProviderStore } from './federation/store'

/** The server_settings name of the public URL the server last started under (for the CLI). */
export const PUBLIC_URL_SETTING = 'public_url'

export interface ServerSettingsStore {
  get(name: string): Promise<string | null>
  /** Sets the setting, replacing its value if it has one. */
  set(name: string, value: string, now: number): Promise<void>
}

export interface Store {
  tenants: TenantStore
  apiKeys: ApiKeyStore
  users: UserStore
  groups: GroupStore
  accessRules: AccessRuleStore
  providers: ProviderStore
  identities: IdentityStore
  federationFlows: FederationFlowStore
  signingKeys: SigningKeyStore
  sessions: SessionStore
  passwordResets: PasswordResetStore
  setupTokens: SetupTokenStore
  signups: SignupStore
  mfa: MfaStore
  passkeys: PasskeyStore
  oidc: OidcStore
  outbox: OutboxStore
  webhooks: WebhookStore
  limits: LimitStore
  audit: AuditStore
  idempotency: IdempotencyStore
  /**
   * Deletes at most `limit` rows of one kind that ended before `before` (for limit counters:
   * untouched since then); returns how many.
   */
  prune(target: PruneTarget, before: number, limit: number): Promise<number>
  /** A named server-side secret, created by `create` the first time it is asked for. */
  serverSecret(name: string, create: () => string): Promise<string>
  /** What a running server tells the CLI beside it (not secret): the public URL it serves under. */
  serverSettings: ServerSettingsStore
  /** Throws when the database cannot answer. */
  ping(): Promise<void>
  migrationStatus(): Promise<{ applied: string[]; pending: string[] }>
  close(): void
}
