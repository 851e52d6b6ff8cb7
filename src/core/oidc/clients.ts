// OpenID Connect clients of a tenant (product spec §21): `authd clients …` and the admin API
// both go through these functions. A confidential client's secret is `authd_cs_` + 256 random
// bits, shown once and stored as its SHA-256 (like an API key); it is compared in constant
// time. A public client (a single-page or native app) has no secret and must use PKCE.
import { actorSees, audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Config } from '../../config'
import type { Deps } from '../deps'
import { badRequest, notFoundById } from '../errors'
import { randomToken, safeEqual, sha256 } from '../secrets'
import { getTenant, validateName } from '../tenants/tenants'
import { requireGroupNames } from '../groups/groups'
import { invalidClient } from './errors'
import { DEFAULT_TOKEN_LIFETIME_SEC, validateAudiences, validateScopes, validateTokenLifetime } from './service-fields'
import { GROUPS_CLAIM_MODES, ID_TOKEN_ALGS, isPublicClient, type ClientJwks, type GroupsClaim, type IdTokenAlg, type OidcClient } from './types'
import { validateClientJwks, verifyClientAssertion } from './client-assertion'

const SECRET_PREFIX = 'authd_cs_'
const VISIBLE_PREFIX_LENGTH = SECRET_PREFIX.length + 4
const MAX_URIS = 20
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])
// A native app's private-use scheme (RFC 8252 §7.1): reverse domain notation, so it has a dot.
const PRIVATE_SCHEME = /^[a-z][a-z0-9+-]*\.[a-z0-9+.-]+:$/

/**
 * A redirect URI as a client registers it: absolute, no fragment (RFC 6749 §3.1.2), https, or
 * http on the loopback interface only (RFC 8252 §7.3), or a native app's private-use scheme.
 * It is matched character for character at the authorization endpoint, never by prefix.
 */
export function validateRedirectUri(field: string, raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2000) throw badRequest(`${field} must be an absolute URI of at most 2000 characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw badRequest(`${field} must be an absolute URI`)
  }
  if (raw.includes('#')) throw badRequest(`${field} must not have a fragment`)
  if (url.username || url.password) throw badRequest(`${field} must not carry a user name or password`)
  // Stored as written and matched character for character, so it must be written as a URL parser
  // reads it: `http://localhost\\@evil.com/cb`, `HTTP://LOCALHOST/cb` or `http://127.1/cb` mean
  // something else to a browser or library than they seem to (and than a reviewer reads).
  if (url.href !== raw) throw badRequest(`${field} must be written in its canonical form (${url.href.slice(0, 2000)}), which is how browsers read it`)
  const allowed = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) || PRIVATE_SCHEME.test(url.protocol)
  if (!allowed) throw badRequest(`${field} must be https (http only on localhost or 127.0.0.1), or a private-use scheme such as com.example.app:/callback`)
  return raw
}

function validateUris(field: string, raw: unknown, atLeastOne: boolean): string[] {
  if (!Array.isArray(raw) || raw.length > MAX_URIS || (atLeastOne && raw.length === 0)) throw badRequest(`${field} must be a list of ${atLeastOne ? '1' : '0'} to ${MAX_URIS} URIs`)
  return [...new Set(raw.map((uri) => validateRedirectUri(field, uri)))]
}

export const newSecret = () => {
  const secret = SECRET_PREFIX + randomToken(32)
  return { secret, secretHash: sha256(secret), secretPrefix: secret.slice(0, VISIBLE_PREFIX_LENGTH) }
}

/** A client as admins see it: never the secret or its hash. */
export function toClientView(client: OidcClient) {
  return {
    clientId: client.id,
    tenantId: client.tenantId,
    name: client.name,
    type: isPublicClient(client) ? ('public' as const) : ('confidential' as const),
    /** How it proves itself at the token, introspection and revocation endpoints. */
    authMethod: client.jwks !== null ? ('private_key_jwt' as const) : client.secretHash !== null ? ('client_secret' as const) : ('none' as const),
    secretPrefix: client.secretPrefix,
    /** The public keys of a private_key_jwt client (nothing secret). */
    jwks: client.jwks,
    redirectUris: client.redirectUris,
    postLogoutRedirectUris: client.postLogoutRedirectUris,
    firstParty: client.firstParty,
    idTokenAlg: client.idTokenAlg,
    allowedGroups: client.allowedGroups,
    groupsClaim: client.groupsClaim,
    service: client.service,
    scopes: client.scopes,
    audiences: client.audiences,
    tokenLifetime: client.tokenLifetimeSec,
    device: client.device,
    createdAt: new Date(client.createdAt).toISOString(),
    updatedAt: new Date(client.updatedAt).toISOString(),
  }
}

