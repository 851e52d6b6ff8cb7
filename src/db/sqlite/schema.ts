// The SQLite schema. Timestamps are integer milliseconds since the epoch; secrets are
// stored only as hashes (see src/core/secrets.ts). Migrations are generated from this file
// by drizzle-kit (`npm run db:generate`).
import { sql } from 'drizzle-orm'
import { sqliteTable, text, integer, index, primaryKey, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { FLOW_STAGES, LINK_BY_EMAIL, PROVIDER_TYPES } from '../../core/federation/types'

export const tenants = sqliteTable(
  'tenants',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    createdAt: integer('created_at').notNull(),
    disabledAt: integer('disabled_at'),
    /** The `aud` of this tenant's access tokens: one tenant's token never passes another's check. */
    audience: text('audience').notNull().default(''),
    /** Who may sign up (core/signup.ts): `closed`, `open` or `domains:a.example,b.example`. */
    signup: text('signup').notNull().default('closed'),
    /** The tenant's name in the URLs of its pages (`/t/{slug}/login`): lower-case letters, digits and dashes. */
    slug: text('slug'),
    /** Branding of the pages and mails: the name shown (default: name), an accent colour (#rrggbb), a logo. */
    displayName: text('display_name'),
    accentColor: text('accent_color'),
    /** An https URL, or null when the logo is stored here (logoImage, base64) or absent. */
    logoUrl: text('logo_url'),
    logoImage: text('logo_image'),
    logoContentType: text('logo_content_type'),
    /** The passkeys' relying party (core/passkeys): its RP ID and allowed origins (a JSON array);
     *  null: the host and origin of AUTHD_PUBLIC_URL. */
    passkeyRpId: text('passkey_rp_id'),
    passkeyOrigins: text('passkey_origins'),
    /** Origins besides authd's own that a sign-in's return_to may send the browser to (a JSON
     *  array): the operator's to set (the CLI), never a tenant admin key's. */
    returnToOrigins: text('return_to_origins'),
    /** The domains whose applications authd guards at their reverse proxy (forward
     *  authentication, product spec §24; a JSON array): the operator's to set, like returnToOrigins. */
    forwardAuthDomains: text('forward_auth_domains'),
    /** Whether the tenant's admin console (/t/{tenant}/admin, product spec §27) is on: the operator's to set. */
    consoleEnabled: integer('console_enabled', { mode: 'boolean' }).notNull().default(true),
  },
  (t) => [uniqueIndex('tenants_audience_idx').on(t.audience), uniqueIndex('tenants_slug_idx').on(t.slug)],
)

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull().references(() => tenants.id),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    createdAt: integer('created_at').notNull(),
    revokedAt: integer('revoked_at'),
    /** `client` (the auth API) or `admin` (also the management API of its tenant). */
    scope: text('scope', { enum: ['client', 'admin'] }).notNull().default('client'),
  },
  (t) => [uniqueIndex('api_keys_key_hash_idx').on(t.keyHash), index('api_keys_tenant_idx').on(t.tenantId)],
)

export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull().references(() => tenants.id),
    email: text('email').notNull(),
    firstName: text('first_name').notNull(),
    lastName: text('last_name').notNull(),
    type: text('type', { enum: ['admin', 'user', 'tenant'] }).notNull(),
    passwordHash: text('password_hash'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    disabledAt: integer('disabled_at'),
    /** Moves on whenever what proves the user changes (a new password, a second factor turned
     *  on, a disable): a login that checked the old proof starts no session after it. */
    sessionEpoch: integer('session_epoch').notNull().default(0),
    /** When the user proved they receive mail at `email` (an invitation or setup token used, a
     *  verified sign-up, a reset by OTP, or an admin's word); null: never proven. */
    emailVerifiedAt: integer('email_verified_at'),
  },
  // (tenant_id, id): the admin API's keyset pages (ids are UUIDv7, so creation order).
  (t) => [uniqueIndex('users_tenant_email_idx').on(t.tenantId, t.email), index('users_tenant_id_idx').on(t.tenantId, t.id)],
)

