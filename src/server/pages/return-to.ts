// Where a sign-in sends the browser afterwards (`return_to`): a URL on authd itself, on one of
// the origins the operator registered for the tenant (Page.returnToOrigins), or on one of the
// tenant's forward-auth domains (Page.protectedDomains, the operator's too), and nowhere else: an open redirect would let a link that starts at authd's trusted address end on any
// site. (Page.returnOrigins, the CSP's form targets, also holds OpenID clients' redirect URIs,
// which a tenant's admin key registers: never a return_to target.)
import { isOnProtectedDomain } from '../../core/forward-auth/domains'
import type { Page } from './page'

/** null: none given (the account page follows); 'refused': not a place this tenant may send anyone. */
export function returnTarget(page: Pick<Page, 'returnToOrigins' | 'protectedDomains' | 'origin' | 'publicUrl'>, raw: string): string | null | 'refused' {
  if (raw === '') return null
  let url: URL
  try {
    // Parsed as a browser would (`//host`, `/\host` and tabs in `/\t/host` all name another
    // host), then judged by the origin it names.
    url = new URL(raw, page.origin)
  } catch {
    return 'refused'
  }
  const allowed = ((url.protocol === 'https:' || url.protocol === 'http:') && page.returnToOrigins.includes(url.origin)) || isOnProtectedDomain(page.protectedDomains, url, page.publicUrl)
  return allowed ? url.href : 'refused'
}
