// The PostgreSQL schema: the same tables, columns and indexes as the SQLite one (../schema.ts),
// so the Store behaves the same on both engines. Timestamps are epoch milliseconds in bigint
// columns (read as JS numbers: safe until the year 285,000). Migrations are generated from
// this file by drizzle-kit (`npm run db:generate`) into src/db/pg/migrations.
import { sql } from 'drizzle-orm'
import { bigint, bigserial, boolean, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { FLOW_STAGES, LINK_BY_EMAIL, PROVIDER_TYPES } from '../../core/federation/types'

const ms = (name: string) => bigint(name, { mode: 'number' })

export const tenants = pgTable(
  'tenants',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    createdAt: ms('created_at').notNull(),
    disabledAt: ms('disabled_at'),
    audience: text('audience').notNull(),
    signup: text('signup').notNull().default('closed'),
    slug: text('slug'),
    displayName: text('display_name'),
    accentColor: text('accent_color'),
    logoUrl: text('logo_url'),
    logoImage: text('logo_image'),
    logoContentType: text('logo_content_type'),
    passkeyRpId: text('passkey_rp_id'),
    passkeyOrigins: text('passkey_origins'),
    returnToOrigins: text('return_to_origins'),
    forwardAuthDomains: text('forward_auth_domains'),
    consoleEnabled: boolean('console_enabled').notNull().default(true),
  },
  (t) => [uniqueIndex('tenants_audience_idx').on(t.audience), uniqueIndex('tenants_slug_idx').on(t.slug)],
)

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull().references(() => tenants.id),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    createdAt: ms('created_at').notNull(),
    revokedAt: ms('revoked_at'),
    /** `client` (the auth API) or `admin` (also the management API of its tenant). */
    scope: text('scope', { enum: ['client', 'admin'] }).notNull().default('client'),
  },
  (t) => [uniqueIndex('api_keys_key_hash_idx').on(t.keyHash), index('api_keys_tenant_idx').on(t.tenantId)],
)

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull().references(() => tenants.id),
    email: text('email').notNull(),
    firstName: text('first_name').notNull(),
    lastName: text('last_name').notNull(),
    type: text('type', { enum: ['admin', 'user', 'tenant'] }).notNull(),
    passwordHash: text('password_hash'),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
    disabledAt: ms('disabled_at'),
    sessionEpoch: integer('session_epoch').notNull().default(0),
    emailVerifiedAt: ms('email_verified_at'),
  },
  // (tenant_id, id): the admin API's keyset pages (ids are UUIDv7, so creation order).
  (t) => [uniqueIndex('users_tenant_email_idx').on(t.tenantId, t.email), index('users_tenant_id_idx').on(t.tenantId, t.id)],
)

// No foreign key on user_id: a token whose user was deleted must still be found (404, not 401).
export const setupTokens = pgTable(
  'setup_tokens',
  {
    id: text('id').primaryKey(),
    userId: text('user_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
    usedAt: ms('used_at'),
  },
  (t) => [uniqueIndex('setup_tokens_hash_idx').on(t.tokenHash), index('setup_tokens_user_idx').on(t.userId), index('setup_tokens_ended_idx').on(t.usedAt, t.expiresAt)],
)

export const signingKeys = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  alg: text('alg').notNull(),
  publicJwk: text('public_jwk').notNull(),
  privateKeyPem: text('private_key_pem').notNull(),
  createdAt: ms('created_at').notNull(),
  retiredAt: ms('retired_at'),
  revokedAt: ms('revoked_at'),
})

export const refreshFamilies = pgTable(
  'refresh_families',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id').notNull(),
    rememberMe: boolean('remember_me').notNull(),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
    revokedAt: ms('revoked_at'),
    revokedReason: text('revoked_reason'),
    amr: text('amr').notNull().default('pwd'),
    /** When the user last proved who they are in this session (login, or reauthenticate): a
     *  factor or password change needs it within the last few minutes (core/step-up.ts). */
    authAt: ms('auth_at').notNull().default(0),
    /** When a forward-auth check last saw the session (core/forward-auth), at most once a minute. */
    lastUsedAt: ms('last_used_at'),
    clientId: text('client_id'),
    scope: text('scope'),
    /** No foreign key: the session keeps saying how it began after the provider is deleted. */
    providerId: text('provider_id'),
  },
  // ended: retention finds ended sessions by it (retention-store.ts), in batches that must not
  // scan. The *_ended_idx indexes of other tables are there for the same reason.
  (t) => [index('refresh_families_user_idx').on(t.userId), index('refresh_families_ended_idx').on(t.revokedAt, t.expiresAt)],
)

