import { audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { badRequest, conflict, notFoundById } from '../errors'
import { relyingPartyOf } from './relying-party'
import { TENANT_SETTINGS_UNSET, type Tenant } from '../types'

import { validateName } from '../names'

export { tenantTitle } from './title'
export { validateName }

/** Every tenant's tokens carry an audience of their own, so a resource server that checks
 *  `aud` never accepts another tenant's token. By default it is derived from the tenant id. */

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
  return { id, name: validateName('Tenant name', input.name), createdAt: deps.clock.now(), disabledAt: null, audience, signup: 'closed', consoleEnabled: true, ...TENANT_SETTINGS_UNSET }
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

/** `authd tenants update --console on|off`: the operator's switch of the tenant's admin console (product spec §27). */
export async function setTenantConsole(deps: Pick<Deps, 'store' | 'clock'>, tenantId: string, enabled: boolean, actor: Actor = CLI_ACTOR): Promise<Tenant> {
  const tenant = await deps.store.tenants.updateSettings(tenantId, { consoleEnabled: enabled })
  if (!tenant || tenant === 'slug-taken') throw notFoundById('Tenant', tenantId)
  await audit(deps, 'tenant.updated', actor, { tenantId, detail: { console: enabled ? 'on' : 'off' } })
  return tenant
}

/** A tenant's settings as the admin API shows them: the passkey relying party in force (its
 *  defaults filled in from AUTHD_PUBLIC_URL). */
export function toTenantSettingsView(deps: Pick<Deps, 'config'>, tenant: Tenant) {
  const rp = relyingPartyOf(deps.config, tenant)
  return { tenantId: tenant.id, name: tenant.name, audience: tenant.audience, signup: tenant.signup, passkeyRpId: rp.rpId, passkeyOrigins: rp.origins }
}
