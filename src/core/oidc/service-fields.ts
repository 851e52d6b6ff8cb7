// The fields of a service client (product spec §26): the scopes it may ask for, the audiences
// (RFC 8707 resources) its tokens may name, and its tokens' lifetime. Checked here once, for the
// CLI and the admin API alike.
import { badRequest } from '../errors'

const MAX_SCOPES = 50
const MAX_AUDIENCES = 20
/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/
/** Scopes of a person's sign-in, which a token with no user cannot carry. */
const USER_SCOPES = new Set(['openid', 'offline_access', 'profile', 'email', 'groups'])
export const DEFAULT_TOKEN_LIFETIME_SEC = 900
const MIN_LIFETIME_SEC = 60
const MAX_LIFETIME_SEC = 86_400
const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600 }

export function validateScopes(raw: unknown): string[] {
  if (!Array.isArray(raw) || raw.length > MAX_SCOPES) throw badRequest(`scopes must be a list of at most ${MAX_SCOPES} scopes`)
  for (const scope of raw) {
    if (typeof scope !== 'string' || !SCOPE_TOKEN.test(scope)) throw badRequest('scopes must be scope tokens (printable ASCII without spaces, quotes or backslashes, at most 100 characters)')
    if (USER_SCOPES.has(scope)) throw badRequest(`scopes must not name ${scope}: a service token has no user`)
  }
  return [...new Set(raw as string[])]
}

/**
 * An audience as RFC 8707 writes a resource: an absolute URI without a fragment (a URN such as
 * the tenant's default urn:authd:tenant:… is one), compared character for character.
 */
export function validateAudiences(raw: unknown, publicUrl: string): string[] {
  if (!Array.isArray(raw) || raw.length > MAX_AUDIENCES) throw badRequest(`audiences must be a list of at most ${MAX_AUDIENCES} absolute URIs`)
  // authd's own issuers are the audience of every OpenID access token of their tenant: a client
  // holding one would read all of them at introspection, and mint tokens shaped like users'.
  const issuers = `${publicUrl.replace(/\/+$/, '')}/t/`
  for (const audience of raw) {
    if (typeof audience !== 'string' || audience.length === 0 || audience.length > 2000 || audience.includes('#') || /\s/.test(audience) || !URL.canParse(audience)) {
      throw badRequest('audiences must be absolute URIs without a fragment, of at most 2000 characters')
    }
    if (audience.startsWith(issuers)) throw badRequest(`audiences must not be an issuer of authd (${audience}): its OpenID access tokens name it, and a client holding it would read every user's`)
  }
  return [...new Set(raw as string[])]
}

/** Seconds (an integer), or a duration such as "15m", "900s" or "1h": one minute to one day. */
export function validateTokenLifetime(raw: unknown): number {
  let seconds = NaN
  if (typeof raw === 'number') seconds = raw
  else if (typeof raw === 'string') {
    const match = /^(\d{1,6})([smh]?)$/.exec(raw.trim())
    if (match) seconds = Number(match[1]) * UNITS[match[2] || 's']!
  }
  if (!Number.isSafeInteger(seconds) || seconds < MIN_LIFETIME_SEC || seconds > MAX_LIFETIME_SEC) {
    throw badRequest('tokenLifetime must be seconds or a duration such as 15m or 1h, from 1 minute to 24 hours')
  }
  return seconds
}
