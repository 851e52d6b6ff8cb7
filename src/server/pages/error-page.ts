// Errors no form expects, on a page's path: an unknown tenant or page (404), a form sent
// from another site (403), a body too large (413), one no form could have sent (other 4xx:
// never called our fault), a bug (500). Drawn as a page (never JSON,
// never a stack), in the reader's language, by the one onError of server/errors.ts.
import type { AppError, ErrorCode } from '../../core/errors'
import { html } from './html'
import { layout } from './layout'
import { contentSecurityPolicy, newNonce, securityHeaders } from './security'
import { chooseLanguage, translator, type MessageKey } from './strings'

export const PAGES_PREFIX = '/t/'

const MESSAGES: Partial<Record<ErrorCode, MessageKey>> = {
  not_found: 'error.notFound',
  cross_site: 'error.crossSite',
  payload_too_large: 'error.tooLarge',
  rate_limited: 'error.unavailable',
  unavailable: 'error.unavailable',
}

/** The answer to an error on a page's path; null for any other path (the API answers JSON). */
export function errorPage(request: Request, error: AppError): { body: string; headers: Record<string, string> } | null {
  const path = new URL(request.url).pathname
  if (!path.startsWith(PAGES_PREFIX)) return null
  const t = translator(chooseLanguage(request.headers.get('accept-language')))
  const nonce = newNonce()
  // (the tenant may be unknown: the page is authd's own, unbranded)
  const branding = { name: 'authd', displayName: null, accentColor: null, logoUrl: null, logoContentType: null }
  const tenantRef = path.slice(PAGES_PREFIX.length).split('/')[0]
  const signIn = error.code !== 'not_found' && tenantRef ? html`<p class="links"><a href="${`${PAGES_PREFIX}${tenantRef}/login`}">${t('error.toSignIn')}</a></p>` : html``
  const body = layout({ tenant: branding, base: '', t, nonce }, t('error.title'), html`<p role="alert">${t(MESSAGES[error.code] ?? (error.status < 500 ? 'error.badRequest' : 'error.internal'))}</p>${signIn}`)
  return { body, headers: securityHeaders(contentSecurityPolicy(nonce, [], []), 'same-origin') }
}
