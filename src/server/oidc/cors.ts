// CORS for the provider's JSON endpoints (discovery, JWKS, token, userinfo, revoke), open to
// every origin and without credentials, as panva's oidc-provider has them by default: a
// single-page application (a public client) exchanges its code and calls userinfo from its
// own origin. Nothing there is authorised by a cookie: the token endpoint asks for the client
// and the PKCE verifier, userinfo for a bearer token, so no origin gains anything by reading.
// Registered before the API's CORS (plugins/cors.ts), which answers every other preflight.
import { Elysia } from 'elysia'

const JSON_ENDPOINT = /^\/t\/[^/]+\/(token|userinfo|revoke|jwks|\.well-known\/openid-configuration)$/

const PREFLIGHT = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type',
  'access-control-max-age': '600',
}

export const oidcCors = () =>
  new Elysia({ name: 'oidc-cors' }).onRequest(({ request, set }) => {
    const path = request.url.slice(request.url.indexOf('/', request.url.indexOf('//') + 2)).split('?')[0]!
    if (!path.startsWith('/t/') || !JSON_ENDPOINT.test(path)) return
    if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: PREFLIGHT })
    set.headers['access-control-allow-origin'] = '*'
    set.headers['access-control-expose-headers'] = 'www-authenticate'
  })
