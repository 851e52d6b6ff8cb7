// Who acted in a tenant's audit events, as the console shows them (product spec §27): a change
// made in the console names its admin (audit_events.actor_user_id), shown by address to the
// tenant's admins; an admin API change names its key. Only users of the tenant are named: an
// id that no longer finds one (a deleted admin) stays an id.
import type { Deps } from '../deps'

/** The addresses of the admins among `userIds` who are users of `tenantId`, by id. */
export async function consoleActorEmails(deps: Pick<Deps, 'store'>, tenantId: string, userIds: Iterable<string>): Promise<Map<string, string>> {
  const ids = [...new Set(userIds)]
  const users = await Promise.all(ids.map((id) => deps.store.users.get(id)))
  return new Map(users.filter((user) => user !== null && user.tenantId === tenantId).map((user) => [user!.id, user!.email]))
}
