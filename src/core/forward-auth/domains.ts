// The protected domains of a tenant (product spec §24): the domains whose applications authd
// guards at their reverse proxy. After a sign-in on the pages authd sets one session cookie for
// the whole domain, so authd's own host must lie inside it (auth.example.com for example.com):
// a browser takes a cookie only for a domain of the host that sets it. They are the operator's
// to set (`authd tenants update --forward-auth-domain`), never a tenant admin key's: a sign-in's
// return_to may lead anywhere on them.
import type { Config } from '../../config'
import { audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { badRequest, notFoundById } from '../errors'
import type { Tenant } from '../types'

const MAX_DOMAINS = 20
/** A DNS name of at least two labels whose last is no number (so never an IP address). */
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** Whether `host` is `domain` or a host under it. */
export const isWithin = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`)

/** A domain as typed (`Example.COM`, `.example.com`): lower-case, no leading dot; else a 400 naming it. */
export function validateDomainName(raw: string, what = 'a forward-auth domain'): string {
  const domain = raw.trim().toLowerCase().replace(/^\./, '')
  if (!DOMAIN.test(domain)) throw badRequest(`${JSON.stringify(raw.trim().slice(0, 100))} is not ${what}: give a DNS name such as example.com`)
  return domain
}

/** The tenant's protected domains (none: empty). */
export function forwardAuthDomainsOf(tenant: Pick<Tenant, 'forwardAuthDomains'>): string[] {
  if (!tenant.forwardAuthDomains) return []
  const stored: unknown = JSON.parse(tenant.forwardAuthDomains)
  return Array.isArray(stored) ? stored.filter((domain): domain is string => typeof domain === 'string') : []
}

/**
 * The Domain attribute of the tenant's session cookie: the widest protected domain that holds
 * authd's own host, so the cookie reaches every protected application; null when none does
 * (AUTHD_PUBLIC_URL moved off them: no cookie is set, and `authd doctor` says why).
 */
export function cookieDomainOf(domains: string[], publicUrl: string): string | null {
  const host = new URL(publicUrl).hostname
  const holding = domains.filter((domain) => isWithin(host, domain))
  return holding.sort((a, b) => a.length - b.length)[0] ?? null
}

/** Whether a URL is on one of the tenant's protected domains, by a scheme its cookie goes with. */
export function isOnProtectedDomain(domains: string[], url: URL, publicUrl: string): boolean {
  // Over http only where authd itself is (a test or a home network without TLS): an https
  // authd's cookie is Secure and an http page would never receive it.
  const scheme = url.protocol === 'https:' || (url.protocol === 'http:' && publicUrl.startsWith('http:'))
  return scheme && url.username === '' && url.password === '' && domains.some((domain) => isWithin(url.hostname, domain))
}

/**
 * The domains as typed: each a DNS name, at most 20, and together reachable by one cookie set
 * from authd's host: one of them holds that host, and every other lies inside that one.
 */
export function validateForwardAuthDomains(raw: string[], config: Pick<Config, 'publicUrl'>): string[] {
  const domains = [...new Set(raw.map((typed) => validateDomainName(typed)))]
  if (domains.length === 0) return []
  if (domains.length > MAX_DOMAINS) throw badRequest(`Give at most ${MAX_DOMAINS} forward-auth domains`)
  const host = new URL(config.publicUrl).hostname
  const cookieDomain = cookieDomainOf(domains, config.publicUrl)
  if (!cookieDomain) {
    throw badRequest(`authd's public URL (${config.publicUrl}) must be on a host inside a forward-auth domain, so that its session cookie reaches the applications: set AUTHD_PUBLIC_URL to an address such as https://auth.${domains[0]}`)
  }
  const outside = domains.find((domain) => !isWithin(domain, cookieDomain))
  if (outside) throw badRequest(`${outside} is outside ${cookieDomain}, the domain of authd's host ${host}: a browser would never send it authd's session cookie`)
  return domains
}

/** `authd tenants update ID --forward-auth-domain …` (the CLI's alone): replaces the tenant's
 *  list; an empty one turns forward authentication off for the tenant. */
export async function setForwardAuthDomains(deps: Pick<Deps, 'store' | 'clock' | 'config'>, tenantId: string, raw: string[], actor: Actor = CLI_ACTOR): Promise<Tenant> {
  const domains = validateForwardAuthDomains(raw, deps.config)
  const updated = await deps.store.tenants.updateSettings(tenantId, { forwardAuthDomains: domains.length === 0 ? null : JSON.stringify(domains) })
  if (!updated || updated === 'slug-taken') throw notFoundById('Tenant', tenantId)
  await audit(deps, 'tenant.updated', actor, { tenantId, detail: { forwardAuthDomains: domains } })
  return updated
}