// fillfactor 85 (migration 0016, which drizzle's schema cannot state): room on each page for
// the one update every row gets, so that it stays a HOT update.
export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    id: text('id').primaryKey(),
    familyId: text('family_id')
      .notNull()
      .references(() => refreshFamilies.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
    spentAt: ms('spent_at'),
    accessKid: text('access_kid'),
    /** Where the login or refresh that issued this token came from: the session list shows
     *  the live token's (its createdAt is the session's last use). Personal data, pruned
     *  with the session. */
    ip: text('ip'),
    userAgent: text('user_agent'),
  },
  (t) => [uniqueIndex('refresh_tokens_hash_idx').on(t.tokenHash), index('refresh_tokens_family_idx').on(t.familyId)],
)

export const passwordResetOtps = pgTable('password_reset_otps', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  codeHash: text('code_hash').notNull(),
  createdAt: ms('created_at').notNull(),
  expiresAt: ms('expires_at').notNull(),
  attempts: integer('attempts').notNull(),
  spentAt: ms('spent_at'),
},
  (t) => [index('password_reset_otps_ended_idx').on(t.spentAt, t.expiresAt)],
)

export const passwordResetRequests = pgTable(
  'password_reset_requests',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    tenantId: text('tenant_id').notNull(),
    emailKey: text('email_key').notNull(),
    createdAt: ms('created_at').notNull(),
    issued: boolean('issued').notNull().default(false),
    attempts: integer('attempts').notNull().default(0),
  },
  (t) => [index('password_reset_requests_email_idx').on(t.tenantId, t.emailKey, t.createdAt), index('password_reset_requests_created_idx').on(t.createdAt)],
)

export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    kind: text('kind', { enum: ['password-reset-otp', 'password-changed', 'invitation', 'signup-code', 'signup-attempt', 'mfa-enrolled', 'mfa-disabled', 'mfa-recovery-used', 'passkey-added', 'webhook-disabled'] }).notNull(),
    recipient: text('recipient').notNull(),
    subject: text('subject').notNull(),
    textBody: text('text_body'),
    htmlBody: text('html_body'),
    status: text('status', { enum: ['pending', 'sending', 'sent', 'failed', 'expired'] }).notNull(),
    attempts: integer('attempts').notNull(),
    nextAttemptAt: ms('next_attempt_at').notNull(),
    leaseUntil: ms('lease_until'),
    lastError: text('last_error'),
    secretExpiresAt: ms('secret_expires_at'),
    createdAt: ms('created_at').notNull(),
    sentAt: ms('sent_at'),
  },
  (t) => [index('mail_outbox_due_idx').on(t.status, t.nextAttemptAt), index('mail_outbox_ended_idx').on(t.status, t.sentAt, t.createdAt)],
)

export const serverSecrets = pgTable('server_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: ms('created_at').notNull(),
})

export const serverSettings = pgTable('server_settings', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  updatedAt: ms('updated_at').notNull(),
})

export const limitCounters = pgTable(
  'limit_counters',
  {
    key: text('key').primaryKey(),
    count: integer('count').notNull(),
    windowStart: ms('window_start').notNull(),
    /** No longer written or read (the back-off is derived from count and updated_at in
     *  core/limits.ts); kept because migrations only add, so an older instance keeps working
     *  during a rolling upgrade. */
    blockedUntil: ms('blocked_until'),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [index('limit_counters_updated_idx').on(t.updatedAt)],
)

export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: ms('at').notNull(),
    type: text('type').notNull(),
    tenantId: text('tenant_id'),
    userId: text('user_id'),
    ip: text('ip'),
    userAgent: text('user_agent'),
    /** The admin API key that made the call, for events of the admin API. */
    apiKeyId: text('api_key_id'),
    actorUserId: text('actor_user_id'),
    detail: text('detail'),
  },
  (t) => [index('audit_events_at_idx').on(t.at), index('audit_events_tenant_idx').on(t.tenantId, t.at), index('audit_events_user_idx').on(t.userId, t.at)],
)


