// The refresh cookie is SameSite=None, so a browser attaches it to requests from any site.
// `{ sameOriginOnly: true }` refuses (403) what a browser marks as coming from somewhere we
// do not trust (CSRF on refresh and logout): an Origin outside the allowed list, or a
// Sec-Fetch-Site other than same-origin/none without an allowed Origin. The last rule is
// stricter than "cross-site" alone: a no-cors GET (an <img>) from a sibling subdomain is
// "same-site" and carries no Origin, and would otherwise rotate the token. Allowed apps on
// other origins always send Origin with their CORS requests. Non-browser clients send
// neither header and are not affected.
import { Elysia } from 'elysia'
import { crossSiteRefused } from '../../core/errors'

export const originCheck = (allowedOrigins: ReadonlySet<string>) =>
  new Elysia({ name: 'origin-check' }).macro({
    sameOriginOnly: {
      beforeHandle({ request }) {
        const origin = request.headers.get('origin')
        const allowed = origin !== null && allowedOrigins.has(origin)
        if (origin !== null && !allowed) throw crossSiteRefused()
        const site = request.headers.get('sec-fetch-site')
        if (site !== null && site !== 'same-origin' && site !== 'none' && !allowed) throw crossSiteRefused()
      },
    },
  })
