// A user's linked upstream identities (product spec §25), as `authd users show`, the admin API
// and the account page list them, and their unlinking. The last way a user has to sign in (no
// password, no passkey, this one identity) is never unlinked: the store decides that in the
// delete's own transaction, so two unlinks at once cannot both go.
import { auditEvent, CLI_ACTOR, maskEmail, type Actor } from '../audit/audit'
import { getUser } from '../accounts/users'
import type { Deps } from '../deps'
import { conflict, notFoundById } from '../errors'
import type { Identity, IdentityProvider, ProviderType } from './types'

export interface IdentityView {
  identityId: string
  providerId: string
  providerName: string
  providerType: ProviderType
  /** The upstream's id of the person. */
  subject: string
  /** The address the upstream gave at the last sign-in, if any. */
  email: string | null
  linkedAt: string
  lastUsedAt: string | null
}

const toIdentityView = (identity: Identity, provider: IdentityProvider): IdentityView => ({
  identityId: identity.id,
  providerId: provider.id,
  providerName: provider.name,
  providerType: provider.type,
  subject: identity.subject,
  email: identity.email,
  linkedAt: new Date(identity.createdAt).toISOString(),
  lastUsedAt: identity.lastUsedAt === null ? null : new Date(identity.lastUsedAt).toISOString(),
})

/** The user's identities, oldest first (another tenant's user is a 404 to an admin key). */
export async function listIdentities(deps: Pick<Deps, 'store'>, userId: string, actor: Actor = CLI_ACTOR): Promise<IdentityView[]> {
  const user = await getUser(deps, userId, actor)
  const [identities, providers] = await Promise.all([deps.store.identities.listByUser(user.id), deps.store.providers.list(user.tenantId)])
  const byId = new Map(providers.map((p) => [p.id, p]))
  // (an identity whose provider was deleted a moment ago went with it)
  return identities.flatMap((identity) => {
    const provider = byId.get(identity.providerId)
    return provider ? [toIdentityView(identity, provider)] : []
  })
}

/**
 * Unlinks one identity of the user: the admin API, the CLI, and the account page after its own
 * step-up check. An identity that is not this user's is as unknown as a missing one.
 */
export async function unlinkIdentity(deps: Pick<Deps, 'store' | 'clock'>, userId: string, identityId: string, actor: Actor = CLI_ACTOR): Promise<{ userId: string; identityId: string }> {
  const user = await getUser(deps, userId, actor)
  const identity = identityId.length <= 100 ? await deps.store.identities.get(identityId) : null
  if (!identity || identity.userId !== user.id || identity.tenantId !== user.tenantId) throw notFoundById('Identity', identityId)
  const provider = await deps.store.providers.get(identity.providerId)
  const detail = { identityId: identity.id, providerId: identity.providerId, ...(provider && { provider: provider.name }), ...(identity.email !== null && { email: maskEmail(identity.email) }) }
  const outcome = await deps.store.identities.deleteUnlessLast(identity.id, user.id, auditEvent(deps, 'identity.unlinked', actor, { tenantId: user.tenantId, userId: user.id, detail }))
  if (outcome === 'last') throw conflict("This identity is the user's last way to sign in (no password, no passkey, no other identity): it cannot be unlinked until they have another")
  if (outcome === 'none') throw notFoundById('Identity', identityId)
  return { userId: user.id, identityId: identity.id }
}