// Idempotency-Key of the admin API's POST /users: the first answer, kept 24 hours, so a
// retried create returns it. The answer can hold a setup token, so it is stored sealed
// (AES-256-GCM under a server key, core/secrets.ts), never in clear.
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    tenantId: text('tenant_id').notNull(),
    key: text('key').notNull(),
    /** SHA-256 of the request's method, path and body: the same key with another request is a 409. */
    requestHash: text('request_hash').notNull(),
    /** The user the request created (erased with the user); null while it runs. */
    userId: text('user_id'),
    statusCode: integer('status_code'),
    sealedResponse: text('sealed_response'),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.key] }), index('idempotency_keys_created_idx').on(t.createdAt)],
)

export const pendingSignups = pgTable(
  'pending_signups',
  {
    tenantId: text('tenant_id').notNull(),
    emailKey: text('email_key').notNull(),
    firstName: text('first_name').notNull(),
    lastName: text('last_name').notNull(),
    passwordHash: text('password_hash').notNull(),
    codeHash: text('code_hash').notNull(),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
    attempts: integer('attempts').notNull(),
    spentAt: ms('spent_at'),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.emailKey] }), index('pending_signups_expires_idx').on(t.expiresAt), index('pending_signups_ended_idx').on(t.spentAt, t.expiresAt)],
)

export const signupRequests = pgTable(
  'signup_requests',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    tenantId: text('tenant_id').notNull(),
    emailKey: text('email_key').notNull(),
    createdAt: ms('created_at').notNull(),
    issued: boolean('issued').notNull().default(false),
  },
  (t) => [index('signup_requests_email_idx').on(t.tenantId, t.emailKey, t.createdAt), index('signup_requests_created_idx').on(t.createdAt)],
)

export const mfaTotp = pgTable('mfa_totp', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  sealedSecret: text('sealed_secret').notNull(),
  createdAt: ms('created_at').notNull(),
  confirmedAt: ms('confirmed_at'),
  lastUsedStep: ms('last_used_step'),
})

export const mfaRecoveryCodes = pgTable(
  'mfa_recovery_codes',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    usedAt: ms('used_at'),
  },
  (t) => [index('mfa_recovery_codes_user_idx').on(t.userId)],
)

export const mfaChallenges = pgTable(
  'mfa_challenges',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id').notNull(),
    rememberMe: boolean('remember_me').notNull(),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
    attempts: integer('attempts').notNull(),
    spentAt: ms('spent_at'),
    webauthnChallenge: text('webauthn_challenge'),
    /** Deleted with the provider: a sign-in through a provider deleted meanwhile does not complete. */
    providerId: text('provider_id').references(() => identityProviders.id, { onDelete: 'cascade' }),
  },
  // user: a new password or a disable spends the user's open challenges (helpers.ts spendOutstandingSecrets).
  (t) => [
    uniqueIndex('mfa_challenges_token_idx').on(t.tokenHash),
    index('mfa_challenges_expires_idx').on(t.expiresAt),
    index('mfa_challenges_user_idx').on(t.userId),
    index('mfa_challenges_ended_idx').on(t.spentAt, t.expiresAt),
  ],
)

export const passkeys = pgTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    credentialId: text('credential_id').notNull(),
    publicKey: text('public_key').notNull(),
    counter: ms('counter').notNull(),
    transports: text('transports').notNull(),
    deviceType: text('device_type').notNull(),
    backedUp: boolean('backed_up').notNull(),
    aaguid: text('aaguid').notNull(),
    name: text('name').notNull(),
    createdAt: ms('created_at').notNull(),
    lastUsedAt: ms('last_used_at'),
  },
  (t) => [uniqueIndex('passkeys_credential_idx').on(t.tenantId, t.credentialId), index('passkeys_user_idx').on(t.userId)],
)

export const webauthnChallenges = pgTable(
  'webauthn_challenges',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose', { enum: ['register', 'login'] }).notNull(),
    challenge: text('challenge').notNull(),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
    spentAt: ms('spent_at'),
  },
  (t) => [index('webauthn_challenges_expires_idx').on(t.expiresAt), index('webauthn_challenges_ended_idx').on(t.spentAt, t.expiresAt)],
)

// Webhooks: the same tables as ../schema.ts (the events are written by triggers, see the
// webhooks migration).
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    url: text('url').notNull(),
    eventTypes: text('event_types').notNull(),
    description: text('description').notNull().default(''),
    sealedSecret: text('sealed_secret').notNull(),
    previousSealedSecret: text('previous_sealed_secret'),
    previousSecretUntil: ms('previous_secret_until'),
    disabledAt: ms('disabled_at'),
    disabledReason: text('disabled_reason'),
    failingSince: ms('failing_since'),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [index('webhook_endpoints_tenant_idx').on(t.tenantId)],
)