// No foreign key on user_id: a token whose user was deleted must still be found, so the
// setup-password endpoint can answer 404 for it rather than 401.
export const setupTokens = sqliteTable(
  'setup_tokens',
  {
    id: text('id').primaryKey(),
    userId: text('user_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [uniqueIndex('setup_tokens_hash_idx').on(t.tokenHash), index('setup_tokens_user_idx').on(t.userId), index('setup_tokens_ended_idx').on(t.usedAt, t.expiresAt)],
)

export const signingKeys = sqliteTable('signing_keys', {
  kid: text('kid').primaryKey(),
  alg: text('alg').notNull(),
  publicJwk: text('public_jwk').notNull(),
  privateKeyPem: text('private_key_pem').notNull(),
  createdAt: integer('created_at').notNull(),
  retiredAt: integer('retired_at'),
  /** Revoked (leaked): out of the JWKS at once, whatever tokens it signed. */
  revokedAt: integer('revoked_at'),
})

export const refreshFamilies = sqliteTable(
  'refresh_families',
  {
    id: text('id').primaryKey(),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id').notNull(),
    rememberMe: integer('remember_me', { mode: 'boolean' }).notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    revokedAt: integer('revoked_at'),
    revokedReason: text('revoked_reason'),
    /** How the session's user proved who they are (its access tokens' `amr`): `pwd`, or `pwd,otp`. */
    amr: text('amr').notNull().default('pwd'),
    /** When the user last proved who they are in this session (login, or reauthenticate): a
     *  factor or password change needs it within the last few minutes (core/step-up.ts). */
    authAt: integer('auth_at').notNull().default(0),
    /** When a forward-auth check last saw the session (core/forward-auth), at most once a minute. */
    lastUsedAt: integer('last_used_at'),
    /** Set for a grant to an OpenID Connect client (core/oidc): its tokens serve that client
     *  only, never authd's own API or pages. */
    clientId: text('client_id'),
    /** The scopes granted to that client, space-separated. */
    scope: text('scope'),
    /** The upstream identity provider the session was signed in through (core/federation);
     *  null: another way in. No foreign key: the session keeps saying how it began after the
     *  provider is deleted, as its audit event does. */
    providerId: text('provider_id'),
  },
  // ended: retention finds ended sessions by it (retention-store.ts), in batches that must not
  // scan. The *_ended_idx indexes of other tables are there for the same reason.
  (t) => [index('refresh_families_user_idx').on(t.userId), index('refresh_families_ended_idx').on(t.revokedAt, t.expiresAt)],
)

export const refreshTokens = sqliteTable(
  'refresh_tokens',
  {
    id: text('id').primaryKey(),
    familyId: text('family_id').notNull().references(() => refreshFamilies.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    spentAt: integer('spent_at'),
    /** The kid that signed the access token issued with this refresh token: `keys revoke`
     *  ends the sessions a leaked key signed for. */
    accessKid: text('access_kid'),
    /** Where the login or refresh that issued this token came from: the session list shows
     *  the live token's (its createdAt is the session's last use). Personal data, pruned
     *  with the session. */
    ip: text('ip'),
    userAgent: text('user_agent'),
  },
  (t) => [uniqueIndex('refresh_tokens_hash_idx').on(t.tokenHash), index('refresh_tokens_family_idx').on(t.familyId)],
)

// One live password-reset OTP per user: a new request replaces the row.
export const passwordResetOtps = sqliteTable('password_reset_otps', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  codeHash: text('code_hash').notNull(),
  createdAt: integer('created_at').notNull(),
  expiresAt: integer('expires_at').notNull(),
  attempts: integer('attempts').notNull(),
  spentAt: integer('spent_at'),
},
  (t) => [index('password_reset_otps_ended_idx').on(t.spentAt, t.expiresAt)],
)

// Every forgot-password request, registered address or not (same write either way), keyed
// by a keyed hash of the address: the per-address limits count these.
export const passwordResetRequests = sqliteTable(
  'password_reset_requests',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    tenantId: text('tenant_id').notNull(),
    emailKey: text('email_key').notNull(),
    createdAt: integer('created_at').notNull(),
    /** Whether this request sent a mail: only those count against the per-address limits,
     *  so requests made to exhaust them cannot block the address owner's own reset. */
    issued: integer('issued', { mode: 'boolean' }).notNull().default(false),
    /** Wrong codes tried in the 10 minutes after an issued request, registered address or
     *  not: a wrong code counts toward the account's lock only while a code could have
     *  matched (see core/password-reset.ts). */
    attempts: integer('attempts').notNull().default(0),
  },
  (t) => [index('password_reset_requests_email_idx').on(t.tenantId, t.emailKey, t.createdAt), index('password_reset_requests_created_idx').on(t.createdAt)],
)

// The mail outbox: written in the same transaction as the secret a message carries, and
// delivered by a worker. Bodies are erased once delivered (or expired).
export const mailOutbox = sqliteTable(
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
    nextAttemptAt: integer('next_attempt_at').notNull(),
    leaseUntil: integer('lease_until'),
    lastError: text('last_error'),
    /** When the secret in the body stops being valid: the message is not sent after it. */
    secretExpiresAt: integer('secret_expires_at'),
    createdAt: integer('created_at').notNull(),
    sentAt: integer('sent_at'),
  },
  (t) => [index('mail_outbox_due_idx').on(t.status, t.nextAttemptAt), index('mail_outbox_ended_idx').on(t.status, t.sentAt, t.createdAt)],
)

