// The OpenID Provider's JSON endpoints under the issuer `/t/{tenant}` (product spec §21):
// discovery, JWKS, token, userinfo, revoke; and end_session, which is a page. Each handler
// reads the request, calls one function of core/oidc, and answers; errors are drawn once, by
// oauthErrorAnswer (protocol.ts).
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { authenticateClient } from '../../core/oidc/clients'
import { invalidRequest, OAuthError } from '../../core/oidc/errors'
import { presentedBearer, revokeToken, userInfo } from '../../core/oidc/access'
import { notFound } from '../../core/errors'
import { exchangeCode, refreshGrant } from '../../core/oidc/tokens'
import { clientCredentialsGrant } from '../../core/oidc/client-credentials'
import { introspect } from '../../core/oidc/introspection'
import { DEVICE_GRANT_TYPE, deviceCodeGrant, startDeviceAuthorization } from '../../core/oidc/device'
import { tenantOfIssuer } from '../../core/oidc/issuer'
import type { Tenant } from '../../core/types'
import { clientActor } from '../plugins/client-ip'
import { formValue } from '../pages/forms'
import { PAGE_PREFIX } from '../pages/page'
import type { Actor } from '../../core/audit/audit'
import { discoveryDocument, issuerOf, presentedClient, refuseRepeated, tenantIssuers } from './protocol'

interface EndpointRequest {
  request: Request
  /** null where the segment is not UTF-8 once decoded */
  params: { tenant: string | null }
  body?: unknown
  set: { headers: Record<string, string | number>; status?: number | string }
  actor: Actor
}

/** The tenant the issuer in the URL names, and that issuer. */
async function issuerFor(deps: Deps, ref: string | null, bearer = false): Promise<{ tenant: Tenant; issuer: string }> {
  // Elysia hands a segment that is no UTF-8 (`%FF`) as null: no tenant is named so, as at the pages.
  if (typeof ref !== 'string') throw notFound()
  return { tenant: await tenantOfIssuer(deps, ref, bearer), issuer: issuerOf(deps.config, ref) }
}

/** RFC 6749 §5.1: token answers are never cached. */
const noStore = (set: EndpointRequest['set']) => {
  set.headers['cache-control'] = 'no-store'
  set.headers.pragma = 'no-cache'
}

/** GET and POST /userinfo (Core §5.3 allows both). */
async function userInfoAnswer(deps: Deps, { request, params, set }: EndpointRequest) {
  const token = presentedBearer(request.headers.get('authorization'))
  const { tenant, issuer } = await issuerFor(deps, params.tenant, true)
  noStore(set)
  return userInfo(deps, tenant, issuer, token)
}

const optionalField = (body: unknown, name: string) => formValue(body, name) || undefined

export const oidcEndpoints = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/.well-known/openid-configuration', async ({ params, set }: EndpointRequest) => {
      set.headers['cache-control'] = 'public, max-age=300'
      return discoveryDocument((await issuerFor(deps, params.tenant)).issuer)
    })
    .get('/jwks', async ({ params, set }: EndpointRequest) => {
      await issuerFor(deps, params.tenant)
      // Short, as the API's JWKS: a revoked key must leave caches soon.
      set.headers['cache-control'] = 'public, max-age=60'
      return deps.keyRing.jwks()
    })
    .post('/token', async ({ request, params, body, set, actor }: EndpointRequest) => {
      const { tenant, issuer } = await issuerFor(deps, params.tenant)
      noStore(set)
      refuseRepeated(body)
      const client = await authenticateClient(deps, tenant.id, presentedClient(request, body), tenantIssuers(deps.config, tenant))
      const grantType = formValue(body, 'grant_type')
      if (grantType === DEVICE_GRANT_TYPE) return deviceCodeGrant(deps, tenant, issuer, client, { deviceCode: optionalField(body, 'device_code') }, actor)
      if (grantType === 'client_credentials') return clientCredentialsGrant(deps, tenant, issuer, client, { scope: optionalField(body, 'scope'), resource: optionalField(body, 'resource') }, actor)
      // (a service client has no users: it signs nobody in and holds no grant)
      if (client.service && (grantType === 'authorization_code' || grantType === 'refresh_token')) throw new OAuthError('unauthorized_client', 'a service client may use the client_credentials grant only')
      if (grantType === 'authorization_code') {
        return exchangeCode(deps, tenant, issuer, client, { code: optionalField(body, 'code'), redirectUri: optionalField(body, 'redirect_uri'), codeVerifier: optionalField(body, 'code_verifier') }, actor)
      }
      if (grantType === 'refresh_token') return refreshGrant(deps, issuer, client, { refreshToken: optionalField(body, 'refresh_token'), scope: optionalField(body, 'scope') }, actor)
      if (grantType === '') throw invalidRequest('grant_type is required')
      throw new OAuthError('unsupported_grant_type', `only authorization_code, refresh_token, client_credentials and ${DEVICE_GRANT_TYPE} are supported`)
    })
    // RFC 8628 §3.1: the client authenticated as at the token endpoint (a public one by its client_id)
    .post('/device_authorization', async ({ request, params, body, set, actor }: EndpointRequest) => {
      const { tenant, issuer } = await issuerFor(deps, params.tenant)
      noStore(set)
      refuseRepeated(body)
      const client = await authenticateClient(deps, tenant.id, presentedClient(request, body), tenantIssuers(deps.config, tenant))
      return startDeviceAuthorization(deps, tenant, issuer, client, { scope: optionalField(body, 'scope') }, actor)
    })
    .post('/introspect', async ({ request, params, body, set }: EndpointRequest) => {
      const { tenant, issuer } = await issuerFor(deps, params.tenant)
      noStore(set)
      refuseRepeated(body)
      const client = await authenticateClient(deps, tenant.id, presentedClient(request, body), tenantIssuers(deps.config, tenant))
      // (token_type_hint is only a hint, RFC 7662 §2.1: every kind is looked for anyway)
      return introspect(deps, tenant, tenantIssuers(deps.config, tenant), issuer, client, optionalField(body, 'token'))
    })
    .get('/userinfo', async (ctx: EndpointRequest) => userInfoAnswer(deps, ctx))
    .post('/userinfo', async (ctx: EndpointRequest) => userInfoAnswer(deps, ctx))
    .post('/revoke', async ({ request, params, body, set, actor }: EndpointRequest) => {
      const { tenant, issuer } = await issuerFor(deps, params.tenant)
      noStore(set)
      refuseRepeated(body)
      const client = await authenticateClient(deps, tenant.id, presentedClient(request, body), tenantIssuers(deps.config, tenant))
      await revokeToken(deps, tenant, tenantIssuers(deps.config, tenant), issuer, client, optionalField(body, 'token'), actor)
      return ''
    })
