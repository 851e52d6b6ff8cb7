import { audit, CLI_ACTOR, type Actor } from './audit'
import type { Deps } from './deps'
import { badRequest, notFound } from './errors'
import type { Tenant } from './types'

export function validateName(field: string, raw: unknown): string {
  const value = typeof raw === 'string' ? raw.trim() : ''
  if (value.length < 1 || value.length > 100) throw badRequest(`${field} must be 1 to 100 characters`)
  return value
}

export async function createTenant(deps: Pick<Deps, 'store' | 'clock'>, name: string, actor: Actor = CLI_ACTOR): Promise<Tenant> {
  const tenant: Tenant = { id: Bun.randomUUIDv7(), name: validateName('Tenant name', name), createdAt: deps.clock.now(), disabledAt: null }
  await deps.store.tenants.insert(tenant)
  await audit(deps, 'tenant.created', actor, { tenantId: tenant.id })
  return tenant
}

export async function getTenant(deps: Pick<Deps, 'store'>, tenantId: string): Promise<Tenant> {
  const tenant = await deps.store.tenants.get(tenantId)
  if (!tenant) throw notFound(`Tenant not found: ${tenantId}`)
  return tenant
}

export async function setTenantDisabled(deps: Pick<Deps, 'store' | 'clock'>, tenantId: string, disabled: boolean, actor: Actor = CLI_ACTOR): Promise<Tenant> {
  const tenant = await deps.store.tenants.setDisabledAt(tenantId, disabled ? deps.clock.now() : null)
  if (!tenant) throw notFound(`Tenant not found: ${tenantId}`)
  await audit(deps, disabled ? 'tenant.disabled' : 'tenant.enabled', actor, { tenantId })
  return tenant
}
