// A tenant's pages (product spec §20): the slug its pages are found under (`/t/{slug}/`) and
// its branding (display name, accent colour, logo). The CLI (`authd tenants update`) and the
// admin API (`PATCH /api/v1/admin/tenant`) both change them through updateTenantPages, so
// they cannot drift; the pages read a tenant by slug or id through findTenantForPages. The
// origins a sign-in's return_to may lead to are the operator's alone (the CLI, below).
import type { Config } from '../../config'
import { audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { badRequest, conflict, notFoundById } from '../errors'
import { validateName } from './tenants'
import type { Tenant, TenantSettings } from '../types'

// Lower-case letters, digits and inner dashes: safe in a URL path segment as it is, and one
// canonical form, so two tenants cannot hold slugs that differ only in case.
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/
// A slug shaped like a tenant id would make `/t/{id}` ambiguous.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const ACCENT = /^#[0-9a-f]{6}$/
/** A logo is drawn in a small box: 256 KiB is plenty, and keeps the tenant row small. */
export const MAX_LOGO_BYTES = 256 * 1024

export function validateSlug(raw: string): string {
  const slug = raw.trim().toLowerCase()
  if (!SLUG.test(slug) || UUID.test(slug)) throw badRequest('slug must be 1 to 40 lower-case letters, digits and inner dashes, such as acme')
  return slug
}

/** `#rrggbb` only: it is written into the pages' style sheet, so nothing else may pass. */
export function validateAccentColor(raw: string): string {
  const color = raw.trim().toLowerCase()
  if (!ACCENT.test(color)) throw badRequest('accentColor must be a colour written as #rrggbb, such as #0b5fff')
  return color
}

const DNS_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/
const BRACKETED_IPV6 = /^\[[0-9a-f:.]+\]$/

/** Whether a URL's host is a plain name or address: what goes into a CSP source. WHATWG URLs
 *  let `;`, `,`, `*` and `'` through in a host, and each of those would write CSP syntax. */
export const isPlainHost = (url: URL) => DNS_NAME.test(url.hostname) || BRACKETED_IPV6.test(url.hostname)

/** An https URL of an image on the operator's own site (the pages' CSP allows exactly its origin). */
export function validateLogoUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw badRequest('logoUrl must be an https URL')
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '' || raw.trim().length > 500) throw badRequest('logoUrl must be an https URL of at most 500 characters')
  if (!isPlainHost(url)) throw badRequest('logoUrl must name its host as a domain name or an IP address')
  return url.href
}

/** The image types a logo file may have, told by their first bytes (not by a file name).
 *  No SVG: it can carry scripts, and it is served from authd's own origin. */