// Server-side keys that never leave the database (e.g. the key that derives a refresh
// token's successor). Kept here rather than in a file so every instance shares them.
export const serverSecrets = sqliteTable('server_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: integer('created_at').notNull(),
})

// What a running server tells the CLI beside it (for example the public URL it serves under,
// so the links a CLI command writes reach it). Not secret: shown to operators.
export const serverSettings = sqliteTable('server_settings', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

// Abuse-limit counters, one row per key. Keys are keyed hashes (no addresses or IPs here).
// A row counts hits within window_start + window: requests in a budget, or the failures of a
// back-off run (updated_at is then the latest failure).
export const limitCounters = sqliteTable(
  'limit_counters',
  {
    key: text('key').primaryKey(),
    count: integer('count').notNull(),
    windowStart: integer('window_start').notNull(),
    /** No longer written or read (the back-off is derived from count and updated_at in
     *  core/limits.ts); kept because migrations only add, so an older instance keeps working
     *  during a rolling upgrade. */
    blockedUntil: integer('blocked_until'),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('limit_counters_updated_idx').on(t.updatedAt)],
)

// Security events. Never a secret: no password, OTP, token or key, and addresses only masked.
export const auditEvents = sqliteTable(
  'audit_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    at: integer('at').notNull(),
    type: text('type').notNull(),
    tenantId: text('tenant_id'),
    userId: text('user_id'),
    ip: text('ip'),
    userAgent: text('user_agent'),
    /** The admin API key that made the call, for events of the admin API. */
    apiKeyId: text('api_key_id'),
    /** The admin user who made the change in the console (product spec §27), for its events. */
    actorUserId: text('actor_user_id'),
    /** JSON object with event-specific fields (e.g. a masked e-mail, a key id, a retry-after). */
    detail: text('detail'),
  },
  (t) => [index('audit_events_at_idx').on(t.at), index('audit_events_tenant_idx').on(t.tenantId, t.at), index('audit_events_user_idx').on(t.userId, t.at)],
)

// Idempotency-Key of the admin API's POST /users: the first answer, kept 24 hours, so a
// retried create returns it. The answer can hold a setup token, so it is stored sealed
// (AES-256-GCM under a server key, core/secrets.ts), never in clear.
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    tenantId: text('tenant_id').notNull(),
    key: text('key').notNull(),
    /** SHA-256 of the request's method, path and body, its password left out (core/idempotency.ts):
     *  the same key with another request is a 409. */
    requestHash: text('request_hash').notNull(),
    /** The user the request created (erased with the user); null while it runs. */
    userId: text('user_id'),
    statusCode: integer('status_code'),
    sealedResponse: text('sealed_response'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.key] }), index('idempotency_keys_created_idx').on(t.createdAt)],
)

