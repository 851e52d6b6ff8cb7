// Upstream identity providers of a tenant (product spec §25): `authd providers …` and the admin
// API's /providers both go through these functions. The client secret is sealed with the server
// key before it is stored and never leaves again (no view, answer, log or audit event holds
// it); only the sign-in flow opens it (providerSecretOf), to talk to the upstream.
import { actorSees, audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Config } from '../../config'
import type { Deps } from '../deps'
import { badRequest, conflict, notFoundById } from '../errors'
import { seal, unseal } from '../secrets'
import { getTenant } from '../tenants/tenants'
import { issuerOf, PRESETS, validateType } from './presets'
import * as fields from './provider-fields'
import type { ProviderChanges } from './store'
import { PROVIDER_SECRET_CONTEXT, type IdentityProvider, type LinkByEmail, type ProviderType } from './types'

/** A tenant's providers at most: each is a button on its login page. */
export const MAX_PROVIDERS = 20

type ProviderDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'serverKeys'>

/** What an admin gives (create: type, clientId and clientSecret required; update: any but type). */
export interface ProviderInput {
  type?: unknown
  name?: unknown
  issuer?: unknown
  entraTenant?: unknown
  clientId?: unknown
  clientSecret?: unknown
  scopes?: unknown
  linkByEmail?: unknown
  createUsers?: unknown
  trustUpstreamMfa?: unknown
  groupsClaim?: unknown
  groupMap?: unknown
}

/** A provider as the CLI and the admin API show it: never its secret. */
export interface ProviderView {
  providerId: string
  tenantId: string
  type: ProviderType
  name: string
  issuer: string | null
  clientId: string
  scopes: string
  linkByEmail: LinkByEmail
  createUsers: string | null
  trustUpstreamMfa: boolean
  groupsClaim: string | null
  groupMap: Record<string, string>
  redirectUri: string
  createdAt: string
  updatedAt: string
}

/** Where the upstream sends the browser back: registered there by the admin, so it names the
 *  tenant by id (a slug may change; this must not). */
export const redirectUriOf = (config: Pick<Config, 'publicUrl'>, provider: Pick<IdentityProvider, 'id' | 'tenantId'>) => `${config.publicUrl}/t/${provider.tenantId}/login/${provider.id}/callback`

export const toProviderView = (config: Pick<Config, 'publicUrl'>, p: IdentityProvider): ProviderView => ({
  providerId: p.id,
  tenantId: p.tenantId,
  type: p.type,
  name: p.name,
  issuer: p.issuer,
  clientId: p.clientId,
  scopes: p.scopes,
  linkByEmail: p.linkByEmail,
  createUsers: p.createUsers,
  trustUpstreamMfa: p.trustUpstreamMfa,
  groupsClaim: p.groupsClaim,
  groupMap: fields.groupMapOf(p.groupMap),
  redirectUri: redirectUriOf(config, p),
  createdAt: new Date(p.createdAt).toISOString(),
  updatedAt: new Date(p.updatedAt).toISOString(),
})

/** The provider's client secret, for the sign-in flow's requests to the upstream only. */
export const providerSecretOf = (deps: Pick<Deps, 'serverKeys'>, provider: Pick<IdentityProvider, 'clientSecretSealed'>) => unseal(deps.serverKeys.sealing, PROVIDER_SECRET_CONTEXT, provider.clientSecretSealed)

const sealSecret = (deps: Pick<Deps, 'serverKeys'>, secret: string) => seal(deps.serverKeys.sealing, PROVIDER_SECRET_CONTEXT, secret)

/**
 * What GitHub cannot do, refused rather than kept: it sends no ID token, so no `amr` to trust
 * and no groups claim to read; a setting that silently never applies reads as a promise.
 */
function refuseWithoutIdToken(type: ProviderType, settings: { trustUpstreamMfa: boolean; groupsClaim: string | null }) {
  if (PRESETS[type].openId) return
  if (settings.trustUpstreamMfa) throw badRequest(`trustUpstreamMfa applies to OpenID Connect providers: ${type} sends no ID token, so no amr`)
  if (settings.groupsClaim !== null) throw badRequest(`groupsClaim applies to OpenID Connect providers: ${type} sends no ID token`)
}

/** A map without a claim to read the upstream groups from would never apply. */
function refuseMapWithoutClaim(settings: { groupsClaim: string | null; groupMap: string | null }) {
  if (settings.groupMap !== null && settings.groupsClaim === null) throw badRequest('groupMap needs groupsClaim: the claim in which the upstream lists the person\'s groups')
}

