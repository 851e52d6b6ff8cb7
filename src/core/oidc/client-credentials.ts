// grant_type=client_credentials (RFC 6749 §4.4, product spec §26): a service client, with no
// user, gets an access token for itself. The token is an RFC 9068 JWT (typ at+jwt) signed like
// every access token authd issues (ES256, the key ring's, published at the JWKS), with `sub` the
// client id and `aud` the resource it named (RFC 8707) or the tenant's audience. There is no
// refresh token: the client holds its secret and asks again.
import { audit, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import type { Tenant } from '../types'
import { OAuthError } from './errors'
import { signAccessJwt } from './tokens'
import { isPublicClient, type OidcClient } from './types'

export interface ServiceTokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  scope?: string
}

/** The scopes asked for, each one the client's; all of its scopes when it asks for none. */
function grantedScopes(client: OidcClient, asked: string | undefined): string[] {
  const scopes = asked?.split(' ').filter((s) => s !== '') ?? []
  if (scopes.length === 0) return client.scopes
  const unknown = scopes.find((s) => !client.scopes.includes(s))
  if (unknown !== undefined) throw new OAuthError('invalid_scope', `${unknown.slice(0, 100)} is not one of this client's scopes`)
  return [...new Set(scopes)]
}

/**
 * The audience the token names: the resource asked for, which must be one of the client's
 * audiences (or the tenant's own, the default: naming it changes nothing), else invalid_target.
 */
function audienceOf(tenant: Tenant, client: OidcClient, resource: string | undefined): string {
  if (resource === undefined || resource === tenant.audience) return tenant.audience
  if (!client.audiences.includes(resource)) throw new OAuthError('invalid_target', 'resource is not one of the audiences this client may ask for')
  return resource
}

export async function clientCredentialsGrant(
  deps: Pick<Deps, 'store' | 'clock' | 'keyRing'>,
  tenant: Tenant,
  issuer: string,
  client: OidcClient,
  input: { scope: string | undefined; resource: string | undefined },
  actor: Actor,
): Promise<ServiceTokenResponse> {
  // (a client that signs users in has users behind its tokens; one with no secret proves nothing)
  if (!client.service || isPublicClient(client)) throw new OAuthError('unauthorized_client', 'only a service client may use the client_credentials grant')
  const scopes = grantedScopes(client, input.scope)
  const aud = audienceOf(tenant, client, input.resource)
  const iat = Math.floor(deps.clock.now() / 1000)
  const jti = Bun.randomUUIDv7()
  const scope = scopes.join(' ')
  const key = await deps.keyRing.signingKey()
  const accessToken = signAccessJwt(key, { iss: issuer, sub: client.id, client_id: client.id, aud, ...(scope !== '' && { scope }), iat, exp: iat + client.tokenLifetimeSec, jti })
  await audit(deps, 'oidc.service_token_issued', actor, { tenantId: tenant.id, detail: { clientId: client.id, aud, scope, jti } })
  return { access_token: accessToken, token_type: 'Bearer', expires_in: client.tokenLifetimeSec, ...(scope !== '' && { scope }) }
}