export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    /** The user the event is about: erasing the user reduces their events to this id. */
    userId: text('user_id').notNull(),
    type: text('type').notNull(),
    data: text('data').notNull(),
    createdAt: ms('created_at').notNull(),
    fannedOutAt: ms('fanned_out_at'),
    /** How many deliveries the fan-out made of it. Retention finds the events of no delivery
     *  (most: a login's session.created in a tenant with no endpoint) apart from the others,
     *  by two partial indexes: one pick walking the other would read a month of deliveries' events. */
    deliveries: integer('deliveries').notNull().default(0),
  },
  (t) => [
    index('webhook_events_fan_out_idx').on(t.fannedOutAt, t.createdAt),
    index('webhook_events_user_idx').on(t.userId),
    index('webhook_events_undelivered_idx').on(t.fannedOutAt).where(sql.raw('deliveries = 0')),
    index('webhook_events_delivered_idx').on(t.fannedOutAt).where(sql.raw('deliveries > 0')),
  ],
)

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull(),
    status: text('status', { enum: ['pending', 'sending', 'succeeded', 'dead'] }).notNull(),
    attempts: integer('attempts').notNull(),
    nextAttemptAt: ms('next_attempt_at').notNull(),
    leaseUntil: ms('lease_until'),
    giveUpAt: ms('give_up_at').notNull(),
    lastAttemptAt: ms('last_attempt_at'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    lastResponse: text('last_response'),
    createdAt: ms('created_at').notNull(),
    deliveredAt: ms('delivered_at'),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_endpoint_event_idx').on(t.endpointId, t.eventId),
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
    // claimNext's test for a delivery in flight at the endpoint (status 'sending', lease not run out)
    index('webhook_deliveries_in_flight_idx').on(t.endpointId, t.status, t.nextAttemptAt),
    // claimNext's count of a tenant's deliveries in flight (its fair share of the slots)
    index('webhook_deliveries_tenant_in_flight_idx').on(t.tenantId, t.status, t.nextAttemptAt),
    // retention's test for an event that no delivery names any more (retention-store.ts)
    index('webhook_deliveries_event_idx').on(t.eventId),
  ],
)

export const oidcClients = pgTable(
  'oidc_clients',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    secretHash: text('secret_hash'),
    secretPrefix: text('secret_prefix'),
    redirectUris: text('redirect_uris').notNull(),
    postLogoutRedirectUris: text('post_logout_redirect_uris').notNull(),
    firstParty: boolean('first_party').notNull(),
    idTokenAlg: text('id_token_alg').notNull().default('RS256'),
    allowedGroups: text('allowed_groups'),
    groupsClaim: text('groups_claim').notNull().default('scope'),
    service: boolean('service').notNull().default(false),
    scopes: text('scopes').notNull().default('[]'),
    audiences: text('audiences').notNull().default('[]'),
    tokenLifetimeSec: integer('token_lifetime_sec').notNull().default(900),
    device: boolean('device').notNull().default(false),
    jwks: text('jwks'),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [index('oidc_clients_tenant_idx').on(t.tenantId)],
)

