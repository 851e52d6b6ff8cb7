// The records the domain works with. Timestamps are epoch milliseconds; null means "not".
import type { webcrypto } from 'node:crypto'

/** A public JWK as published in the JWKS (with its kid). */
export type JsonWebKey = webcrypto.JsonWebKey & { kid?: string }

export const USER_TYPES = ['admin', 'user', 'tenant'] as const
export type UserType = (typeof USER_TYPES)[number]

export interface Tenant {
  id: string
  name: string
  createdAt: number
  disabledAt: number | null
  /** The `aud` claim of this tenant's access tokens. */
  audience: string
  /** Who may sign up, as stored: `closed`, `open` or `domains:…` (core/signup.ts reads it). */
  signup: string
  /** The tenant's name in its pages' URLs (`/t/{slug}/`), if set. */
  slug: string | null
  /** Branding of the pages and mails (null: the defaults). */
  displayName: string | null
  accentColor: string | null
  logoUrl: string | null
  logoImage: string | null
  logoContentType: string | null
  /** The passkeys' relying party (core/passkeys/relying-party.ts; null: from AUTHD_PUBLIC_URL). */
  passkeyRpId: string | null
  /** A JSON array of origins, as stored. */
  passkeyOrigins: string | null
  /** Origins besides authd's own that a sign-in's return_to may lead to (a JSON array, as
   *  stored; core/return-to-origins.ts): the operator's to set, never a tenant admin key's. */
  returnToOrigins: string | null
  /** The domains whose applications authd guards at their reverse proxy (a JSON array, as
   *  stored; core/forward-auth/domains.ts): the operator's to set, like returnToOrigins. */
  forwardAuthDomains: string | null
  /** Whether the admin console (/t/{tenant}/admin, product spec §27) is on: the operator's to set. */
  consoleEnabled: boolean
}

/** A tenant's optional settings. */
export type TenantSettings = Pick<Tenant, 'slug' | 'displayName' | 'accentColor' | 'logoUrl' | 'logoImage' | 'logoContentType' | 'passkeyRpId' | 'passkeyOrigins' | 'returnToOrigins' | 'forwardAuthDomains' | 'consoleEnabled'>

/** A new tenant's optional settings, all unset. */
export const TENANT_SETTINGS_UNSET = {
  slug: null,
  displayName: null,
  accentColor: null,
  logoUrl: null,
  logoImage: null,
  logoContentType: null,
  passkeyRpId: null,
  passkeyOrigins: null,
  returnToOrigins: null,
  forwardAuthDomains: null,
} as const satisfies Partial<Tenant>

export interface ApiKey {
  id: string
  tenantId: string
  name: string
  /** The first characters of the key, shown so an admin can tell keys apart. */
  prefix: string
  createdAt: number
  revokedAt: number | null
  scope: ApiKeyScope
}

/** `client`: the auth API. `admin`: also the management API of the key's tenant. */
export const API_KEY_SCOPES = ['client', 'admin'] as const
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number]

export interface User {
  id: string
  tenantId: string
  email: string
  firstName: string
  lastName: string
  type: UserType
  passwordHash: string | null
  createdAt: number
  updatedAt: number
  disabledAt: number | null
  /** Moves on with every change of what proves the user (a new password, a second factor on,
   *  a disable): a session is started only at the epoch its proof was checked at. */
  sessionEpoch: number
  /** When the user last proved they receive mail at `email` (an invitation or setup token
   *  used, a verified sign-up, a reset by OTP) or an admin vouched for it; null: never, or
   *  not since the address changed. */
  emailVerifiedAt: number | null
}

export interface SetupToken {
  id: string
  userId: string
  tokenHash: string
  createdAt: number
  expiresAt: number
  usedAt: number | null
}

/** ES256 signs access tokens and the ID tokens of clients that ask for it; RS256 (RSA 2048)
 *  signs the other ID tokens (OpenID Connect's default, which every relying party accepts). */
export type SigningAlg = 'ES256' | 'RS256'

export interface SigningKeyRecord {
  kid: string
  alg: SigningAlg
  publicJwk: JsonWebKey
  privateKeyPem: string
  createdAt: number
  retiredAt: number | null
  /** Revoked as leaked: never published or used again. */
  revokedAt: number | null
}

export interface RefreshFamily {
  id: string
  userId: string
  tenantId: string
  rememberMe: boolean
  createdAt: number
  /** The absolute end of the session, whatever the refreshes. */
  expiresAt: number
  revokedAt: number | null
  revokedReason: string | null
  /** How the user proved who they are at login, as stored: `pwd`, or `pwd,otp` (the access tokens' `amr`). */
  amr: string
  /** When the user last proved who they are in this session: its login, or a reauthentication. */
  authAt: number
  /** When a forward-auth check last saw the session, recorded at most once a minute (null: never). */
  lastUsedAt?: number | null
  /** Set for a grant to an OpenID Connect client (core/oidc): its tokens serve that client
   *  only, never authd's own API or pages. */
  clientId?: string | null
  /** The scopes granted to that client, space-separated. */
  scope?: string | null
}

