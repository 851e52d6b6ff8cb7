// What each type of upstream provider (product spec §25) brings with it: the name its button
// shows, whether it speaks OpenID Connect, the scopes it is asked for, whether an identity may
// be linked by a verified address without asking, and where its issuer comes from.
import { badRequest } from '../errors'
import { PROVIDER_TYPES, type LinkByEmail, type ProviderType } from './types'

export interface Preset {
  /** The default name; null: it must be given. */
  name: string | null
  /** Whether it is an OpenID Connect provider (ID token, discovery); github is OAuth 2.0 and GitHub's API. */
  openId: boolean
  scopes: string
  linkByEmail: LinkByEmail
  /**
   * fixed: always `value`; entra: from entraTenant; required: must be given; optional: `value`
   * unless given (github: null is github.com, a value a GitHub Enterprise Server).
   */
  issuer: { kind: 'fixed'; value: string } | { kind: 'entra' } | { kind: 'required' } | { kind: 'optional'; value: string | null }
}

const OPENID_SCOPES = 'openid email profile'

// `verified` only where the upstream's own word on an address can be trusted (§25 rule 2): the
// big providers that check addresses; a generic issuer or GitHub is asked for proof instead.
export const PRESETS: Record<ProviderType, Preset> = {
  oidc: { name: null, openId: true, scopes: OPENID_SCOPES, linkByEmail: 'never', issuer: { kind: 'required' } },
  google: { name: 'Google', openId: true, scopes: OPENID_SCOPES, linkByEmail: 'verified', issuer: { kind: 'fixed', value: 'https://accounts.google.com' } },
  microsoft: { name: 'Microsoft', openId: true, scopes: OPENID_SCOPES, linkByEmail: 'verified', issuer: { kind: 'entra' } },
  gitlab: { name: 'GitLab', openId: true, scopes: OPENID_SCOPES, linkByEmail: 'verified', issuer: { kind: 'optional', value: 'https://gitlab.com' } },
  github: { name: 'GitHub', openId: false, scopes: 'read:user user:email', linkByEmail: 'never', issuer: { kind: 'optional', value: null } },
}

export function validateType(raw: unknown): ProviderType {
  if (typeof raw !== 'string' || !(PROVIDER_TYPES as readonly string[]).includes(raw)) throw badRequest(`type must be one of ${PROVIDER_TYPES.join(', ')}`)
  return raw as ProviderType
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])
const MAX_ISSUER = 2000

/**
 * An issuer (or a GitHub Enterprise Server's base URL) as stored: https, or http on the
 * loopback interface only (a test upstream on this machine); no user info, query or fragment,
 * which an issuer identifier never has (OpenID Connect Discovery §2); no trailing slash, as the
 * big providers write theirs.
 */
export function validateIssuer(raw: unknown): string {
  const hint = 'issuer must be an https URL such as https://login.example.com (http only on localhost, 127.0.0.1 or [::1])'
  if (typeof raw !== 'string' || raw.trim() === '' || raw.length > MAX_ISSUER) throw badRequest(hint)
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw badRequest(hint)
  }
  if (url.username || url.password) throw badRequest('issuer must not carry a user name or password')
  if (url.search || url.hash || raw.includes('?') || raw.includes('#')) throw badRequest('issuer must not have a query or a fragment')
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname)))) throw badRequest(hint)
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

const ENTRA_TENANT = /^(organizations|common|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/

/** Microsoft Entra's issuer for `organizations` (work and school accounts), `common` (those and personal ones) or one directory's tenant id. */
export function entraIssuer(raw: unknown): string {
  const tenant = typeof raw === 'string' ? raw.trim().toLowerCase() : ''
  if (!ENTRA_TENANT.test(tenant)) throw badRequest('entraTenant must be organizations, common, or a Microsoft Entra tenant id (a GUID such as 72f988bf-86f1-41af-91ab-2d7cd011db47)')
  return `https://login.microsoftonline.com/${tenant}/v2.0`
}

/**
 * The issuer of a provider of `type` from what was given (undefined: not given). Given where
 * the type takes none is a 400 rather than ignored: a setting that silently does nothing is
 * a sign-in that goes somewhere else than the admin thinks.
 */
export function issuerOf(type: ProviderType, given: { issuer?: unknown; entraTenant?: unknown }): string | null {
  const preset = PRESETS[type].issuer
  if (given.entraTenant !== undefined && preset.kind !== 'entra') throw badRequest(`entraTenant applies to microsoft only`)
  switch (preset.kind) {
    case 'fixed':
      if (given.issuer !== undefined && given.issuer !== null) throw badRequest(`issuer is not taken for ${type}: its issuer is ${preset.value}`)
      return preset.value
    case 'entra':
      if (given.issuer !== undefined && given.issuer !== null) throw badRequest('issuer is not taken for microsoft: give entraTenant (organizations, common or a tenant id), from which it follows')
      if (given.entraTenant === undefined || given.entraTenant === null) throw badRequest('entraTenant is required for microsoft: organizations, common, or a Microsoft Entra tenant id')
      return entraIssuer(given.entraTenant)
    case 'required':
      if (given.issuer === undefined || given.issuer === null || given.issuer === '') throw badRequest(`issuer is required for ${type}: the URL of the OpenID Provider whose discovery document configures the sign-in`)
      return validateIssuer(given.issuer)
    case 'optional':
      return given.issuer === undefined || given.issuer === null || given.issuer === '' ? preset.value : validateIssuer(given.issuer)
  }
}
