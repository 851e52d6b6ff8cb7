// A tenant's sign-up policy (product spec §15): who may sign up, as an operator (or a tenant
// admin, §27) writes it and as it is stored. A setting of the tenant, read by sign-up and by
// upstream providers' account creation (§25).
import { badRequest } from '../errors'

/** Who may sign up in a tenant. */
export type SignupPolicy = { kind: 'closed' } | { kind: 'open' } | { kind: 'domains'; domains: string[] }

// A domain as it appears after the @ of an address normaliseEmail accepts: labels separated by dots.
const DOMAIN_PATTERN = /^[^\s@,.]+(\.[^\s@,.]+)+$/u

/** `closed`, `open` or `domains:a.example,b.example` (as typed by an operator: 400 otherwise,
 *  naming `field`: a provider's createUsers takes the same policy, core/federation). */
export function parseSignupPolicy(raw: string, field = 'signup'): SignupPolicy {
  const value = raw.trim()
  if (value === 'closed' || value === 'open') return { kind: value }
  if (value.startsWith('domains:')) {
    const domains = [...new Set(value.slice('domains:'.length).split(',').map((d) => d.trim().toLowerCase().replace(/^@/, '')).filter((d) => d !== ''))]
    const bad = domains.find((d) => d.length > 253 || !DOMAIN_PATTERN.test(d))
    if (bad === undefined && domains.length > 0 && domains.length <= 100) return { kind: 'domains', domains: domains.sort() }
    if (bad !== undefined) throw badRequest(`${field}: "${bad}" is not an e-mail domain (such as example.com)`)
  }
  throw badRequest(`${field} must be closed, open, or domains: followed by 1 to 100 comma-separated e-mail domains (domains:a.example,b.example)`)
}

/** The stored form: the same policy always reads the same. */
export const formatSignupPolicy = (policy: SignupPolicy): string => (policy.kind === 'domains' ? `domains:${policy.domains.join(',')}` : policy.kind)

/** Whether the policy lets this (normalised) address sign up. */
export function signupAllows(policy: SignupPolicy, email: string): boolean {
  if (policy.kind !== 'domains') return policy.kind === 'open'
  return policy.domains.includes(email.slice(email.lastIndexOf('@') + 1))
}