const LOGO_SIGNATURES: Array<[string, (b: Uint8Array) => boolean]> = [
  ['image/png', (b) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47],
  ['image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38],
  ['image/webp', (b) => String.fromCharCode(...b.subarray(0, 4)) === 'RIFF' && String.fromCharCode(...b.subarray(8, 12)) === 'WEBP'],
]

export function validateLogoImage(bytes: Uint8Array): { logoImage: string; logoContentType: string } {
  if (bytes.byteLength === 0 || bytes.byteLength > MAX_LOGO_BYTES) throw badRequest(`logo must be an image file of at most ${MAX_LOGO_BYTES / 1024} KiB`)
  const type = LOGO_SIGNATURES.find(([, matches]) => matches(bytes))?.[0]
  if (!type) throw badRequest('logo must be a PNG, JPEG, GIF or WebP image')
  return { logoImage: Buffer.from(bytes).toString('base64'), logoContentType: type }
}

/** What may be changed; null clears a setting (back to the default). */
export interface TenantPagesInput {
  slug?: string | null
  displayName?: string | null
  accentColor?: string | null
  logoUrl?: string | null
  /** A logo file's bytes, served by authd (it replaces a logo URL, and the other way round). */
  logo?: Uint8Array | null
}

/** The changes a pages input asks for, each checked (a 400 naming the field), nothing written. */
export function checkTenantPages(input: TenantPagesInput): Partial<TenantSettings> {
  const changes: Partial<TenantSettings> = {}
  const set = <K extends Exclude<keyof TenantSettings, 'consoleEnabled'>>(key: K, raw: string | null | undefined, validate: (v: string) => TenantSettings[K]) => {
    if (raw !== undefined) changes[key] = raw === null ? null : validate(raw)
  }
  set('slug', input.slug, validateSlug)
  set('displayName', input.displayName, (v) => validateName('displayName', v))
  set('accentColor', input.accentColor, validateAccentColor)
  set('logoUrl', input.logoUrl, validateLogoUrl)
  if (input.logoUrl) Object.assign(changes, { logoImage: null, logoContentType: null })
  if (input.logo !== undefined) {
    Object.assign(changes, input.logo === null ? { logoImage: null, logoContentType: null } : { ...validateLogoImage(input.logo), logoUrl: null })
  }
  return changes
}

/** `authd tenants update ID --slug … --display-name … --accent-color … --logo-url … --logo FILE`
 *  and `PATCH /api/v1/admin/tenant`. */
export async function updateTenantPages(deps: Pick<Deps, 'store' | 'clock'>, tenantId: string, input: TenantPagesInput, actor: Actor = CLI_ACTOR): Promise<Tenant> {
  const changes = checkTenantPages(input)
  if (Object.keys(changes).length === 0) {
    const tenant = await deps.store.tenants.get(tenantId)
    if (!tenant) throw notFoundById('Tenant', tenantId)
    return tenant
  }
  const updated = await deps.store.tenants.updateSettings(tenantId, changes)
  if (updated === 'slug-taken') throw conflict(`The slug ${changes.slug} belongs to another tenant`)
  if (!updated) throw notFoundById('Tenant', tenantId)
  // The logo's bytes are no news for the audit log: only that it changed.
  const { logoImage, logoContentType, ...detail } = changes
  await audit(deps, 'tenant.updated', actor, { tenantId, detail: { ...detail, ...(logoImage !== undefined && { logo: logoImage === null ? 'removed' : logoContentType }) } })
  return updated
}

/** The tenant named in a page's URL, by slug or by id; null for none (or a disabled one). */
export async function findTenantForPages(deps: Pick<Deps, 'store'>, ref: string): Promise<Tenant | null> {
  const tenant = UUID.test(ref) ? await deps.store.tenants.get(ref.toLowerCase()) : SLUG.test(ref) ? await deps.store.tenants.findBySlug(ref) : null
  return tenant && tenant.disabledAt === null ? tenant : null
}

/** Where a tenant's pages live: `{AUTHD_PUBLIC_URL}/t/{slug or id}`. */
export const tenantPagesUrl = (config: Pick<Config, 'publicUrl'>, tenant: Pick<Tenant, 'id' | 'slug'>) => `${config.publicUrl.replace(/\/$/, '')}/t/${tenant.slug ?? tenant.id}`

/** A tenant's pages settings, as the admin API and the CLI show them (never the logo's bytes). */
export function toTenantPagesView(config: Pick<Config, 'publicUrl'>, tenant: Tenant) {
  return {
    slug: tenant.slug,
    displayName: tenant.displayName,
    accentColor: tenant.accentColor,
    logoUrl: tenant.logoUrl,
    logoFile: tenant.logoContentType,
    pagesUrl: tenantPagesUrl(config, tenant),
    returnToOrigins: returnToOriginsOf(tenant),
  }
}

// Where a sign-in on the tenant's pages may send the browser afterwards (`return_to`): authd
// itself, and the origins the operator registered with `authd tenants update
// --return-to-origin`. The operator's alone: a tenant admin key that could set one would turn
// authd's trusted address into a redirector to any site (a phishing link that starts at authd
// and ends on a look-alike). So nothing a tenant admin controls (passkey origins, OpenID
// clients' redirect URIs, the logo URL) is one, and updateTenantPages takes none.
const MAX_RETURN_TO_ORIGINS = 20
const RETURN_TO_FORM = 'returnToOrigins must be origins such as https://app.example.com (https, no path; http only for a loopback host)'

// Names and addresses only this machine answers to: http is allowed there (an app in
// development), since no one between the browser and the app can read or change the traffic.
const isLoopbackHost = (host: string) => host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]'

/** The tenant's registered return_to origins (none: empty). */
export function returnToOriginsOf(tenant: Pick<Tenant, 'returnToOrigins'>): string[] {
  if (!tenant.returnToOrigins) return []
  const stored: unknown = JSON.parse(tenant.returnToOrigins)
  return Array.isArray(stored) ? stored.filter((origin): origin is string => typeof origin === 'string') : []
}

/** Origins as typed: at most 20, each an origin alone (scheme, host, port), as strictly as
 *  passkey origins; its host plain, since it is written into the pages' CSP form-action. */
export function validateReturnToOrigins(raw: string[]): string[] {
  if (raw.length > MAX_RETURN_TO_ORIGINS) throw badRequest(`returnToOrigins must list at most ${MAX_RETURN_TO_ORIGINS} origins`)
  const origins = raw.map((typed) => {
    const value = typed.trim()
    let url: URL
    try {
      url = new URL(value)
    } catch {
      throw badRequest(RETURN_TO_FORM)
    }
    const scheme = url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))
    if (!scheme || url.origin !== value.replace(/\/$/, '') || !isPlainHost(url)) throw badRequest(RETURN_TO_FORM)
    return url.origin
  })
  return [...new Set(origins)]
}

/** `authd tenants update ID --return-to-origin …` (the CLI's alone: no route calls it):
 *  replaces the tenant's list; an empty one clears it (authd's own pages only). */
export async function setTenantReturnToOrigins(deps: Pick<Deps, 'store' | 'clock'>, tenantId: string, raw: string[], actor: Actor = CLI_ACTOR): Promise<Tenant> {
  const origins = validateReturnToOrigins(raw)
  const updated = await deps.store.tenants.updateSettings(tenantId, { returnToOrigins: origins.length === 0 ? null : JSON.stringify(origins) })
  if (!updated || updated === 'slug-taken') throw notFoundById('Tenant', tenantId)
  await audit(deps, 'tenant.updated', actor, { tenantId, detail: { returnToOrigins: origins } })
  return updated
}
