// The relying party of a tenant's passkeys (product spec §19): the RP ID the credentials are
// bound to, and the origins whose pages may run a ceremony. Per tenant, after Keycloak's
// per-realm WebAuthn policy; by default the host and origin of AUTHD_PUBLIC_URL, where authd's
// own pages are served. A browser accepts an RP ID only if it is the page's host or a
// registrable suffix of it, so authd checks the same and `authd doctor` reports a mismatch.
import { tenantTitle } from './title'
import type { Config } from '../../config'
import { audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { badRequest, notFound } from '../errors'
import type { Tenant } from '../types'

export interface RelyingParty {
  rpId: string
  origins: string[]
  /** Shown by the authenticator beside the account. */
  name: string
}

/** The relying party a tenant's ceremonies use. */
export function relyingPartyOf(config: Pick<Config, 'publicUrl'>, tenant: Tenant): RelyingParty {
  const publicUrl = new URL(config.publicUrl)
  return {
    rpId: tenant.passkeyRpId ?? publicUrl.hostname,
    origins: tenant.passkeyOrigins ? (JSON.parse(tenant.passkeyOrigins) as string[]) : [publicUrl.origin],
    name: tenantTitle(tenant),
  }
}

/** Whether a host is an IP address (v4, or v6 in its brackets): browsers refuse one as an RP
 *  ID, so no passkey ceremony can succeed there. */
export const isIpAddress = (host: string) => /^[\d.]+$/.test(host) || host.includes(':')

/** Whether the tenant's pages offer passkeys: not where its RP ID is an IP address (they could
 *  only fail; the server's start and `authd doctor` tell the operator why). */
export const passkeysPossible = (config: Pick<Config, 'publicUrl'>, tenant: Tenant) => !isIpAddress(relyingPartyOf(config, tenant).rpId)

// A host name as WebAuthn accepts one for an RP ID: labels of letters, digits and dashes.
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/

/** Whether a browser on `origin` may use `rpId`: the origin's host is the RP ID or ends in `.` + it. */
export function rpIdFitsOrigin(rpId: string, origin: string): boolean {
  const host = new URL(origin).hostname
  return host === rpId || host.endsWith(`.${rpId}`)
}

/** An RP ID as typed: a host name of two labels or more (or localhost), never an IP address
 *  (browsers refuse those, and a bare top-level domain). */
export function validateRpId(raw: string): string {
  const rpId = raw.trim().toLowerCase()
  const hostName = HOST_NAME.test(rpId) && !/^[\d.]+$/.test(rpId) && (rpId.includes('.') || rpId === 'localhost')
  if (!hostName) throw badRequest('passkeyRpId must be a host name such as example.com (not an IP address or a URL)')
  return rpId
}

/** Origins as typed: 1 to 20 https origins (http only for localhost), no path. */
export function validateOrigins(raw: string[]): string[] {
  if (raw.length < 1 || raw.length > 20) throw badRequest('passkeyOrigins must list 1 to 20 origins')
  return [
    ...new Set(
      raw.map((value) => {
        let url: URL
        try {
          url = new URL(value.trim())
        } catch {
          throw badRequest('passkeyOrigins must be origins such as https://app.example.com')
        }
        const local = url.hostname === 'localhost' || url.hostname.endsWith('.localhost')
        if ((url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) || url.origin !== value.trim().replace(/\/$/, '')) {
          throw badRequest('passkeyOrigins must be origins such as https://app.example.com (https, no path; http only for localhost)')
        }
        return url.origin
      }),
    ),
  ]
}

/**
 * `authd tenants update ID --passkey-rp-id … --passkey-origins …` and the admin API: sets
 * the tenant's relying party. Every origin must fit the RP ID, as a browser would require:
 * a mismatch is a 400 here rather than a ceremony that fails in the user's browser.
 */
export async function setTenantRelyingParty(
  deps: Pick<Deps, 'store' | 'clock' | 'config'>,
  tenantId: string,
  input: { rpId?: string; origins?: string[] },
  actor: Actor = CLI_ACTOR,
): Promise<Tenant> {
  const tenant = await deps.store.tenants.get(tenantId)
  if (!tenant) throw notFound(`Tenant not found: ${tenantId}`)
  const { rpId, origins } = checkRelyingParty(deps.config, tenant, input)
  const updated = await deps.store.tenants.updateSettings(tenantId, { passkeyRpId: rpId, passkeyOrigins: JSON.stringify(origins) })
  if (!updated || updated === 'slug-taken') throw notFound(`Tenant not found: ${tenantId}`)
  await audit(deps, 'tenant.updated', actor, { tenantId, detail: { passkeyRpId: rpId, passkeyOrigins: origins } })
  return updated
}

/** The relying party an input asks for (what it leaves out stays as it is), checked: a 400 naming what is wrong, nothing written. */
export function checkRelyingParty(config: Parameters<typeof relyingPartyOf>[0], tenant: Tenant, input: { rpId?: string; origins?: string[] }): { rpId: string; origins: string[] } {
  const current = relyingPartyOf(config, tenant)
  const rpId = input.rpId === undefined ? current.rpId : validateRpId(input.rpId)
  const origins = input.origins === undefined ? current.origins : validateOrigins(input.origins)
  const misfit = origins.find((origin) => !rpIdFitsOrigin(rpId, origin))
  if (misfit !== undefined) throw badRequest(`passkeyRpId ${rpId} is not the host of ${misfit} nor a suffix of it: browsers would refuse every passkey there`)
  return { rpId, origins }
}
