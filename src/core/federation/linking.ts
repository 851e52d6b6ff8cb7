// Which local account an upstream identity belongs to (product spec §25 rules 1-3), in one
// function with no I/O, tested as a table (test/unit/federation-linking.test.ts).
//
// Done badly this is an account-takeover machine: an upstream that lets anyone claim any
// address (an unverified e-mail, Microsoft Entra's mutable `email`: "nOAuth") would hand over
// the local account of that address, and a local account someone created for a victim's
// address before the victim came (pre-hijacking) would absorb the victim's upstream sign-in.
// So an address links by itself only when both sides vouch for it and the operator said the
// provider's vouching counts (`--link-by-email verified`); in every other case the person
// proves the local account too (both proofs, never one), as Ory Kratos decided (PR #3574).
import { parseSignupPolicy, signupAllows } from '../tenants/signup-policy'
import type { User } from '../types'
import type { Identity, IdentityProvider, UpstreamProfile } from './types'

export type AccountResolution =
  /** Rule 1: a known identity signs its user in. */
  | { outcome: 'sign-in'; userId: string }
  /** Rule 2, both sides vouch for the address: linked now, then signed in. */
  | { outcome: 'link'; userId: string }
  /** Rule 2 otherwise: the person signs in to the local account once, then the identity is linked. */
  | { outcome: 'prove'; userId: string }
  /** Rule 3: a new user of the upstream's address and names. */
  | { outcome: 'create' }
  | { outcome: 'refuse'; reason: 'no-email' | 'unverified-email' | 'creation-closed' }

export interface ResolutionInput {
  /** The identity (provider, subject) as stored, if it is linked. */
  identity: Pick<Identity, 'userId'> | null
  provider: Pick<IdentityProvider, 'linkByEmail' | 'createUsers'>
  /** The tenant's sign-up policy (§15), as stored: the provider's default for creating users. */
  tenantSignup: string
  profile: Pick<UpstreamProfile, 'email' | 'emailVerified'>
  /** The tenant's user of the upstream's address (normalised), if there is one. */
  localUser: Pick<User, 'id' | 'emailVerifiedAt'> | null
}

export function resolveAccount(input: ResolutionInput): AccountResolution {
  const { identity, provider, profile, localUser } = input
  if (identity) return { outcome: 'sign-in', userId: identity.userId }
  if (profile.email === null) return { outcome: 'refuse', reason: 'no-email' }
  if (localUser) {
    const bothVouch = provider.linkByEmail === 'verified' && profile.emailVerified && localUser.emailVerifiedAt !== null
    return { outcome: bothVouch ? 'link' : 'prove', userId: localUser.id }
  }
  if (!mayCreate(input)) return { outcome: 'refuse', reason: 'creation-closed' }
  // An account made for an address nobody proved would be waiting for its owner with someone
  // else's ways in (pre-hijacking): a password reset by its owner later would not show them all.
  // So an upstream creates accounts only for addresses it vouches for, as sign-up does only for
  // addresses whose mailbox answered.
  return profile.emailVerified ? { outcome: 'create' } : { outcome: 'refuse', reason: 'unverified-email' }
}

function mayCreate({ provider, tenantSignup, profile }: ResolutionInput): boolean {
  const policy = parseSignupPolicy(provider.createUsers ?? tenantSignup)
  return policy.kind === 'domains' ? signupAllows(policy, profile.email!) : policy.kind === 'open'
}

/** Whether the upstream's own sign-in stands in for the local second factor (§25: `--trust-upstream-mfa` and an amr that says so). */
export function upstreamMfaTrusted(provider: Pick<IdentityProvider, 'trustUpstreamMfa'>, profile: Pick<UpstreamProfile, 'amr'>): boolean {
  return provider.trustUpstreamMfa && profile.amr.some((method) => method === 'mfa' || method === 'otp' || method === 'hwk')
}
