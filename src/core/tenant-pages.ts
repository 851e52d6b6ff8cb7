// A tenant's pages (product spec §20): the slug its pages are found under (`/t/{slug}/`) and
// its branding (display name, accent colour, logo). The CLI (`authd tenants update`) and the
// admin API (`PATCH /api/v1/admin/tenant`) both change them through updateTenantPages, so
// they cannot drift; the pages read a tenant by slug or id through findTenantForPages.
import type { Config } from '../config'
import { audit, CLI_ACTOR, type Actor } from './audit'
import type { Deps } from './deps'
import { badRequest, conflict, notFoundById } from './errors'
import { validateName } from './tenants'
import type { Tenant, TenantSettings } from './types'

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

function settingsFrom(input: TenantPagesInput): Partial<TenantSettings> {
  const changes: Partial<TenantSettings> = {}
  const set = <K extends keyof TenantSettings>(key: K, raw: string | null | undefined, validate: (v: string) => TenantSettings[K]) => {
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
  const changes = settingsFrom(input)
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
  }
}
