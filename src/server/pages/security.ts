// What guards every page: the Content-Security-Policy (nothing loads but what authd sends
// with the page, its style and script allowed by a nonce drawn per response), framing refused,
// and forms that another site cannot send: the request's Origin (or, where a browser sends
// `Origin: null`, its Sec-Fetch-Site) must be authd's own, and the form must carry the token
// bound to this browser's form cookie and to its session.
import type { Config } from '../../config'
import { crossSiteRefused } from '../../core/errors'
import { hmacSha256, randomToken, safeEqual } from '../../core/secrets'

export const newNonce = () => randomToken(16)

/** @param imageOrigins origins images may come from beside authd (a tenant's logo URL) */
export function contentSecurityPolicy(nonce: string, imageOrigins: string[], formTargets: string[]): string {
  return [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    // (the passkeys script asks authd for a ceremony's options)
    "connect-src 'self'",
    ['img-src', "'self'", ...imageOrigins].join(' '),
    // A form may post to authd only; the redirect after a sign-in may lead to a registered origin.
    ['form-action', "'self'", ...formTargets].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ')
}

export function securityHeaders(csp: string, referrerPolicy: 'same-origin' | 'no-referrer'): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    // same-origin: a link to another site never carries a page's URL; no-referrer on a page
    // whose URL holds a secret (the invitation's token). With no-referrer a browser sends
    // `Origin: null` with the page's forms, which sameOrigin() judges by Sec-Fetch-Site.
    'referrer-policy': referrerPolicy,
    'cache-control': 'no-store',
  }
}

/** Names that only this machine can mean: a page served under one was asked for by a browser
 *  on the host itself, never by a name an attacker's DNS rebound to it. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * Refuses (403) a POST that a browser marks as coming from another origin. authd's origin is
 * AUTHD_PUBLIC_URL's, or the one the request names where that is a loopback name (`npm start`
 * on http://localhost while the public URL says 127.0.0.1). The Host header alone vouches for
 * nothing: under DNS rebinding an attacker's name points at an intranet-only authd, and its
 * page's forms would be "same-origin" with the Host the browser sends.
 */
export function requireSameOrigin(config: Pick<Config, 'publicUrl'>, request: Request): void {
  const origin = request.headers.get('origin')
  const site = request.headers.get('sec-fetch-site')
  const asked = new URL(request.url)
  // (by host: behind a proxy that ends TLS the request itself is http)
  const askedForAuthd = asked.host === new URL(config.publicUrl).host || LOOPBACK_HOSTS.has(asked.hostname)
  const own = origin === new URL(config.publicUrl).origin || (LOOPBACK_HOSTS.has(asked.hostname) && origin === asked.origin)
  if (origin !== null && origin !== 'null' && !own) throw crossSiteRefused()
  if (site !== null && site !== 'same-origin' && site !== 'none') throw crossSiteRefused()
  // `Origin: null` says nothing of where the form was; only Sec-Fetch-Site can vouch for it,
  // and only on a request that asked for authd by one of its own names.
  if (origin === 'null' && (site === null || !askedForAuthd)) throw crossSiteRefused()
}

/** The anti-forgery token of a form: bound to the browser's form cookie and to its session, so
 *  another site can neither read nor make it, and a signed-out browser's token is not a
 *  signed-in one's. */
export const formToken = (hmacKey: string, formCookie: string, sessionId: string | null) => hmacSha256(hmacKey, `page-form:${formCookie}:${sessionId ?? ''}`)

export function requireFormToken(hmacKey: string, formCookie: string | undefined, sessionId: string | null, presented: unknown): void {
  if (!formCookie || typeof presented !== 'string' || !safeEqual(presented, formToken(hmacKey, formCookie, sessionId))) throw crossSiteRefused()
}