// A sign-up waiting for its code (core/signup.ts): not a user, so it blocks nobody. One per
// address and tenant, keyed by a keyed hash of the address; a new sign-up replaces it. The
// account is created from it, with its password, when its code is verified.
export const pendingSignups = sqliteTable(
  'pending_signups',
  {
    tenantId: text('tenant_id').notNull(),
    emailKey: text('email_key').notNull(),
    firstName: text('first_name').notNull(),
    lastName: text('last_name').notNull(),
    passwordHash: text('password_hash').notNull(),
    /** HMAC of the code under a server key, as for password-reset OTPs. */
    codeHash: text('code_hash').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    attempts: integer('attempts').notNull(),
    spentAt: integer('spent_at'),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.emailKey] }), index('pending_signups_expires_idx').on(t.expiresAt), index('pending_signups_ended_idx').on(t.spentAt, t.expiresAt)],
)

// Every sign-up request, whatever the address (same write either way): the per-address
// limits on sign-up mails count the issued ones, as password_reset_requests does for resets.
export const signupRequests = sqliteTable(
  'signup_requests',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    tenantId: text('tenant_id').notNull(),
    emailKey: text('email_key').notNull(),
    createdAt: integer('created_at').notNull(),
    issued: integer('issued', { mode: 'boolean' }).notNull().default(false),
  },
  (t) => [index('signup_requests_email_idx').on(t.tenantId, t.emailKey, t.createdAt), index('signup_requests_created_idx').on(t.createdAt)],
)

// A user's TOTP factor (core/mfa/). The secret is sealed (AES-256-GCM under a server key,
// bound to the user id): a copy of this table alone gives no codes away. Unconfirmed until
// the first code is entered; last_used_step makes each code work once.
export const mfaTotp = sqliteTable('mfa_totp', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  sealedSecret: text('sealed_secret').notNull(),
  createdAt: integer('created_at').notNull(),
  confirmedAt: integer('confirmed_at'),
  lastUsedStep: integer('last_used_step'),
})

// Recovery codes: single use, stored only as a keyed hash.
export const mfaRecoveryCodes = sqliteTable(
  'mfa_recovery_codes',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [index('mfa_recovery_codes_user_idx').on(t.userId)],
)

// The second step of a login: issued after the right password; single use, 5 minutes, 5 wrong codes.
export const mfaChallenges = sqliteTable(
  'mfa_challenges',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id').notNull(),
    rememberMe: integer('remember_me', { mode: 'boolean' }).notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    attempts: integer('attempts').notNull(),
    spentAt: integer('spent_at'),
    /** The WebAuthn challenge a passkey signs to pass this challenge (null: the user has no passkey). */
    webauthnChallenge: text('webauthn_challenge'),
    /** The upstream provider whose sign-in this challenge completes (core/federation); null: a
     *  password's. Deleted with the provider: a sign-in through a provider deleted meanwhile
     *  does not complete (set null, it would complete as a password's). */
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

// Passkeys (core/passkeys): a user's WebAuthn credentials. The public key (COSE, base64url) is
// not secret; the credential id is registered once per tenant.
export const passkeys = sqliteTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    credentialId: text('credential_id').notNull(),
    publicKey: text('public_key').notNull(),
    counter: integer('counter').notNull(),
    /** A JSON array of the transports the authenticator named (usb, nfc, ble, internal, hybrid). */
    transports: text('transports').notNull(),
    /** singleDevice (bound to one authenticator) or multiDevice (synced). */
    deviceType: text('device_type').notNull(),
    backedUp: integer('backed_up', { mode: 'boolean' }).notNull(),
    aaguid: text('aaguid').notNull(),
    name: text('name').notNull(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [uniqueIndex('passkeys_credential_idx').on(t.tenantId, t.credentialId), index('passkeys_user_idx').on(t.userId)],
)

// A registration or passwordless sign-in ceremony in flight: single use, 5 minutes, bound to
// its tenant (and user, for a registration).
export const webauthnChallenges = sqliteTable(
  'webauthn_challenges',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose', { enum: ['register', 'login'] }).notNull(),
    challenge: text('challenge').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    spentAt: integer('spent_at'),
  },
  (t) => [index('webauthn_challenges_expires_idx').on(t.expiresAt), index('webauthn_challenges_ended_idx').on(t.spentAt, t.expiresAt)],
)

