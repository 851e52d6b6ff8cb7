// The OpenID Provider's edge (product spec §21): the issuer a URL names, the discovery
// document, client authentication as a request carries it, and errors in the protocol's own
// JSON form. The rules are in core/oidc; this file only reads and writes HTTP.
import type { Config } from '../../config'
import type { Tenant } from '../../core/types'
import { AppError } from '../../core/errors'
import { BearerRequired, OAuthError, invalidClient, invalidRequest } from '../../core/oidc/errors'
import { PROMPT_VALUES, SUPPORTED_SCOPES } from '../../core/oidc/authorization'
import { DEVICE_GRANT_TYPE } from '../../core/oidc/device'
import type { PresentedClient } from '../../core/oidc/clients'
import { assertedClientId, CLIENT_ASSERTION_ALGS, CLIENT_ASSERTION_TYPE } from '../../core/oidc/client-assertion'
import { ID_TOKEN_ALGS } from '../../core/oidc/types'
import { formValue } from '../pages/forms'
import { REPEATED_FIELDS } from '../plugins/body-limit'

/** `{AUTHD_PUBLIC_URL}/t/{tenant}`, with the tenant as the URL names it (its slug or its id). */
export const issuerOf = (config: Pick<Config, 'publicUrl'>, tenantRef: string) => `${config.publicUrl.replace(/\/$/, '')}/t/${encodeURIComponent(tenantRef)}`

/** Every issuer of the tenant: one per spelling (its id, and its slug if it has one). */
export const tenantIssuers = (config: Pick<Config, 'publicUrl'>, tenant: Pick<Tenant, 'id' | 'slug'>) => [issuerOf(config, tenant.id), ...(tenant.slug ? [issuerOf(config, tenant.slug)] : [])]

/** OpenID Connect Discovery 1.0 §3: what this provider does, and nothing it does not. */
export function discoveryDocument(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    jwks_uri: `${issuer}/jwks`,
    revocation_endpoint: `${issuer}/revoke`,
    introspection_endpoint: `${issuer}/introspect`,
    device_authorization_endpoint: `${issuer}/device_authorization`,
    end_session_endpoint: `${issuer}/end_session`,
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', DEVICE_GRANT_TYPE],
    subject_types_supported: ['public'],
    // (RS256 first: Discovery §3 requires it, and a client that names none gets it)
    id_token_signing_alg_values_supported: [...ID_TOKEN_ALGS],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    token_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    revocation_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
    // (a public client cannot introspect: it proves nobody)
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    introspection_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
    code_challenge_methods_supported: ['S256'],
    prompt_values_supported: [...PROMPT_VALUES],
    claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'amr', 'at_hash', 'sid', 'name', 'given_name', 'family_name', 'email', 'email_verified', 'groups'],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
  }
}

/** The form-urlencoded decoding RFC 6749 §2.3.1 applies to client_id and secret in a Basic header. */
const formDecode = (value: string) => decodeURIComponent(value.replace(/\+/g, ' '))

/**
 * The client a token or revocation request names, and its secret: in an Authorization: Basic
 * header (client_secret_basic), in the body (client_secret_post), as a signed assertion
 * (private_key_jwt, RFC 7523 §2.2: the client is the assertion's sub), or client_id alone (none,
 * for public clients). Two methods at once are refused (RFC 6749 §2.3).
 */
export function presentedClient(request: Request, body: unknown): PresentedClient {
  const header = request.headers.get('authorization')
  const bodyId = formValue(body, 'client_id')
  const bodySecret = formValue(body, 'client_secret')
  const assertionType = formValue(body, 'client_assertion_type')
  const assertion = formValue(body, 'client_assertion')
  if (assertion !== '' || assertionType !== '') {
    if (assertionType !== CLIENT_ASSERTION_TYPE) throw invalidRequest(`client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`)
    if (assertion === '') throw invalidRequest('client_assertion is required with client_assertion_type')
    if (header !== null || bodySecret !== '') throw invalidRequest('use one client authentication method, not two')
    const clientId = assertedClientId(assertion)
    if (clientId === null || (bodyId !== '' && bodyId !== clientId)) throw invalidClient()
    return { clientId, secret: null, assertion }
  }
  if (header !== null) {
    const encoded = /^Basic +([A-Za-z0-9+/=]{1,1000}) *$/i.exec(header)?.[1]
    if (!encoded) throw invalidClient()
    const decoded = Buffer.from(encoded, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) throw invalidClient()
    let clientId: string
    let secret: string
    try {
      clientId = formDecode(decoded.slice(0, colon))
      secret = formDecode(decoded.slice(colon + 1))
    } catch {
      throw invalidClient()
    }
    if (bodySecret !== '') throw invalidRequest('use one client authentication method, not two')
    if (bodyId !== '' && bodyId !== clientId) throw invalidRequest('client_id differs from the one authenticated')
    return { clientId, secret }
  }
  if (bodyId === '') throw invalidClient()
  return { clientId: bodyId, secret: bodySecret === '' ? null : bodySecret }
}

/** The endpoints that answer JSON (a client's back end or library reads them, never a person). */
const JSON_ENDPOINT = /^\/t\/[^/]+\/(token|userinfo|revoke|introspect|device_authorization|jwks|\.well-known\/openid-configuration)$/

/**
 * An error on one of those endpoints as RFC 6749 §5.2 writes it ({error, error_description}),
 * with the challenge RFC 6750 §3 asks for on userinfo; null for any other path (the pages draw
 * theirs). Errors that are not the protocol's own (a body no form could be, a flood) get the
 * nearest protocol value; a bug is server_error, saying nothing more.
 */
export function oauthErrorAnswer(request: Request, error: AppError): { body: string; headers: Record<string, string> } | null {
  const path = new URL(request.url).pathname
  const endpoint = JSON_ENDPOINT.exec(path)?.[1]
  if (!endpoint) return null
  const [code, description] =
    error instanceof OAuthError
      ? [error.error, error.description]
      : error.code === 'internal'
        ? ['server_error', 'internal server error']
        : error.code === 'rate_limited' || error.code === 'unavailable'
          ? ['temporarily_unavailable', error.message]
          : [error.status === 404 ? 'invalid_request' : 'invalid_request', error.message]
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache' }
  // (RFC 6750 §3.1: a request that sent no token is challenged without an error code, in the
  // header or the body: it gets no error information at all)
  if (error instanceof BearerRequired) return { body: '{}', headers: { ...headers, 'www-authenticate': 'Bearer realm="authd"' } }
  if (code === 'invalid_token') headers['www-authenticate'] = `Bearer realm="authd", error="invalid_token", error_description="${description}"`
  if (code === 'invalid_client' && request.headers.has('authorization')) headers['www-authenticate'] = 'Basic realm="authd"'
  return { body: JSON.stringify({ error: code, error_description: description }), headers }
}

/** RFC 6749 §3.2: a parameter sent twice (`code=a&code=b`) is invalid_request, never one of them picked. */
export function refuseRepeated(body: unknown): void {
  const repeated = typeof body === 'object' && body !== null ? (body as { [REPEATED_FIELDS]?: string[] })[REPEATED_FIELDS] : undefined
  if (repeated?.length) throw invalidRequest(`${repeated[0]!.slice(0, 50)} must be sent once`)
}

/** A POSTed request's parameters: its string fields (a JSON body may hold anything else, which no parameter is). */
export function stringFields(body: unknown): Array<[string, string]> {
  if (typeof body !== 'object' || body === null) return []
  return Object.entries(body).filter((entry): entry is [string, string] => typeof entry[1] === 'string')
}
