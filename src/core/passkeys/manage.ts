// A user's passkeys, as the user manages them (list, rename, remove with step-up) and as an
// administrator does (the admin API and `authd users passkeys list|delete`: a lost device).
import { audit, auditEvent, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { notFound } from '../errors'
import type { Caller } from '../sessions/signed-in-user'
import { requireRecentAuth } from '../sessions/recent-auth'
import { getUser } from '../accounts/users'
import { toPasskeyView, type PasskeyView } from './credentials'
import { validatePasskeyName } from './registration'

const passkeyNotFound = () => notFound('Passkey not found')

/** GET /passkeys: the caller's passkeys, oldest first. */
export async function listOwnPasskeys(deps: Pick<Deps, 'store'>, caller: Caller): Promise<PasskeyView[]> {
  return (await deps.store.passkeys.listByUser(caller.user.id)).map(toPasskeyView)
}

/** PATCH /passkeys/{id}: a new name for one of the caller's passkeys. */
export async function renameOwnPasskey(deps: Pick<Deps, 'store' | 'clock'>, caller: Caller, passkeyId: string, name: unknown, actor: Actor): Promise<PasskeyView> {
  const renamed = await deps.store.passkeys.rename(passkeyId, caller.user.id, validatePasskeyName(name))
  if (!renamed) throw passkeyNotFound()
  await audit(deps, 'passkey.renamed', actor, { tenantId: caller.tenant.id, userId: caller.user.id, detail: { passkeyId } })
  return toPasskeyView(renamed)
}

/** DELETE /passkeys/{id}: removes one of the caller's passkeys; needs step-up (§18). */
export async function removeOwnPasskey(deps: Pick<Deps, 'store' | 'clock'>, caller: Caller, passkeyId: string, actor: Actor): Promise<void> {
  requireRecentAuth(deps, caller)
  const removed = await deps.store.passkeys.remove(passkeyId, caller.user.id, auditEvent(deps, 'passkey.removed', actor, { tenantId: caller.tenant.id, userId: caller.user.id, detail: { passkeyId } }))
  if (!removed) throw passkeyNotFound()
}

/** The admin API and `authd users passkeys list USER_ID`. */
export async function listUserPasskeys(deps: Pick<Deps, 'store' | 'clock'>, userId: string, actor: Actor = CLI_ACTOR): Promise<PasskeyView[]> {
  const user = await getUser(deps, userId, actor)
  const passkeys = (await deps.store.passkeys.listByUser(user.id)).map(toPasskeyView)
  await audit(deps, 'passkeys.listed', actor, { tenantId: user.tenantId, userId, detail: { count: passkeys.length } })
  return passkeys
}

/** The admin API and `authd users passkeys delete USER_ID PASSKEY_ID`: a lost or stolen device. */
export async function deleteUserPasskey(deps: Pick<Deps, 'store' | 'clock'>, userId: string, passkeyId: string, actor: Actor = CLI_ACTOR): Promise<{ userId: string; passkeyId: string }> {
  const user = await getUser(deps, userId, actor)
  const removed = await deps.store.passkeys.remove(passkeyId, user.id, auditEvent(deps, 'passkey.removed', actor, { tenantId: user.tenantId, userId, detail: { passkeyId } }))
  if (!removed) throw passkeyNotFound()
  return { userId, passkeyId }
}
