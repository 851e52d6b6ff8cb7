// Who may enter a tenant's admin console (product spec §27), decided once for every console
// page: a user of type `admin` of that tenant, signed in with a second factor in this session,
// while the operator has not turned the console off. A change needs more: a proof within the
// last 5 minutes (step-up, §18), asked by requireConsoleChange. What an admin may do there is
// what the admin API lets a key of the tenant do: the console acts through the same domain
// functions with an actor confined to the tenant, so a rule is never written twice.
import type { Actor } from '../audit/types'
import type { Deps } from '../deps'
import { hasSecondFactor } from '../forward-auth/check'
import { hasConfirmedTotp } from '../mfa/factor'
import { requireRecentAuth } from '../sessions/recent-auth'
import type { Caller } from '../sessions/signed-in-user'
import type { Tenant } from '../types'

export type ConsoleEntry =
  /** The operator turned the console off (`authd tenants update --console off`): as if it did not exist. */
  | { kind: 'off' }
  /** Signed in, but not an admin of this tenant. */
  | { kind: 'not_admin' }
  /** An admin with no second factor at all: sent to set one up first. */
  | { kind: 'set_up_factor' }
  /** An admin with a second factor who signed in without it in this session: proves it first. */
  | { kind: 'prove_factor'; hasTotp: boolean }
  | { kind: 'admitted'; actor: Actor }

/** The actor of a console change: the admin, confined to their tenant as an admin API key is. */
export const consoleActor = (client: Actor, caller: Pick<Caller, 'user'>): Actor => ({ ...client, tenantId: caller.user.tenantId, userId: caller.user.id })

export async function enterConsole(deps: Pick<Deps, 'store'>, tenant: Tenant, caller: Caller, client: Actor): Promise<ConsoleEntry> {
  if (!tenant.consoleEnabled) return { kind: 'off' }
  if (caller.user.type !== 'admin' || caller.user.tenantId !== tenant.id) return { kind: 'not_admin' }
  if (hasSecondFactor(caller.amr)) return { kind: 'admitted', actor: consoleActor(client, caller) }
  const hasTotp = await hasConfirmedTotp(deps, caller.user.id)
  const hasPasskey = hasTotp || (await deps.store.passkeys.listByUser(caller.user.id)).length > 0
  return hasTotp || hasPasskey ? { kind: 'prove_factor', hasTotp } : { kind: 'set_up_factor' }
}

/** Every change in the console: refused (403 step_up_required) unless the admin proved who they are within the last 5 minutes. */
export const requireConsoleChange = (deps: Pick<Deps, 'clock'>, caller: Pick<Caller, 'authAt'>) => requireRecentAuth(deps, caller)
