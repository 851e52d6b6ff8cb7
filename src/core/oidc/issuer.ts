// Which tenant an issuer URL names (product spec §21). A tenant's issuer is spelled with its slug
// or its id, and each spelling is an issuer of its own (a code is redeemed, an ID token accepted,
// at the one it came from): one client configuration is one issuer URL. The id is spelled in
// lower case only: `/t/0198ABCD-…` is no issuer, where a case-insensitive match would make one
// tenant answer to ever more issuer strings.
import type { Deps } from '../deps'
import { notFound } from '../errors'
import { findTenantForPages } from '../tenants/tenant-pages'
import type { Tenant } from '../types'
import { invalidToken } from './errors'

/** Whether the tenant part of an issuer URL is spelled as issuers are (lower case). */
export const isIssuerSpelling = (tenantRef: string) => tenantRef === tenantRef.toLowerCase()

/**
 * The enabled tenant an issuer URL names; a 404 otherwise.
 * @param bearer the request carries a bearer token (userinfo): a disabled tenant's tokens are
 *   invalid (401 invalid_token, as RFC 6750 has the client drop them), not a missing page
 */
export async function tenantOfIssuer(deps: Pick<Deps, 'store'>, tenantRef: string, bearer = false): Promise<Tenant> {
  if (!isIssuerSpelling(tenantRef)) throw notFound()
  const tenant = await findTenantForPages(deps, tenantRef)
  if (tenant) return tenant
  if (bearer && tenantRef.length <= 64) {
    const disabled = /^[0-9a-f-]{36}$/.test(tenantRef) ? await deps.store.tenants.get(tenantRef) : await deps.store.tenants.findBySlug(tenantRef)
    if (disabled) throw invalidToken()
  }
  throw notFound()
}
