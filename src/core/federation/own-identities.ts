// The signed-in user's own identities, on the account page (product spec §25): listed, and
// unlinked with a recent proof (§18, as a passkey is removed), never the last way in.
import type { Actor } from '../audit/audit'
import type { Deps } from '../deps'
import type { Caller } from '../sessions/signed-in-user'
import { requireRecentAuth } from '../sessions/recent-auth'
import { listIdentities, unlinkIdentity, type IdentityView } from './identities'

export async function listOwnIdentities(deps: Pick<Deps, 'store'>, caller: Caller): Promise<IdentityView[]> {
  return listIdentities(deps, caller.user.id)
}

export async function unlinkOwnIdentity(deps: Pick<Deps, 'store' | 'clock'>, caller: Caller, identityId: string, actor: Actor): Promise<void> {
  requireRecentAuth(deps, caller)
  await unlinkIdentity(deps, caller.user.id, identityId, actor)
}
