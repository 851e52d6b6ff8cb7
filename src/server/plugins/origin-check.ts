// The refresh cookie is SameSite=None, so a browser attaches it to requests from any site.
// `{ sameOriginOnly: true }` refuses a request that a browser marks as coming from a site we
// do not trust (CSRF on refresh and logout): an Origin outside the allowed list, or
// Sec-Fetch-Site: cross-site without an allowed Origin. Non-browser clients send neither.
import { Elysia } from 'elysia'
import { forbidden } from '../../core/errors'

export const originCheck = (allowedOrigins: ReadonlySet<string>) =>
  new Elysia({ name: 'origin-check' }).macro({
    sameOriginOnly: {
      beforeHandle({ request }) {
        const origin = request.headers.get('origin')
        const allowed = origin !== null && allowedOrigins.has(origin)
        if (origin !== null && !allowed) throw forbidden('Cross-site request refused')
        if (request.headers.get('sec-fetch-site') === 'cross-site' && !allowed) throw forbidden('Cross-site request refused')
      },
    },
  })
