// The records of the OpenID Provider (product spec §21), as the store keeps them.

/** The ID-token algorithms a client may ask for, the default (OpenID Connect Registration's) first. */
export const ID_TOKEN_ALGS = ['RS256', 'ES256'] as const
export type IdTokenAlg = (typeof ID_TOKEN_ALGS)[number]

export const GROUPS_CLAIM_MODES = ['scope', 'always'] as const
export type GroupsClaim = (typeof GROUPS_CLAIM_MODES)[number]

/** A relying party registered with a tenant. */
export interface OidcClient {
  /** The client_id. */
  id: string
  tenantId: string
  name: string
  /** SHA-256 of the secret of a confidential client; null for a public one (PKCE, no secret). */
  secretHash: string | null
  /** The secret's first characters, to tell secrets apart in a list (never enough to use). */
  secretPrefix: string | null
  /** Matched exactly, character for character. */
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  /** A first-party client (the operator's own application) skips the consent page. */
  firstParty: boolean
  /** How its ID tokens are signed (id_token_signed_response_alg): RS256 unless it asked for ES256. */
  idTokenAlg: IdTokenAlg
  /** Names of the groups of which a user must be in one to get a code (product spec §23); null: anyone. */
  allowedGroups: string[] | null
  /** `scope`: the groups claim only for the `groups` scope; `always`: in every ID token and userinfo. */
  groupsClaim: GroupsClaim
  /** A service client (product spec §26): confidential, no redirect URIs, the client_credentials grant only. */
  service: boolean
  /** The scopes a service client's tokens may carry (the default when it asks for none: all of them). */
  scopes: string[]
  /** The audiences (RFC 8707 resources) a service client's tokens may name, and whose tokens the client may introspect. */
  audiences: string[]
  /** How long a service client's access tokens live, in seconds (default 900). */
  tokenLifetimeSec: number
  /** May use the device authorization grant (RFC 8628, product spec §26); public or confidential. */
  device: boolean
  /** The public keys of a client that authenticates with private_key_jwt (RFC 7523); null: by its secret, or none. */
  jwks: ClientJwks | null
  createdAt: number
  updatedAt: number
}

/** A public client (a single-page or native app) proves nothing about itself: no secret, no keys. */
export const isPublicClient = (client: Pick<OidcClient, 'secretHash' | 'jwks'>) => client.secretHash === null && client.jwks === null

/** A client's public keys, as a JWKS (RFC 7517 §5). */
export interface ClientJwks {
  keys: Array<Record<string, unknown>>
}

/** An authorization code: 60 s, spent once, bound to its client, redirect URI, PKCE challenge and nonce. */
export interface OidcCode {
  id: string
  codeHash: string
  tenantId: string
  clientId: string
  userId: string
  /** The page session (refresh family) the user was signed in with: the ID token's `sid`. */
  sessionId: string
  redirectUri: string
  /** The S256 code_challenge; null when a confidential client sent none (PKCE is optional for it, spec §21). */
  codeChallenge: string | null
  /** The issuer URL it was issued at (one per spelling of the tenant: slug or id), where alone it
   *  is redeemed; absent on codes issued before authd recorded it. */
  issuer?: string | null
  nonce: string | null
  /** The granted scopes, space-separated. */
  scope: string
  authAt: number
  amr: string
  /** The user's session epoch when the code was issued: a new password since starts no grant. */
  userEpoch: number
  createdAt: number
  expiresAt: number
  spentAt: number | null
  /** The grant its redemption started, revoked if the code is presented again. */
  familyId: string | null
}

/** A user's consent to a third-party client for these scopes (space-separated). */
export interface OidcConsent {
  userId: string
  clientId: string
  tenantId: string
  scope: string
  createdAt: number
}

/** A device authorization (RFC 8628): pending until a person approves or denies its user code. */
export interface DeviceAuthorization {
  id: string
  tenantId: string
  clientId: string
  /** SHA-256 of the device code. */
  deviceCodeHash: string
  /** SHA-256 of the user code as normalised (userCodeKey): upper case, no dash. */
  userCodeHash: string
  /** The issuer URL it was asked at: its tokens name it. */
  issuer: string
  /** The scopes asked for (those the client may have), space-separated. */
  scope: string
  /** Seconds the device must leave between polls: 5, and 5 more after each slow_down. */
  intervalSec: number
  lastPolledAt: number | null
  status: 'pending' | 'approved' | 'denied'
  /** Who approved or denied it. */
  userId: string | null
  decidedAt: number | null
  createdAt: number
  expiresAt: number
}
