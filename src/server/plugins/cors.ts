// CORS with credentials, for the configured origins only: any other origin gets no CORS
// headers, so its scripts cannot read our responses. Our own few lines rather than
// @elysiajs/cors: that plugin did its origin and method work, and set five headers, on every
// request (a tenth of a health check's time), where only a request from an allowed origin
// needs any of it.
import { Elysia } from 'elysia'

const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'GET, POST, PATCH, DELETE, OPTIONS',
  'access-control-allow-headers': 'content-type, x-api-key, authorization',
  'access-control-max-age': '600',
}

export const corsFor = (allowedOrigins: ReadonlySet<string>) =>
  new Elysia({ name: 'cors' }).onRequest(({ request, set }) => {
    // (Vary: Origin is preset on every response when origins are configured: app.ts)
    // With no origin allowed there is nothing to look up: no header is read (see observability.ts).
    const origin = allowedOrigins.size > 0 ? request.headers.get('origin') : null
    const allowed = origin !== null && allowedOrigins.has(origin)
    if (allowed) {
      set.headers['access-control-allow-origin'] = origin
      set.headers['access-control-allow-credentials'] = 'true'
      set.headers['access-control-expose-headers'] = 'retry-after'
    }
    if (request.method === 'OPTIONS') {
      if (allowed) Object.assign(set.headers, PREFLIGHT_HEADERS)
      set.status = 204
      return new Response(null, { status: 204 })
    }
  })
