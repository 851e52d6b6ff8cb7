// Who may use a client, and which groups its tokens name (product spec §23). A client created
// with --allowed-groups admits only members of at least one of them; this one rule is asked by
// the authorization endpoint (before a code), by the code's exchange and by every refresh of a grant (so a user who left
// every allowed group loses the client at the next refresh), never decided twice.
import type { Deps } from '../deps'
import type { OidcClient } from './types'

/** The scope that asks for the `groups` claim. */
export const GROUPS_SCOPE = 'groups'

/** Whether a user in these groups may use the client: anyone when it names no groups. */
export function admitsGroups(client: Pick<OidcClient, 'allowedGroups'>, groupNames: readonly string[]): boolean {
  return client.allowedGroups === null || client.allowedGroups.some((name) => groupNames.includes(name))
}

/**
 * "Is this user allowed at this client", with the user's groups (sorted names) as read for it,
 * so that the token issued next names the same groups the decision saw.
 */
export async function accessAtClient(deps: Pick<Deps, 'store'>, client: Pick<OidcClient, 'allowedGroups'>, userId: string): Promise<{ allowed: boolean; groups: string[] }> {
  const groups = await deps.store.groups.groupNamesOfUser(userId)
  return { allowed: admitsGroups(client, groups), groups }
}

/** Whether the client's ID tokens and userinfo carry `groups` for these scopes. */
export const carriesGroups = (client: Pick<OidcClient, 'groupsClaim'>, scopes: readonly string[]) => client.groupsClaim === 'always' || scopes.includes(GROUPS_SCOPE)