export type ClientView = ReturnType<typeof toClientView>

export interface ClientInput {
  name?: unknown
  redirectUris?: unknown
  postLogoutRedirectUris?: unknown
  public?: unknown
  firstParty?: unknown
  idTokenAlg?: unknown
  /** Names of the tenant's groups whose members alone get a code; null (or absent at creation): anyone. */
  allowedGroups?: unknown
  groupsClaim?: unknown
  /** A service client (product spec §26): the client_credentials grant only, no redirect URIs. */
  service?: unknown
  /** A service client's scopes. */
  scopes?: unknown
  /** Audiences its tokens may name (a service client) and whose tokens it may introspect (any confidential client). */
  audiences?: unknown
  /** A service client's access-token lifetime: seconds or a duration ("15m"). */
  tokenLifetime?: unknown
  /** May use the device authorization grant (RFC 8628): redirect URIs then optional (a CLI tool has none). */
  device?: unknown
  /** Public keys (a JWKS): the client authenticates with private_key_jwt (RFC 7523) instead of a secret. */
  jwks?: unknown
}

/**
 * The fields that differ between a service client and one that signs users in: a service client
 * has no redirect URIs (so it can never start an authorization code flow) and no users (so no
 * allowed groups); scopes and a token lifetime are a service client's alone; a public client
 * can authenticate to nothing, so it holds no audiences.
 */
function serviceFields(config: Pick<Config, 'publicUrl'>, service: boolean, isPublic: boolean, input: ClientInput, creating: boolean) {
  const given = (name: keyof ClientInput) => input[name] !== undefined && !(Array.isArray(input[name]) && (input[name] as unknown[]).length === 0 && creating)
  if (service) {
    if (isPublic) throw badRequest('a service client is confidential: it cannot be public')
    for (const name of ['redirectUris', 'postLogoutRedirectUris', 'allowedGroups'] as const) if (given(name)) throw badRequest(`${name} is not for a service client, which uses the client_credentials grant only`)
  } else {
    for (const name of ['scopes', 'tokenLifetime'] as const) if (input[name] !== undefined) throw badRequest(`${name} is for a service client only`)
    if (isPublic && input.audiences !== undefined) throw badRequest('audiences are not for a public client, which cannot authenticate to introspect')
  }
  return {
    ...(input.scopes !== undefined && { scopes: validateScopes(input.scopes) }),
    ...(input.audiences !== undefined && { audiences: validateAudiences(input.audiences, config.publicUrl) }),
    ...(input.tokenLifetime !== undefined && { tokenLifetimeSec: validateTokenLifetime(input.tokenLifetime) }),
  }
}

/** At most this many groups admit to one client. */
const MAX_ALLOWED_GROUPS = 50

/**
 * --allowed-groups: names of existing groups of the client's tenant (an unknown one is a 400
 * naming it), stored lower-case, sorted, once each; null admits anyone. An empty list would
 * admit nobody, which no operator means: it is refused (null clears).
 */
async function validateAllowedGroups(deps: Pick<Deps, 'store'>, tenantId: string, raw: unknown): Promise<string[] | null> {
  if (raw === null) return null
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_ALLOWED_GROUPS || !raw.every((name) => typeof name === 'string')) {
    throw badRequest(`allowedGroups must be a list of 1 to ${MAX_ALLOWED_GROUPS} group names, or null for anyone`)
  }
  const groups = await requireGroupNames(deps, tenantId, raw)
  return groups.map((g) => g.name).sort()
}

function validateGroupsClaim(raw: unknown): GroupsClaim {
  if (!GROUPS_CLAIM_MODES.includes(raw as GroupsClaim)) throw badRequest(`groupsClaim must be ${GROUPS_CLAIM_MODES.join(' or ')}`)
  return raw as GroupsClaim
}

const flag = (field: string, raw: unknown) => {
  if (raw !== undefined && typeof raw !== 'boolean') throw badRequest(`${field} must be true or false`)
  return raw === true
}

/** id_token_signed_response_alg: RS256, the default every relying party accepts, or ES256. */
function validateIdTokenAlg(raw: unknown): IdTokenAlg {
  // Any case, as the CLI's --id-token-alg takes it (a name typed, not a JOSE header); stored upper case.
  const alg = (typeof raw === 'string' ? raw.toUpperCase() : raw) as IdTokenAlg
  if (!ID_TOKEN_ALGS.includes(alg)) throw badRequest(`idTokenAlg must be ${ID_TOKEN_ALGS.join(' or ')}`)
  return alg
}