// Webhooks (core/webhooks). An event row is written by triggers (see the webhooks migration)
// in the same transaction as the change it reports; the worker fans it out into one delivery
// per subscribed endpoint, and delivers those.
export const webhookEndpoints = sqliteTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    url: text('url').notNull(),
    /** Comma-separated event types or patterns (`user.*`, `*`). */
    eventTypes: text('event_types').notNull(),
    description: text('description').notNull().default(''),
    /** The signing secret (`whsec_…`), sealed like a TOTP secret (core/secrets.ts). */
    sealedSecret: text('sealed_secret').notNull(),
    /** After a rotation, the previous secret also signs until `previous_secret_until`. */
    previousSealedSecret: text('previous_sealed_secret'),
    previousSecretUntil: integer('previous_secret_until'),
    disabledAt: integer('disabled_at'),
    disabledReason: text('disabled_reason'),
    /** Since when every attempt has failed (null after a success): five days of it disable the endpoint. */
    failingSince: integer('failing_since'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('webhook_endpoints_tenant_idx').on(t.tenantId)],
)

export const webhookEvents = sqliteTable(
  'webhook_events',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    /** The user the event is about: erasing the user reduces their events to this id. */
    userId: text('user_id').notNull(),
    type: text('type').notNull(),
    /** The payload's `data`, as JSON text. */
    data: text('data').notNull(),
    createdAt: integer('created_at').notNull(),
    /** Set once the worker has written the event's deliveries. */
    fannedOutAt: integer('fanned_out_at'),
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

export const webhookDeliveries = sqliteTable(
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
    nextAttemptAt: integer('next_attempt_at').notNull(),
    leaseUntil: integer('lease_until'),
    /** Retries stop (the delivery is dead) after this: three days after it was queued. */
    giveUpAt: integer('give_up_at').notNull(),
    lastAttemptAt: integer('last_attempt_at'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    /** At most 1 KiB of the endpoint's last answer. */
    lastResponse: text('last_response'),
    createdAt: integer('created_at').notNull(),
    deliveredAt: integer('delivered_at'),
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

// OpenID Connect clients of a tenant (core/oidc): the secret of a confidential client is
// stored only as its SHA-256; redirect URIs are a JSON array matched exactly.
export const oidcClients = sqliteTable(
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
    firstParty: integer('first_party', { mode: 'boolean' }).notNull(),
    /** The ID token's signature (`id_token_signed_response_alg`): RS256 (OpenID Connect
     *  Registration's default) or ES256. Clients from before RS256 keep ES256. */
    idTokenAlg: text('id_token_alg').notNull().default('RS256'),
    /** Group names (a JSON array) of which a user must be in one to get a code; null: anyone. */
    allowedGroups: text('allowed_groups'),
    /** `scope`: the groups claim for the `groups` scope only; `always`: in every ID token. */
    groupsClaim: text('groups_claim').notNull().default('scope'),
    /** A service client (product spec §26): client_credentials only, no redirect URIs, no users. */
    service: integer('service', { mode: 'boolean' }).notNull().default(false),
    /** The scopes a service client may ask for (a JSON array). */
    scopes: text('scopes').notNull().default('[]'),
    /** The audiences (RFC 8707 resources) its tokens may name and whose tokens it may introspect (a JSON array). */
    audiences: text('audiences').notNull().default('[]'),
    /** How long a service client's access tokens live, in seconds. */
    tokenLifetimeSec: integer('token_lifetime_sec').notNull().default(900),
    /** A client that may use the device authorization grant (RFC 8628, product spec §26). */
    device: integer('device', { mode: 'boolean' }).notNull().default(false),
    /** The public keys (a JWKS, JSON) of a client that authenticates with private_key_jwt (RFC 7523); null: a secret or none. */
    jwks: text('jwks'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('oidc_clients_tenant_idx').on(t.tenantId)],
)

// An authorization code: 60 s, spent once, bound to its client, redirect URI, PKCE challenge
// and nonce. familyId is the grant its redemption started: a second use revokes it.
export const oidcCodes = sqliteTable(
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
    authAt: integer('auth_at').notNull(),
    amr: text('amr').notNull(),
    userEpoch: integer('user_epoch').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    spentAt: integer('spent_at'),
    familyId: text('family_id'),
  },
  (t) => [uniqueIndex('oidc_codes_hash_idx').on(t.codeHash), index('oidc_codes_expires_idx').on(t.expiresAt)],
)

// A device authorization (RFC 8628, product spec §26): the device polls with its device code,
// a person approves or denies at /t/{tenant}/device with the user code. Both codes are stored
// as SHA-256 (the user code normalised first: upper case, no dash). Approving writes an
// authorization code (oidc_codes) that the device's next poll redeems, once.
export const deviceAuthorizations = sqliteTable(
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
    lastPolledAt: integer('last_polled_at'),
    // pending, approved or denied
    status: text('status').notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    decidedAt: integer('decided_at'),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('device_authorizations_device_code_idx').on(t.deviceCodeHash),
    uniqueIndex('device_authorizations_user_code_idx').on(t.userCodeHash),
    index('device_authorizations_expires_idx').on(t.expiresAt),
  ],
)

// The jti of each client assertion (private_key_jwt, RFC 7523 §3) accepted, as SHA-256, kept
// until the assertion expires: the same assertion presented again is refused.
export const clientAssertions = sqliteTable(
  'client_assertions',
  {
    clientId: text('client_id')
      .notNull()
      .references(() => oidcClients.id, { onDelete: 'cascade' }),
    jtiHash: text('jti_hash').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.jtiHash] }), index('client_assertions_expires_idx').on(t.expiresAt)],
)

