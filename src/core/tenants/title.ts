// How a tenant is called where its users read it.
import type { Tenant } from '../types'

/** The tenant as its users know it: its display name (branding), else its name. Pages and mails say this. */
export const tenantTitle = (tenant: Pick<Tenant, 'name' | 'displayName'>) => tenant.displayName ?? tenant.name