/** `authd clients create` and POST /api/v1/admin/clients: the secret (for a confidential client) is in the answer only. */
export async function createClient(deps: Pick<Deps, 'store' | 'clock' | 'config'>, tenantId: string, input: ClientInput, actor: Actor = CLI_ACTOR): Promise<{ client: OidcClient; clientSecret: string | null }> {
  const name = validateName('name', input.name)
  const isPublic = flag('public', input.public)
  const service = flag('service', input.service)
  const fields = serviceFields(deps.config, service, isPublic, input, true)
  const device = flag('device', input.device)
  // (a service client has no users, so nobody to approve a device)
  if (device && service) throw badRequest('a service client cannot use the device grant, which signs a person in')
  // A device client may have none: a CLI tool signs in through the device page only.
  const redirectUris = service ? [] : device && input.redirectUris === undefined ? [] : validateUris('redirectUris', input.redirectUris, !device)
  const postLogoutRedirectUris = service ? [] : validateUris('postLogoutRedirectUris', input.postLogoutRedirectUris ?? [], false)
  const firstParty = flag('firstParty', input.firstParty)
  const idTokenAlg = validateIdTokenAlg(input.idTokenAlg ?? ID_TOKEN_ALGS[0])
  const groupsClaim = validateGroupsClaim(input.groupsClaim ?? GROUPS_CLAIM_MODES[0])
  await getTenant(deps, tenantId)
  const allowedGroups = input.allowedGroups === undefined ? null : await validateAllowedGroups(deps, tenantId, input.allowedGroups)
  if (isPublic && input.jwks !== undefined) throw badRequest('a public client has no keys: jwks is for a confidential client (private_key_jwt)')
  const jwks = input.jwks === undefined ? null : await validateClientJwks(input.jwks)
  const now = deps.clock.now()
  // (a client with keys has no secret at all: nothing in authd's database could authenticate as it)
  const secret = isPublic || jwks !== null ? null : newSecret()
  const client: OidcClient = {
    id: Bun.randomUUIDv7(),
    tenantId,
    name,
    secretHash: secret?.secretHash ?? null,
    secretPrefix: secret?.secretPrefix ?? null,
    redirectUris,
    postLogoutRedirectUris,
    firstParty,
    idTokenAlg,
    allowedGroups,
    groupsClaim,
    service,
    scopes: fields.scopes ?? [],
    audiences: fields.audiences ?? [],
    tokenLifetimeSec: fields.tokenLifetimeSec ?? DEFAULT_TOKEN_LIFETIME_SEC,
    device,
    jwks,
    createdAt: now,
    updatedAt: now,
  }
  await deps.store.oidc.insertClient(client)
  await audit(deps, 'oidc_client.created', actor, { tenantId, detail: { clientId: client.id, name, public: isPublic, firstParty, idTokenAlg, allowedGroups, groupsClaim, ...(service && { service, scopes: client.scopes, audiences: client.audiences }), ...(device && { device }), ...(jwks && { authMethod: 'private_key_jwt', keys: jwks.keys.length }) } })
  return { client, clientSecret: secret?.secret ?? null }
}

/** A client the actor may see (the admin API: its own tenant's only); 404 otherwise. */
export async function getClient(deps: Pick<Deps, 'store'>, clientId: string, actor: Actor = CLI_ACTOR): Promise<OidcClient> {
  const client = clientId.length <= 100 ? await deps.store.oidc.getClient(clientId) : null
  if (!client || !actorSees(actor, client.tenantId)) throw notFoundById('Client', clientId)
  return client
}

export async function listClients(deps: Pick<Deps, 'store'>, tenantId: string): Promise<OidcClient[]> {
  await getTenant(deps, tenantId)
  return deps.store.oidc.listClients(tenantId)
}