export const clientAssertions = pgTable(
  'client_assertions',
  {
    clientId: text('client_id')
      .notNull()
      .references(() => oidcClients.id, { onDelete: 'cascade' }),
    jtiHash: text('jti_hash').notNull(),
    expiresAt: ms('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.jtiHash] }), index('client_assertions_expires_idx').on(t.expiresAt)],
)

export const oidcCodes = pgTable(
  'oidc_codes',
  {
    id: text('id').primaryKey(),
    codeHash: text('code_hash').notNull(),
    tenantId: text('tenant_id').notNull(),
    clientId: text('client_id')
      .notNull()
      .references(() => oidcClients.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    sessionId: text('session_id').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    // (null: a confidential client that sent no PKCE challenge; spec §21 accepts PKCE from it, requires it of none)
    codeChallenge: text('code_challenge'),
    // The issuer URL the code was issued at (a tenant has one per spelling: slug, id): it is redeemed there only.
    issuer: text('issuer'),
    nonce: text('nonce'),
    scope: text('scope').notNull(),
    authAt: ms('auth_at').notNull(),
    amr: text('amr').notNull(),
    userEpoch: integer('user_epoch').notNull(),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
    spentAt: ms('spent_at'),
    familyId: text('family_id'),
  },
  (t) => [uniqueIndex('oidc_codes_hash_idx').on(t.codeHash), index('oidc_codes_expires_idx').on(t.expiresAt)],
)

// A device authorization (RFC 8628, product spec §26): the device polls with its device code,
// a person approves or denies at /t/{tenant}/device with the user code. Both codes are stored
// as SHA-256 (the user code normalised first: upper case, no dash). Approving writes an
// authorization code (oidc_codes) that the device's next poll redeems, once.
export const deviceAuthorizations = pgTable(
  'device_authorizations',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    clientId: text('client_id')
      .notNull()
      .references(() => oidcClients.id, { onDelete: 'cascade' }),
    deviceCodeHash: text('device_code_hash').notNull(),
    userCodeHash: text('user_code_hash').notNull(),
    // The issuer URL it was asked at: its tokens name it.
    issuer: text('issuer').notNull(),
    scope: text('scope').notNull(),
    // Seconds the device must wait between polls: 5, plus 5 for each slow_down.
    intervalSec: integer('interval_sec').notNull(),
    lastPolledAt: ms('last_polled_at'),
    // pending, approved or denied
    status: text('status').notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    decidedAt: ms('decided_at'),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('device_authorizations_device_code_idx').on(t.deviceCodeHash),
    uniqueIndex('device_authorizations_user_code_idx').on(t.userCodeHash),
    index('device_authorizations_expires_idx').on(t.expiresAt),
  ],
)

export const oidcConsents = pgTable(
  'oidc_consents',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id')
      .notNull()
      .references(() => oidcClients.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id').notNull(),
    scope: text('scope').notNull(),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] })],
)

export const groups = pgTable(
  'groups',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [uniqueIndex('groups_tenant_name_idx').on(t.tenantId, t.name)],
)

export const groupMembers = pgTable(
  'group_members',
  {
    groupId: text('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id').notNull(),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId] }), index('group_members_user_idx').on(t.userId, t.groupId)],
)

export const accessRules = pgTable(
  'access_rules',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    domain: text('domain').notNull(),
    paths: text('paths').notNull(),
    methods: text('methods').notNull(),
    policy: text('policy').notNull(),
    groups: text('groups').notNull(),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [index('access_rules_tenant_position_idx').on(t.tenantId, t.position)],
)

export const identityProviders = pgTable(
  'identity_providers',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    type: text('type', { enum: PROVIDER_TYPES }).notNull(),
    name: text('name').notNull(),
    issuer: text('issuer'),
    clientId: text('client_id').notNull(),
    clientSecretSealed: text('client_secret_sealed').notNull(),
    scopes: text('scopes').notNull(),
    linkByEmail: text('link_by_email', { enum: LINK_BY_EMAIL }).notNull(),
    createUsers: text('create_users'),
    trustUpstreamMfa: boolean('trust_upstream_mfa').notNull(),
    groupsClaim: text('groups_claim'),
    groupMap: text('group_map'),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [index('identity_providers_tenant_name_idx').on(t.tenantId, t.name)],
)

export const identities = pgTable(
  'identities',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    providerId: text('provider_id')
      .notNull()
      .references(() => identityProviders.id, { onDelete: 'cascade' }),
    subject: text('subject').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    email: text('email'),
    emailVerified: boolean('email_verified').notNull(),
    createdAt: ms('created_at').notNull(),
    lastUsedAt: ms('last_used_at'),
  },
  (t) => [uniqueIndex('identities_provider_subject_idx').on(t.providerId, t.subject), index('identities_user_idx').on(t.userId)],
)

export const federationFlows = pgTable(
  'federation_flows',
  {
    id: text('id').primaryKey(),
    stateHash: text('state_hash').notNull(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    providerId: text('provider_id')
      .notNull()
      .references(() => identityProviders.id, { onDelete: 'cascade' }),
    intent: text('intent', { enum: ['sign-in', 'link', 'reauthenticate'] }).notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    codeVerifierSealed: text('code_verifier_sealed').notNull(),
    nonce: text('nonce').notNull(),
    returnTo: text('return_to'),
    stage: text('stage', { enum: FLOW_STAGES }).notNull(),
    pendingSealed: text('pending_sealed'),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
  },
  (t) => [uniqueIndex('federation_flows_state_idx').on(t.stateHash), index('federation_flows_expires_idx').on(t.expiresAt)],
)
