// What a user has given OpenID clients (product spec §21): grants (live refresh families of a
// client) that an admin lists and ends, and consents that the user lists and withdraws on the
// account page. Withdrawing a consent also ends the client's grants: the application is
// signed out, not only asked again next time.
import { audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { notFound } from '../errors'
import type { Caller } from '../sessions/signed-in-user'
import { getUser } from '../accounts/users'
import { getClient } from './clients'

export interface GrantView {
  grantId: string
  clientId: string
  clientName: string
  scope: string
  createdAt: string
  lastUsedAt: string
  expiresAt: string
}

/** A user's live grants, newest first (the admin API). */
export async function listUserGrants(deps: Pick<Deps, 'store' | 'clock'>, userId: string, actor: Actor = CLI_ACTOR): Promise<GrantView[]> {
  const user = await getUser(deps, userId, actor)
  const live = (await deps.store.sessions.listLive(user.id, deps.clock.now())).filter(({ family }) => family.clientId)
  const clients = new Map((await deps.store.oidc.listClients(user.tenantId)).map((c) => [c.id, c.name]))
  return live.map(({ family, liveToken }) => ({
    grantId: family.id,
    clientId: family.clientId!,
    clientName: clients.get(family.clientId!) ?? '',
    scope: family.scope ?? '',
    createdAt: new Date(family.createdAt).toISOString(),
    lastUsedAt: new Date(liveToken.createdAt).toISOString(),
    expiresAt: new Date(liveToken.expiresAt).toISOString(),
  }))
}

/** Ends the user's grants to one client; returns how many (the admin API). */
export async function endUserGrants(deps: Pick<Deps, 'store' | 'clock'>, userId: string, clientId: string, actor: Actor = CLI_ACTOR): Promise<number> {
  const user = await getUser(deps, userId, actor)
  const client = await getClient(deps, clientId, actor)
  const ended = await deps.store.oidc.revokeGrants(user.id, client.id, deps.clock.now(), 'admin')
  await audit(deps, 'oidc.grant_revoked', actor, { tenantId: user.tenantId, userId: user.id, detail: { clientId, ended } })
  return ended
}

export interface ConsentView {
  clientId: string
  clientName: string
  scopes: string[]
  givenAt: string
}

/** The signed-in user's consents, oldest first. */
export async function listConsents(deps: Pick<Deps, 'store'>, caller: Caller): Promise<ConsentView[]> {
  const consents = await deps.store.oidc.listConsents(caller.user.id)
  const clients = new Map((await deps.store.oidc.listClients(caller.tenant.id)).map((c) => [c.id, c.name]))
  return consents.map((c) => ({ clientId: c.clientId, clientName: clients.get(c.clientId) ?? '', scopes: c.scope.split(' '), givenAt: new Date(c.createdAt).toISOString() }))
}

/** The user withdraws a consent: the client asks again next time, and its grants end now. */
export async function withdrawConsent(deps: Pick<Deps, 'store' | 'clock'>, caller: Caller, clientId: string, actor: Actor): Promise<void> {
  if (clientId.length > 100 || !(await deps.store.oidc.withdrawConsent(caller.user.id, clientId, deps.clock.now()))) throw notFound('Consent not found')
  await audit(deps, 'oidc.consent_withdrawn', actor, { tenantId: caller.tenant.id, userId: caller.user.id, detail: { clientId } })
}