/** `authd clients update` and PATCH /api/v1/admin/clients/{clientId}: what is given replaces what was. */
export async function updateClient(deps: Pick<Deps, 'store' | 'clock' | 'config'>, clientId: string, input: Omit<ClientInput, 'public' | 'service' | 'device'>, actor: Actor = CLI_ACTOR): Promise<OidcClient> {
  const client = await getClient(deps, clientId, actor)
  const changes: Partial<OidcClient> = serviceFields(deps.config, client.service, isPublicClient(client), input, false)
  if (input.jwks !== undefined) {
    // (new keys replace the old at once: a key rotation adds the new key first, then drops the old)
    if (client.jwks === null) throw badRequest('jwks is for a client created with keys (private_key_jwt); this one authenticates with its secret or none')
    changes.jwks = await validateClientJwks(input.jwks)
  }
  if (input.name !== undefined) changes.name = validateName('name', input.name)
  if (input.redirectUris !== undefined) changes.redirectUris = validateUris('redirectUris', input.redirectUris, !client.device)
  if (input.postLogoutRedirectUris !== undefined) changes.postLogoutRedirectUris = validateUris('postLogoutRedirectUris', input.postLogoutRedirectUris, false)
  if (input.firstParty !== undefined) changes.firstParty = flag('firstParty', input.firstParty)
  if (input.idTokenAlg !== undefined) changes.idTokenAlg = validateIdTokenAlg(input.idTokenAlg)
  if (input.groupsClaim !== undefined) changes.groupsClaim = validateGroupsClaim(input.groupsClaim)
  if (input.allowedGroups !== undefined) changes.allowedGroups = await validateAllowedGroups(deps, client.tenantId, input.allowedGroups)
  if (Object.keys(changes).length === 0) return client
  const updated = await deps.store.oidc.updateClient(client.id, { ...changes, updatedAt: deps.clock.now() })
  if (!updated) throw notFoundById('Client', clientId)
  await audit(deps, 'oidc_client.updated', actor, { tenantId: client.tenantId, detail: { clientId, changed: Object.keys(changes), ...(changes.allowedGroups !== undefined && { allowedGroups: changes.allowedGroups }) } })
  return updated
}

/** A new secret for a confidential client; the old one stops working at once. */
export async function rotateClientSecret(deps: Pick<Deps, 'store' | 'clock'>, clientId: string, actor: Actor = CLI_ACTOR): Promise<{ client: OidcClient; clientSecret: string }> {
  const client = await getClient(deps, clientId, actor)
  if (client.jwks !== null) throw badRequest('This client authenticates with its keys (private_key_jwt), not a secret: give it new keys with jwks')
  if (client.secretHash === null) throw badRequest('A public client has no secret')
  const { secret, secretHash, secretPrefix } = newSecret()
  const updated = await deps.store.oidc.updateClient(client.id, { secretHash, secretPrefix, updatedAt: deps.clock.now() })
  if (!updated) throw notFoundById('Client', clientId)
  await audit(deps, 'oidc_client.secret_rotated', actor, { tenantId: client.tenantId, detail: { clientId, secretPrefix } })
  return { client: updated, clientSecret: secret }
}

/** Deletes the client: its codes and consents go, its grants are revoked. */
export async function deleteClient(deps: Pick<Deps, 'store' | 'clock'>, clientId: string, actor: Actor = CLI_ACTOR): Promise<void> {
  const client = await getClient(deps, clientId, actor)
  if (!(await deps.store.oidc.deleteClient(client.id, deps.clock.now()))) throw notFoundById('Client', clientId)
  await audit(deps, 'oidc_client.deleted', actor, { tenantId: client.tenantId, detail: { clientId } })
}

/** How a client authenticated at the token or revocation endpoint, as the request carried it. */
export interface PresentedClient {
  clientId: string
  /** null: none presented (method `none`, or an assertion). */
  secret: string | null
  /** A client assertion (private_key_jwt), when the request carried one. */
  assertion?: string
}

/**
 * The client a token, introspection, device or revocation request authenticates as: one of the
 * tenant's (another tenant's client is unknown here), by the one method it was created for: its
 * secret (compared in constant time), an assertion signed with one of its keys (`issuers`:
 * the tenant's issuers, one of which the assertion's aud must be), or nothing for a public client. Every failure is the same
 * invalid_client.
 */
export async function authenticateClient(deps: Pick<Deps, 'store' | 'clock'>, tenantId: string, presented: PresentedClient, issuers: readonly string[]): Promise<OidcClient> {
  const client = presented.clientId.length <= 100 ? await deps.store.oidc.getClient(presented.clientId) : null
  if (!client || client.tenantId !== tenantId) throw invalidClient()
  if (client.jwks !== null) {
    if (presented.assertion === undefined || presented.secret !== null) throw invalidClient()
    await verifyClientAssertion(deps, client as OidcClient & { jwks: ClientJwks }, presented.assertion, issuers)
    return client
  }
  if (presented.assertion !== undefined) throw invalidClient()
  if (client.secretHash === null) {
    if (presented.secret !== null) throw invalidClient()
    return client
  }
  if (presented.secret === null || presented.secret.length > 200 || !safeEqual(sha256(presented.secret), client.secretHash)) throw invalidClient()
  return client
}
