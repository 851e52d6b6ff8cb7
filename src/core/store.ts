// The storage boundary. Core depends on this interface only; src/db implements it over
// SQLite (and later PostgreSQL). Every method is atomic by itself: where a rule needs
// "check, then write" (spending a refresh token), the store offers a conditional write that
// reports whether it won, so the rule holds without holding a transaction open across awaits.
import type { ApiKey, RefreshFamily, RefreshToken, SetupToken, SigningKeyRecord, Tenant, User } from './types'

export interface TenantStore {
  insert(tenant: Tenant): Promise<void>
  get(id: string): Promise<Tenant | null>
  list(): Promise<Tenant[]>
  setDisabledAt(id: string, disabledAt: number | null): Promise<Tenant | null>
}

export interface ApiKeyStore {
  insert(key: ApiKey, keyHash: string): Promise<void>
  /** The key and its tenant, if the key exists and is not revoked. */
  findActiveByHash(keyHash: string): Promise<{ apiKey: ApiKey; tenant: Tenant } | null>
  list(tenantId?: string): Promise<ApiKey[]>
  revoke(id: string, revokedAt: number): Promise<ApiKey | null>
}

export interface UserStore {
  /** Inserts the user (and its setup token); false when the e-mail is taken in the tenant. */
  insert(user: User, setupToken?: SetupToken): Promise<boolean>
  get(id: string): Promise<User | null>
  findByEmail(tenantId: string, email: string): Promise<User | null>
  list(tenantId: string): Promise<User[]>
  setDisabledAt(id: string, disabledAt: number | null, now: number): Promise<User | null>
  setPasswordHash(id: string, passwordHash: string, now: number): Promise<void>
}

export interface SigningKeyStore {
  /** Adds the new key and retires every other active key at the same instant. */
  insertAndRetireOthers(key: SigningKeyRecord): Promise<void>
  list(): Promise<SigningKeyRecord[]>
}

export interface SessionStore {
  createFamily(family: RefreshFamily, firstToken: RefreshToken): Promise<void>
  findToken(tokenHash: string): Promise<{ token: RefreshToken; family: RefreshFamily } | null>
  /** Spends the token and adds its successor, only if the token was still unspent (false if not). */
  rotate(tokenId: string, spentAt: number, successor: RefreshToken): Promise<boolean>
  revokeFamily(familyId: string, revokedAt: number, reason: string): Promise<void>
  /** Revokes every live family of the user; returns how many. */
  revokeUserFamilies(userId: string, revokedAt: number, reason: string): Promise<number>
}

export interface Store {
  tenants: TenantStore
  apiKeys: ApiKeyStore
  users: UserStore
  signingKeys: SigningKeyStore
  sessions: SessionStore
  /** A named server-side secret, created by `create` the first time it is asked for. */
  serverSecret(name: string, create: () => string): Promise<string>
  /** Throws when the database cannot answer. */
  ping(): Promise<void>
  migrationStatus(): Promise<{ applied: string[]; pending: string[] }>
  close(): void
}