async function refuseNameTaken(deps: Pick<Deps, 'store'>, tenantId: string, name: string, except?: string) {
  const others = (await deps.store.providers.list(tenantId)).filter((p) => p.id !== except)
  // (two buttons of one name on the login page: nobody could tell which is which)
  if (others.some((p) => p.name.toLowerCase() === name.toLowerCase())) throw conflict(`The tenant has a provider named ${name}`)
  return others
}

export async function createProvider(deps: ProviderDeps, tenantId: string, input: ProviderInput, actor: Actor = CLI_ACTOR): Promise<{ provider: ProviderView; redirectUri: string }> {
  if (!actorSees(actor, tenantId)) throw notFoundById('Tenant', tenantId)
  await getTenant(deps, tenantId)
  const type = validateType(input.type)
  const preset = PRESETS[type]
  if (input.name === undefined && preset.name === null) throw badRequest(`name is required for ${type}: the login page shows "Continue with {name}"`)
  const name = fields.validateProviderName(input.name ?? preset.name)
  const issuer = issuerOf(type, input)
  const clientId = fields.validateClientId(input.clientId)
  if (input.clientSecret === undefined) throw badRequest('clientSecret is required: the secret the upstream issued with the client id')
  const clientSecretSealed = sealSecret(deps, fields.validateClientSecret(input.clientSecret))
  const scopes = fields.validateScopes(input.scopes ?? preset.scopes, preset.openId)
  const linkByEmail = input.linkByEmail === undefined ? preset.linkByEmail : fields.validateLinkByEmail(input.linkByEmail)
  const createUsers = input.createUsers === undefined ? null : fields.validateCreateUsers(input.createUsers)
  const trustUpstreamMfa = input.trustUpstreamMfa === undefined ? false : fields.validateTrustUpstreamMfa(input.trustUpstreamMfa)
  const groupsClaim = input.groupsClaim === undefined ? null : fields.validateGroupsClaim(input.groupsClaim)
  refuseWithoutIdToken(type, { trustUpstreamMfa, groupsClaim })
  const groupMap = input.groupMap === undefined ? null : await fields.validateGroupMap(deps, tenantId, input.groupMap)
  refuseMapWithoutClaim({ groupsClaim, groupMap })

  const others = await refuseNameTaken(deps, tenantId, name)
  // (checked, then written: two creates at once may make a 21st; the limit is a page's length, not a guard)
  if (others.length >= MAX_PROVIDERS) throw conflict(`The tenant has ${MAX_PROVIDERS} identity providers, the most it may have (each is a button on its login page)`)
  const now = deps.clock.now()
  const provider: IdentityProvider = { id: Bun.randomUUIDv7(), tenantId, type, name, issuer, clientId, clientSecretSealed, scopes, linkByEmail, createUsers, trustUpstreamMfa, groupsClaim, groupMap, createdAt: now, updatedAt: now }
  await deps.store.providers.insert(provider)
  await audit(deps, 'provider.created', actor, { tenantId, detail: { providerId: provider.id, type, name, issuer, clientId, linkByEmail } })
  const view = toProviderView(deps.config, provider)
  return { provider: view, redirectUri: view.redirectUri }
}

export async function listProviders(deps: Pick<Deps, 'store'>, tenantId: string, actor: Actor = CLI_ACTOR): Promise<IdentityProvider[]> {
  if (!actorSees(actor, tenantId)) throw notFoundById('Tenant', tenantId)
  await getTenant(deps, tenantId)
  return deps.store.providers.list(tenantId)
}

/** The provider, if the actor may see it (another tenant's is as unknown as a missing one). */
export async function getProvider(deps: Pick<Deps, 'store'>, providerId: string, actor: Actor = CLI_ACTOR): Promise<IdentityProvider> {
  const provider = providerId.length <= 100 ? await deps.store.providers.get(providerId) : null
  if (!provider || !actorSees(actor, provider.tenantId)) throw notFoundById('Identity provider', providerId)
  return provider
}

