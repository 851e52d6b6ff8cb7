import { audit, CLI_ACTOR, type Actor } from './audit'
import type { Deps } from './deps'
import { badRequest, conflict, notFoundById } from './errors'
import { relyingPartyOf } from './passkeys/relying-party'
import { TENANT_SETTINGS_UNSET, type Tenant } from './types'

/**
 * Characters a name may not hold: controls (line breaks and tabs among them), line and
 * paragraph separators, surrogates, private-use and unassigned code points, and format
 * characters (bidi overrides that reorder the text around them, invisible marks). A name is
 * shown in mails and pages beside the tenant's own words, so it must not be able to start a
 * line of its own or hide what follows it (product spec §18). The zero-width (non-)joiner
 * stay: Persian, Hindi and emoji sequences need them to be written correctly.
 */
const FORBIDDEN_IN_NAMES = /[\p{Cc}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\uFFFD]|(?![\u200c\u200d])[\p{Cf}\p{Default_Ignorable_Code_Point}]/u
// Invisible fillers and blanks that are letters or symbols to Unicode (Hangul fillers, the
// braille blank): a name of nothing but these shows as empty.
const BLANK = /[\s\u115f\u1160\u2800\u3164\uffa0\u200c\u200d]/gu
// More combining marks on one letter than any script writes stack into unreadable text.
const STACKED_MARKS = /\p{M}{5,}/u

/** A name (user, tenant, API key): one line of 1 to 100 characters, trimmed, something
 *  visible in it. (U+FFFD, the replacement character, is what invalid UTF-8 becomes.) */
export function validateName(field: string, raw: unknown): string {
  const value = typeof raw === 'string' ? raw.trim() : ''
  if (value.length < 1 || value.length > 100) throw badRequest(`${field} must be 1 to 100 characters`)
  if (FORBIDDEN_IN_NAMES.test(value) || STACKED_MARKS.test(value)) throw badRequest(`${field} must be a single line without control or formatting characters`)
  if (value.replace(BLANK, '') === '') throw badRequest(`${field} must have a visible character`)
  return value
}

/** Every tenant's tokens carry an audience of their own, so a resource server that checks
 *  `aud` never accepts another tenant's token. By default it is derived from the tenant id. */
/** The tenant as its users know it: its display name (branding), else its name. Pages and mails say this. */
export const tenantTitle = (tenant: Pick<Tenant, 'name' | 'displayName'>) => tenant.displayName ?? tenant.name

export const defaultAudience = (tenantId: string) => `urn:authd:tenant:${tenantId}`

/** An audience as typed for `tenantId`. authd's own form (urn:authd:tenant:…) is reserved to
 *  the tenant it names: another tenant holding it would make that tenant's default audience
 *  unusable, and a resource server set up for it would accept the other's tokens. */
export function validateAudience(raw: unknown, tenantId: string): string {
  const value = typeof raw === 'string' ? raw.trim() : ''
  if (!/^[\x21-\x7e]{1,200}$/.test(value)) throw badRequest('Audience must be 1 to 200 printable ASCII characters without spaces')
  if (value.toLowerCase().startsWith('urn:authd:') && value.toLowerCase() !== defaultAudience(tenantId).toLowerCase()) {
    throw badRequest(`Audience urn:authd:… is reserved: only ${defaultAudience(tenantId)} may be given for this tenant`)
  }
  return value
}

const audienceTaken = (audience: string) => conflict(`Audience ${audience} belongs to another tenant`)

export async function createTenant(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { name: string; audience?: string },
  actor: Actor = CLI_ACTOR,
): Promise<Tenant> {
  const tenant = newTenant(deps, input)
  if (!(await deps.store.tenants.insert(tenant))) throw audienceTaken(tenant.audience)
  await audit(deps, 'tenant.created', actor, { tenantId: tenant.id, detail: { audience: tenant.audience } })
  return tenant
}

/** A validated tenant record; nothing is stored yet. */
export function newTenant(deps: Pick<Deps, 'clock'>, input: { name: string; audience?: string }): Tenant {
  const id = Bun.randomUUIDv7()
  const audience = input.audience === undefined ? defaultAudience(id) : validateAudience(input.audience, id)
  return { id, name: validateName('Tenant name', input.name), createdAt: deps.clock.now(), disabledAt: null, audience, signup: 'closed', ...TENANT_SETTINGS_UNSET }
}

/** `authd tenants update ID --audience A`: tokens issued from now on carry the new audience. */
export async function setTenantAudience(deps: Pick<Deps, 'store' | 'clock'>, tenantId: string, audience: string, actor: Actor = CLI_ACTOR): Promise<Tenant> {
  const value = validateAudience(audience, tenantId)
  const tenant = await deps.store.tenants.setAudience(tenantId, value)
  if (tenant === 'audience-taken') throw audienceTaken(value)
  if (!tenant) throw notFoundById('Tenant', tenantId)
  await audit(deps, 'tenant.updated', actor, { tenantId, detail: { audience: value } })
  return tenant
}

export async function getTenant(deps: Pick<Deps, 'store'>, tenantId: string): Promise<Tenant> {
  const tenant = await deps.store.tenants.get(tenantId)
  if (!tenant) throw notFoundById('Tenant', tenantId)
  return tenant
}

export async function setTenantDisabled(deps: Pick<Deps, 'store' | 'clock'>, tenantId: string, disabled: boolean, actor: Actor = CLI_ACTOR): Promise<Tenant> {
  const tenant = await deps.store.tenants.setDisabledAt(tenantId, disabled ? deps.clock.now() : null)
  if (!tenant) throw notFoundById('Tenant', tenantId)
  await audit(deps, disabled ? 'tenant.disabled' : 'tenant.enabled', actor, { tenantId })
  return tenant
}

/** A tenant's settings as the admin API shows them: the passkey relying party in force (its
 *  defaults filled in from AUTHD_PUBLIC_URL). */
export function toTenantSettingsView(deps: Pick<Deps, 'config'>, tenant: Tenant) {
  const rp = relyingPartyOf(deps.config, tenant)
  return { tenantId: tenant.id, name: tenant.name, audience: tenant.audience, signup: tenant.signup, passkeyRpId: rp.rpId, passkeyOrigins: rp.origins }
}