export interface RefreshToken {
  id: string
  familyId: string
  /** The key the token is stored under: refreshTokenKey() (its issue time and hash). */
  tokenHash: string
  createdAt: number
  expiresAt: number
  spentAt: number | null
  /** The kid that signed the access token issued beside this refresh token. */
  accessKid: string | null
  /** The IP and user agent of the login or refresh that issued it (see SessionOrigin). */
  ip: string | null
  userAgent: string | null
}

export interface PasswordResetOtp {
  userId: string
  /** HMAC of the code under a server key: a stolen database does not reveal live codes. */
  codeHash: string
  createdAt: number
  expiresAt: number
  /** Wrong codes tried against this OTP. */
  attempts: number
  spentAt: number | null
}

/** A sign-up waiting for its code: not a user yet (core/signup.ts). */
export interface PendingSignup {
  tenantId: string
  /** A keyed hash of the address (emailKey in otp.ts): the row holds no address. */
  emailKey: string
  firstName: string
  lastName: string
  passwordHash: string
  codeHash: string
  createdAt: number
  expiresAt: number
  attempts: number
  spentAt: number | null
}

/** A user's TOTP factor; the secret is sealed (core/mfa/). */
export interface TotpFactor {
  userId: string
  sealedSecret: string
  createdAt: number
  /** Null until the first code is entered (enrolment confirmed). */
  confirmedAt: number | null
  /** The TOTP step of the last code accepted: no code of it or before works again. */
  lastUsedStep: number | null
}

export interface RecoveryCode {
  id: string
  userId: string
  /** HMAC under a server key. */
  codeHash: string
  usedAt: number | null
}

/** The second step of a login for an enrolled user. */
export interface MfaChallenge {
  id: string
  tokenHash: string
  userId: string
  tenantId: string
  rememberMe: boolean
  createdAt: number
  expiresAt: number
  attempts: number
  spentAt: number | null
  /** The WebAuthn challenge a passkey signs to pass it (null when the user had no passkey). */
  webauthnChallenge: string | null
  /** The upstream provider whose sign-in the challenge completes (core/federation); null: a password's. */
  providerId: string | null
}

/** A user's WebAuthn credential (core/passkeys). */
export interface Passkey {
  id: string
  tenantId: string
  userId: string
  /** base64url, as the authenticator gave it. */
  credentialId: string
  /** The COSE public key, base64url. */
  publicKey: string
  counter: number
  /** A JSON array of transports. */
  transports: string
  deviceType: string
  backedUp: boolean
  aaguid: string
  name: string
  createdAt: number
  lastUsedAt: number | null
}

/** A registration or passwordless sign-in ceremony in flight. */
export interface WebauthnChallenge {
  id: string
  tenantId: string
  userId: string | null
  purpose: 'register' | 'login'
  /** base64url, as sent in the options. */
  challenge: string
  createdAt: number
  expiresAt: number
  spentAt: number | null
}

export type MailKind = 'password-reset-otp' | 'password-changed' | 'invitation' | 'signup-code' | 'signup-attempt' | 'mfa-enrolled' | 'mfa-disabled' | 'mfa-recovery-used' | 'passkey-added' | 'webhook-disabled'
export type MailStatus = 'pending' | 'sending' | 'sent' | 'failed' | 'expired'

export interface OutboxMessage {
  id: string
  tenantId: string
  kind: MailKind
  recipient: string
  subject: string
  /** Null once delivered or expired: the body may hold a secret. */
  textBody: string | null
  htmlBody: string | null
  status: MailStatus
  attempts: number
  nextAttemptAt: number
  /** While `sending`: when another worker may take the message over (its sender died). */
  leaseUntil: number | null
  lastError: string | null
  secretExpiresAt: number | null
  createdAt: number
  sentAt: number | null
}

export interface LimitCounter {
  key: string
  count: number
  windowStart: number
  updatedAt: number
}

export interface AuditEvent {
  at: number
  type: string
  tenantId: string | null
  userId: string | null
  ip: string | null
  userAgent: string | null
  /** The admin API key behind the call, for events of the admin API. */
  apiKeyId: string | null
  /** The admin user behind a change made in the console (product spec §27); absent or null otherwise. */
  actorUserId?: string | null
  detail: Record<string, unknown> | null
}
