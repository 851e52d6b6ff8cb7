// Where a sign-in sends the browser afterwards (`return_to`): a URL on authd itself or on one
// of the tenant's registered origins (Page.returnOrigins), and nowhere else: an open redirect
// would let a link that starts at authd's trusted address end on any site.
import type { Page } from './page'

/** null: none given (the account page follows); 'refused': not a place this tenant may send anyone. */
export function returnTarget(page: Pick<Page, 'returnOrigins' | 'origin'>, raw: string): string | null | 'refused' {
  if (raw === '') return null
  let url: URL
  try {
    // Parsed as a browser would (`//host`, `/\host` and tabs in `/\t/host` all name another
    // host), then judged by the origin it names.
    url = new URL(raw, page.origin)
  } catch {
    return 'refused'
  }
  const allowed = (url.protocol === 'https:' || url.protocol === 'http:') && page.returnOrigins.includes(url.origin)
  return allowed ? url.href : 'refused'
}
