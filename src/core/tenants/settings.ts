// A tenant admin's settings in one change (PATCH /api/v1/admin/tenant and the console's
// settings, product spec §27): the pages' slug and branding, the passkeys' relying party and
// the sign-up policy. Every field is checked before anything is written, and the change is one
// write: a refusal of any field leaves all of them as they were (a slug changed while the
// sign-up policy was refused had moved the tenant's pages, behind a 400).
import { audit, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { conflict, notFoundById } from '../errors'
import { formatSignupPolicy, parseSignupPolicy } from './signup-policy'
import type { Tenant, TenantSettings } from '../types'
import { checkRelyingParty } from './relying-party'
import { checkTenantPages, type TenantPagesInput } from './tenant-pages'
import { getTenant } from './tenants'

export interface TenantSettingsInput {
  pages?: TenantPagesInput
  relyingParty?: { rpId?: string; origins?: string[] }
  signup?: string
}

export async function updateTenantSettings(deps: Pick<Deps, 'store' | 'clock' | 'config'>, tenantId: string, input: TenantSettingsInput, actor: Actor): Promise<Tenant> {
  const tenant = await getTenant(deps, tenantId)
  const changes: Partial<TenantSettings & Pick<Tenant, 'signup'>> = input.pages ? checkTenantPages(input.pages) : {}
  const detail: Record<string, unknown> = {}
  if (input.relyingParty && (input.relyingParty.rpId !== undefined || input.relyingParty.origins !== undefined)) {
    const { rpId, origins } = checkRelyingParty(deps.config, tenant, input.relyingParty)
    Object.assign(changes, { passkeyRpId: rpId, passkeyOrigins: JSON.stringify(origins) })
    Object.assign(detail, { passkeyRpId: rpId, passkeyOrigins: origins })
  }
  if (input.signup !== undefined) changes.signup = formatSignupPolicy(parseSignupPolicy(input.signup))
  if (Object.keys(changes).length === 0) return tenant
  const updated = await deps.store.tenants.updateSettings(tenantId, changes)
  if (updated === 'slug-taken') throw conflict(`The slug ${changes.slug} belongs to another tenant`)
  if (!updated) throw notFoundById('Tenant', tenantId)
  // (the logo's bytes are no news for the audit log: only that it changed)
  const { logoImage, logoContentType, passkeyRpId: _, passkeyOrigins: __, ...rest } = changes
  await audit(deps, 'tenant.updated', actor, { tenantId, detail: { ...rest, ...detail, ...(logoImage !== undefined && { logo: logoImage === null ? 'removed' : logoContentType }) } })
  return updated
}