// A user's consent to a third-party client, for the scopes listed (space-separated).
export const oidcConsents = sqliteTable(
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
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] })],
)

// Groups of a tenant (product spec §23): flat, names unique in the tenant (stored lower-case).
export const groups = sqliteTable(
  'groups',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [uniqueIndex('groups_tenant_name_idx').on(t.tenantId, t.name)],
)

// A user's memberships: (group, user), and by user for the groups claim of every token.
export const groupMembers = sqliteTable(
  'group_members',
  {
    groupId: text('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId] }), index('group_members_user_idx').on(t.userId, t.groupId)],
)

// Access rules of a tenant's forward authentication (product spec §24): ordered by position (1
// first), the first whose domain, path and method match a request decides. paths, methods and
// groups are JSON arrays. Positions are dense (1..n) per tenant: an insert or a deletion
// renumbers the rules after it in its own transaction.
export const accessRules = sqliteTable(
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
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('access_rules_tenant_position_idx').on(t.tenantId, t.position)],
)

// Upstream identity providers of a tenant (product spec §25). The client secret is sealed with
// the server key (core/secrets.ts), never stored in clear. Names need not be unique.
export const identityProviders = sqliteTable(
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
    /** Space-separated. */
    scopes: text('scopes').notNull(),
    linkByEmail: text('link_by_email', { enum: LINK_BY_EMAIL }).notNull(),
    /** `open`, `closed` or `domains:a.example,…`; null: the tenant's sign-up policy. */
    createUsers: text('create_users'),
    trustUpstreamMfa: integer('trust_upstream_mfa', { mode: 'boolean' }).notNull(),
    groupsClaim: text('groups_claim'),
    /** A JSON object {upstream name: local group name}. */
    groupMap: text('group_map'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('identity_providers_tenant_name_idx').on(t.tenantId, t.name)],
)

// Upstream accounts linked to local users. (provider, subject) is unique, and so is (tenant,
// provider, subject): a provider belongs to one tenant. Deleted with their user (erasure) or
// their provider; identity.linked and identity.unlinked are written by triggers (the
// federation migration), none for a deletion that comes with the user's or the provider's.
export const identities = sqliteTable(
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
    /** The address the upstream gave at the last sign-in. */
    email: text('email'),
    emailVerified: integer('email_verified', { mode: 'boolean' }).notNull(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [uniqueIndex('identities_provider_subject_idx').on(t.providerId, t.subject), index('identities_user_idx').on(t.userId)],
)

// Upstream sign-ins in flight (core/federation): 10 minutes, each stage left once (a
// conditional update). Pruned by expiry; deleted with their tenant, provider or user (a flow
// for an erased user, with the upstream's answer about them, does not outlive the erasure). The
// table holds minutes of flows: the cascades' look-ups by provider or user need no index.
export const federationFlows = sqliteTable(
  'federation_flows',
  {
    id: text('id').primaryKey(),
    /** sha256 of the state; the state itself is only in the browser's cookie and the redirect. */
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
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [uniqueIndex('federation_flows_state_idx').on(t.stateHash), index('federation_flows_expires_idx').on(t.expiresAt)],
)
