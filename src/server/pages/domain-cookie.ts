// The forward-auth session cookie (product spec §24): set at a sign-in on a tenant's pages for
// the whole protected domain (`Domain=example.com`), so that the reverse proxy in front of every
// application there presents it with each check. It holds the page session's refresh token
// sealed for this use alone: every protected application's server receives the cookie, and a
// copy taken from one opens neither authd's pages (sealed under another context) nor a refresh.
// One sign-in, one session of the store: signing out on the pages (or any way a session ends)
// ends both cookies' access.
import type { Deps } from '../../core/deps'
import { cookieDomainOf, forwardAuthDomainsOf } from '../../core/forward-auth/domains'
import { seal, unseal } from '../../core/secrets'
import type { Tenant } from '../../core/types'
import { readCookie, type CookieJar } from './cookies'

const CONTEXT = 'authd forward-auth session'

export const domainCookieName = (tenant: Pick<Tenant, 'id' | 'slug'>) => `authd_session_${tenant.slug ?? tenant.id}`

type Keys = Pick<Deps, 'serverKeys'>

/** The session token a check's cookie carries, or undefined (none, or not one authd sealed). */
export function domainSessionToken(deps: Keys, jar: CookieJar, tenant: Tenant): string | undefined {
  const sealed = readCookie(jar, domainCookieName(tenant))
  if (!sealed || sealed.length > 512) return undefined
  try {
    return unseal(deps.serverKeys.sealing, CONTEXT, sealed)
  } catch {
    return undefined
  }
}

/** Where the cookie goes: the tenant's widest protected domain around authd's host; null if it protects none. */
const cookieDomain = (deps: Pick<Deps, 'config'>, tenant: Tenant) => cookieDomainOf(forwardAuthDomainsOf(tenant), deps.config.publicUrl)

/**
 * Gives the browser the domain cookie of its page session (a sign-in, or a signed-in browser
 * sent on to a protected application), when the tenant protects a domain around authd.
 * @param maxAgeSec omitted: until the browser closes (as the page cookie)
 */
export function setDomainCookie(deps: Keys & Pick<Deps, 'config'>, jar: CookieJar, tenant: Tenant, sessionToken: string, maxAgeSec?: number): void {
  const domain = cookieDomain(deps, tenant)
  if (!domain) return
  jar[domainCookieName(tenant)]!.set({
    value: seal(deps.serverKeys.sealing, CONTEXT, sessionToken),
    domain,
    path: '/',
    httpOnly: true,
    secure: deps.config.publicUrl.startsWith('https:'),
    sameSite: 'lax',
    ...(maxAgeSec !== undefined && { maxAge: maxAgeSec }),
  })
}

/** Takes the cookie back (a sign-out): the session has ended already, so this is tidiness. */
export function clearDomainCookie(deps: Pick<Deps, 'config'>, jar: CookieJar, tenant: Tenant): void {
  const domain = cookieDomain(deps, tenant)
  if (!domain || readCookie(jar, domainCookieName(tenant)) === undefined) return
  jar[domainCookieName(tenant)]!.set({ value: '', domain, path: '/', httpOnly: true, secure: deps.config.publicUrl.startsWith('https:'), sameSite: 'lax', maxAge: 0, expires: new Date(0) })
}
