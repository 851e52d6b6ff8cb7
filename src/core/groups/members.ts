// A group's members as the admin API and the CLI show them: each user's id, address and names,
// a keyset page at a time (by user id, so a page stays stable while members come and go).
import type { Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { normaliseEmail } from '../names'
import { badRequest } from '../errors'
import { getGroup, listMembers } from './groups'
import type { Group } from './types'

export interface MemberView {
  userId: string
  email: string
  firstName: string
  lastName: string
}

export interface MemberPage {
  items: MemberView[]
  /** Pass as `after` for the next page; null on the last page. */
  nextCursor: string | null
}

/** A page of the group's members: `after` is the nextCursor of the page before (a user id). */
export async function memberPage(deps: Pick<Deps, 'store'>, groupId: string, page: { after?: string; limit?: number }, actor?: Actor): Promise<MemberPage & { group: Group }> {
  if (page.after !== undefined && (page.after === '' || page.after.length > 100)) throw badRequest('after must be the nextCursor of the page before')
  const { group, userIds, nextCursor } = await listMembers(deps, groupId, page, actor)
  const items: MemberView[] = []
  for (const id of userIds) {
    const user = await deps.store.users.get(id)
    // (a membership outlives no user: erasure removes it; a row read mid-erasure is left out)
    if (user) items.push({ userId: user.id, email: user.email, firstName: user.firstName, lastName: user.lastName })
  }
  return { group, items, nextCursor }
}

/** Every member of the group, page after page (the CLI's `groups show`). */
export async function allMembers(deps: Pick<Deps, 'store'>, groupId: string): Promise<MemberView[]> {
  const members: MemberView[] = []
  for (let after: string | undefined; ; ) {
    const page = await memberPage(deps, groupId, { after, limit: 100 })
    members.push(...page.items)
    if (page.nextCursor === null) return members
    after = page.nextCursor
  }
}

/**
 * The user of the group's tenant with this address, for adding or removing a member by address
 * (the console's form; the admin API and the CLI name the user's id): null when no user of the
 * tenant has it, which a form says on its field. A malformed address is a 400 naming email;
 * another tenant's group a 404.
 */
export async function memberByEmail(deps: Pick<Deps, 'store'>, groupId: string, email: string, actor?: Actor): Promise<MemberView | null> {
  const group = await getGroup(deps, groupId, actor)
  const user = await deps.store.users.findByEmail(group.tenantId, normaliseEmail(email))
  return user && { userId: user.id, email: user.email, firstName: user.firstName, lastName: user.lastName }
}