/** The changes asked for, checked against the provider they apply to. */
async function changesTo(deps: Pick<Deps, 'store'>, p: IdentityProvider, input: ProviderInput): Promise<Omit<ProviderChanges, 'updatedAt'> & { clientSecret?: string }> {
  if (input.type !== undefined && input.type !== p.type) throw badRequest('type cannot change: create another provider (and delete this one)')
  const preset = PRESETS[p.type]
  const changes: Omit<ProviderChanges, 'updatedAt'> & { clientSecret?: string } = {}
  if (input.name !== undefined) changes.name = fields.validateProviderName(input.name)
  if (input.issuer !== undefined || input.entraTenant !== undefined) changes.issuer = issuerOf(p.type, input)
  if (input.clientId !== undefined) changes.clientId = fields.validateClientId(input.clientId)
  if (input.clientSecret !== undefined) changes.clientSecret = fields.validateClientSecret(input.clientSecret)
  if (input.scopes !== undefined) changes.scopes = fields.validateScopes(input.scopes, preset.openId)
  if (input.linkByEmail !== undefined) changes.linkByEmail = fields.validateLinkByEmail(input.linkByEmail)
  if (input.createUsers !== undefined) changes.createUsers = fields.validateCreateUsers(input.createUsers)
  if (input.trustUpstreamMfa !== undefined) changes.trustUpstreamMfa = fields.validateTrustUpstreamMfa(input.trustUpstreamMfa)
  if (input.groupsClaim !== undefined) changes.groupsClaim = fields.validateGroupsClaim(input.groupsClaim)
  if (input.groupMap !== undefined) changes.groupMap = await fields.validateGroupMap(deps, p.tenantId, input.groupMap)
  const after = { ...p, ...changes }
  refuseWithoutIdToken(p.type, after)
  refuseMapWithoutClaim(after)
  return changes
}

/** Changes what is given; what is not stays. The type never changes. */
export async function updateProvider(deps: ProviderDeps, providerId: string, input: ProviderInput, actor: Actor = CLI_ACTOR): Promise<ProviderView> {
  const provider = await getProvider(deps, providerId, actor)
  const { clientSecret, ...changes } = await changesTo(deps, provider, input)
  if (Object.keys(changes).length === 0 && clientSecret === undefined) {
    throw badRequest('Nothing to change: give name, issuer, entraTenant, clientId, clientSecret, scopes, linkByEmail, createUsers, trustUpstreamMfa, groupsClaim or groupMap')
  }
  // An identity is (provider, subject), and a subject is unique only at its issuer: pointed at
  // another issuer, the provider would sign its subjects in as whoever had the same one here.
  if (changes.issuer !== undefined && changes.issuer !== provider.issuer) {
    const linked = await deps.store.providers.countIdentities(provider.id)
    if (linked > 0) throw conflict(`The issuer of provider ${provider.name} cannot change while ${linked} ${linked === 1 ? 'identity is' : 'identities are'} linked through it (a subject is unique only at its issuer): create another provider instead`)
  }
  if (changes.name !== undefined && changes.name !== provider.name) await refuseNameTaken(deps, provider.tenantId, changes.name, provider.id)
  const updated = await deps.store.providers.update(provider.id, { ...changes, ...(clientSecret !== undefined && { clientSecretSealed: sealSecret(deps, clientSecret) }), updatedAt: deps.clock.now() })
  if (!updated) throw notFoundById('Identity provider', providerId)
  // (the names of the fields changed, the secret's included, never a value of it)
  const changed = [...Object.keys(changes), ...(clientSecret !== undefined ? ['clientSecret'] : [])]
  await audit(deps, 'provider.updated', actor, { tenantId: provider.tenantId, detail: { providerId: provider.id, type: provider.type, name: updated.name, fields: changed } })
  return toProviderView(deps.config, updated)
}

/** The provider and how many identities are linked through it (what deleting it would take). */
export async function providerWithIdentities(deps: Pick<Deps, 'store'>, providerId: string, actor: Actor = CLI_ACTOR): Promise<{ provider: IdentityProvider; identities: number }> {
  const provider = await getProvider(deps, providerId, actor)
  return { provider, identities: await deps.store.providers.countIdentities(provider.id) }
}

/**
 * Deletes the provider and every identity linked through it (no identity.unlinked event for
 * each: provider.deleted says how many went). Their users keep their accounts; one who had no
 * other way in needs one from an admin (an invitation: `authd users invite`).
 */
export async function deleteProvider(deps: Pick<Deps, 'store' | 'clock'>, providerId: string, actor: Actor = CLI_ACTOR): Promise<{ providerId: string; identitiesDeleted: number }> {
  const provider = await getProvider(deps, providerId, actor)
  // (counted just before: an identity linked in between goes too, uncounted)
  const identitiesDeleted = await deps.store.providers.countIdentities(provider.id)
  if (!(await deps.store.providers.delete(provider.id))) throw notFoundById('Identity provider', providerId)
  await audit(deps, 'provider.deleted', actor, { tenantId: provider.tenantId, detail: { providerId: provider.id, type: provider.type, name: provider.name, identitiesDeleted } })
  return { providerId: provider.id, identitiesDeleted }
}
