// The settings of an upstream provider (product spec §25), each checked as typed by an admin:
// a 400 that names the field and what it must be. None ever repeats a client secret.
import type { Deps } from '../deps'
import { badRequest } from '../errors'
import { requireGroupNames, validateGroupName } from '../groups/groups'
import { validateName } from '../names'
import { formatSignupPolicy, parseSignupPolicy } from '../tenants/signup-policy'
import { LINK_BY_EMAIL, type LinkByEmail } from './types'

export const MAX_NAME = 64
const MAX_CLIENT_ID = 255
const MAX_SECRET = 1024
const MAX_SCOPES = 1000
const MAX_UPSTREAM_GROUP = 256
/** Mapped upstream groups at most: each is looked up at every sign-in through the provider. */
export const MAX_GROUP_MAP = 100
const CONTROL = /\p{Cc}/u
const GROUPS_CLAIM = /^[A-Za-z0-9_.:/-]{1,64}$/
// RFC 6749 §3.3's scope-token: printable ASCII but space, `"` and `\`.
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/

/** The name on the login page's button ("Continue with {name}"): one line, 1 to 64 characters. */
export const validateProviderName = (raw: unknown) => validateName('name', raw, MAX_NAME)

export function validateClientId(raw: unknown): string {
  const value = typeof raw === 'string' ? raw.trim() : ''
  if (value.length < 1 || value.length > MAX_CLIENT_ID || CONTROL.test(value)) throw badRequest(`clientId must be 1 to ${MAX_CLIENT_ID} characters without control characters`)
  return value
}

/** Taken as given (never trimmed, never shown back): only its length and characters are checked. */
export function validateClientSecret(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length < 1 || raw.length > MAX_SECRET || CONTROL.test(raw)) throw badRequest(`clientSecret must be 1 to ${MAX_SECRET} characters without control characters`)
  return raw
}

/** Space-separated scope tokens, each once; an OpenID Connect provider's must include openid
 *  (without it the upstream answers with no ID token, and nothing says who signed in). */
export function validateScopes(raw: unknown, openId: boolean): string {
  if (typeof raw !== 'string' || raw.length > MAX_SCOPES) throw badRequest(`scopes must be a space-separated list of at most ${MAX_SCOPES} characters`)
  const tokens = [...new Set(raw.split(/\s+/).filter((token) => token !== ''))]
  if (tokens.length === 0) throw badRequest('scopes must name at least one scope')
  const bad = tokens.find((token) => !SCOPE_TOKEN.test(token))
  if (bad !== undefined) throw badRequest(`scopes: ${JSON.stringify(bad.slice(0, 50))} is not a scope (printable ASCII without " or \\)`)
  if (openId && !tokens.includes('openid')) throw badRequest('scopes must include openid for an OpenID Connect provider')
  return tokens.join(' ')
}

export function validateLinkByEmail(raw: unknown): LinkByEmail {
  if (typeof raw !== 'string' || !(LINK_BY_EMAIL as readonly string[]).includes(raw)) throw badRequest(`linkByEmail must be one of ${LINK_BY_EMAIL.join(', ')}`)
  return raw as LinkByEmail
}

/** `open`, `closed` or `domains:a.example,…` as stored; null (or ""): the tenant's sign-up policy. */
export function validateCreateUsers(raw: unknown): string | null {
  if (raw === null || raw === '') return null
  if (typeof raw !== 'string') throw badRequest('createUsers must be open, closed, domains:a.example,… or null (the tenant\'s sign-up policy)')
  return formatSignupPolicy(parseSignupPolicy(raw, 'createUsers'))
}

export function validateTrustUpstreamMfa(raw: unknown): boolean {
  if (typeof raw !== 'boolean') throw badRequest('trustUpstreamMfa must be true or false')
  return raw
}

/** The claim that lists the person's upstream groups; null (or ""): groups are not synced. */
export function validateGroupsClaim(raw: unknown): string | null {
  if (raw === null || raw === '') return null
  if (typeof raw !== 'string' || !GROUPS_CLAIM.test(raw)) throw badRequest('groupsClaim must be 1 to 64 characters of A-Z, a-z, 0-9, "_", ".", ":", "/" and "-"')
  return raw
}

/**
 * `{upstream group: local group}` as stored (a JSON object by upstream name), each local group
 * one of the tenant's (an unknown one is a 400 naming it); null (or {}): nothing mapped.
 */
export async function validateGroupMap(deps: Pick<Deps, 'store'>, tenantId: string, raw: unknown): Promise<string | null> {
  if (raw === null) return null
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('groupMap must be an object of upstream group names to local group names, or null')
  const entries = Object.entries(raw as Record<string, unknown>)
  if (entries.length === 0) return null
  if (entries.length > MAX_GROUP_MAP) throw badRequest(`groupMap may map at most ${MAX_GROUP_MAP} upstream groups`)
  const map = entries.map(([upstream, local]): [string, string] => {
    if (upstream.length < 1 || upstream.length > MAX_UPSTREAM_GROUP || CONTROL.test(upstream)) throw badRequest(`groupMap: upstream group names must be 1 to ${MAX_UPSTREAM_GROUP} characters without control characters`)
    try {
      return [upstream, validateGroupName(local)]
    } catch {
      throw badRequest(`groupMap: ${JSON.stringify(String(local).slice(0, 70))} (for ${JSON.stringify(upstream.slice(0, 70))}) is not a group name`)
    }
  })
  await requireGroupNames(deps, tenantId, map.map(([, local]) => local))
  return JSON.stringify(Object.fromEntries(map.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))))
}

/** The stored map as an object ({} when nothing is mapped). */
export const groupMapOf = (stored: string | null): Record<string, string> => (stored === null ? {} : (JSON.parse(stored) as Record<string, string>))
