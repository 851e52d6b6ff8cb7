// Upstream identity providers (product spec §25): a tenant's providers, the identities they
// vouch for (each belongs to one user), and the sign-in flows in flight between authd and them.

export const PROVIDER_TYPES = ['oidc', 'google', 'microsoft', 'gitlab', 'github'] as const
export type ProviderType = (typeof PROVIDER_TYPES)[number]

/** When an unknown identity is linked to the local account of its address without asking (§25 rule 2). */
export const LINK_BY_EMAIL = ['verified', 'never'] as const
export type LinkByEmail = (typeof LINK_BY_EMAIL)[number]

export interface IdentityProvider {
  id: string
  tenantId: string
  type: ProviderType
  /** Shown on the login page: "Continue with {name}". */
  name: string
  /**
   * OpenID Connect types: the issuer whose discovery document configures the flow (the
   * presets' own, a GitLab instance's, a Microsoft Entra tenant's). github: the base URL of a
   * GitHub Enterprise Server, null for github.com.
   */
  issuer: string | null
  clientId: string
  /** The client secret, sealed with the server key (context PROVIDER_SECRET_CONTEXT); never shown again. */
  clientSecretSealed: string
  /** Space-separated scopes asked of the upstream. */
  scopes: string
  linkByEmail: LinkByEmail
  /** Who an unknown identity may create an account for: `open`, `closed` or `domains:a.example,…`; null: the tenant's sign-up policy (§15). */
  createUsers: string | null
  /** Whether the upstream's `amr` (mfa, otp, hwk) stands in for the local second factor. */
  trustUpstreamMfa: boolean
  /** The ID token or userinfo claim that lists the person's upstream groups; null: groups are not synced. */
  groupsClaim: string | null
  /** A JSON object {upstream name: local group name}, as stored; null: none mapped. */
  groupMap: string | null
  createdAt: number
  updatedAt: number
}

export const PROVIDER_SECRET_CONTEXT = 'authd provider client secret'

/** An upstream account linked to a local user: (tenant, provider, subject) is unique. */
export interface Identity {
  id: string
  tenantId: string
  providerId: string
  /** The upstream's stable id of the person (`sub`; GitHub: the numeric user id). */
  subject: string
  userId: string
  /** The address the upstream gave at the last sign-in, if any. */
  email: string | null
  /** Whether the upstream vouched for that address. */
  emailVerified: boolean
  /** When it was linked. */
  createdAt: number
  lastUsedAt: number | null
}

/**
 * A sign-in (or a link from the account page) between its start at authd and its end: the
 * browser holds its `state` in a cookie, the row holds what the callback checks against.
 *   started          sent to the upstream; the callback spends it (once)
 *   awaiting-proof   the upstream answered for an address of an existing account that may not be
 *                    linked without the local account proved (§25 rule 2); the proof spends it
 *   done             spent
 */
export const FLOW_STAGES = ['started', 'awaiting-proof', 'done'] as const
export type FlowStage = (typeof FLOW_STAGES)[number]
export const FLOW_TTL_MS = 10 * 60_000

export interface FederationFlow {
  id: string
  /** sha256 of the state the browser's cookie and the upstream's redirect carry. */
  stateHash: string
  tenantId: string
  providerId: string
  /** reauthenticate: a sign-in that must be a fresh one at the upstream (prompt=login, max_age=0): the account page's step-up. */
  intent: 'sign-in' | 'link' | 'reauthenticate'
  /** link: the signed-in user the identity is for; awaiting-proof: the account to prove. */
  userId: string | null
  /** The PKCE code verifier, sealed (context FLOW_CONTEXT). */
  codeVerifierSealed: string
  nonce: string
  /** Where the browser goes after the sign-in (checked as the login page checks it). */
  returnTo: string | null
  stage: FlowStage
  /** awaiting-proof: the upstream's answer (UpstreamProfile as JSON), sealed (context FLOW_CONTEXT). */
  pendingSealed: string | null
  createdAt: number
  expiresAt: number
}

export const FLOW_CONTEXT = 'authd federation flow'

/** What the upstream said about the person, read from its verified ID token or its API. */
export interface UpstreamProfile {
  subject: string
  email: string | null
  emailVerified: boolean
  firstName: string | null
  lastName: string | null
  /** The ID token's amr, if any. */
  amr: string[]
  /** The groups claim's values, if the provider names one and the upstream sent it. */
  groups: string[] | null
  /** When the person last signed in at the upstream (the ID token's auth_time, in ms), if it says. */
  authTime: number | null
}
