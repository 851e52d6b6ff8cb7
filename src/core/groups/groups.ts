// Groups (product spec §23): who may use what. A group belongs to one tenant and is flat: it
// has users, never other groups, so no membership is inherited. Adding a member twice, or
// removing one who is not in it, is no error. A group that an OpenID client or an access rule
// admits by name, or an upstream provider maps to, cannot be deleted or renamed out from under
// it: access never widens or narrows silently.
import { actorSees, audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { badRequest, conflict, notFoundById } from '../errors'
import { validateName } from '../names'
import { getTenant } from '../tenants/tenants'
import type { Group } from './types'

/** A user's groups at most (product spec §23). */
export const MAX_GROUPS_PER_USER = 100
/** Users named in one add or remove. */
export const MAX_USERS_PER_CHANGE = 100
const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/
const MAX_DESCRIPTION = 200

type GroupDeps = Pick<Deps, 'store' | 'clock'>

/** A group name as stored: lower-case, 1-64 of a-z, 0-9, `.`, `_`, `-`, starting with a letter or digit. */
export function validateGroupName(raw: unknown): string {
  const name = typeof raw === 'string' ? raw.trim().toLowerCase() : ''
  if (!NAME.test(name)) throw badRequest('name must be 1 to 64 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit')
  return name
}

function validateDescription(raw: unknown): string | null {
  if (raw === undefined || raw === null || raw === '') return null
  // (one line, as a name is, but up to 200 characters: product spec §23)
  return validateName('description', raw, MAX_DESCRIPTION)
}

export async function createGroup(deps: GroupDeps, input: { tenantId: string; name: unknown; description?: unknown }, actor: Actor = CLI_ACTOR): Promise<Group> {
  if (!actorSees(actor, input.tenantId)) throw notFoundById('Tenant', input.tenantId)
  await getTenant(deps, input.tenantId)
  const now = deps.clock.now()
  const group: Group = { id: Bun.randomUUIDv7(), tenantId: input.tenantId, name: validateGroupName(input.name), description: validateDescription(input.description), createdAt: now, updatedAt: now }
  if (!(await deps.store.groups.insert(group))) throw conflict(`The tenant has a group named ${group.name}`)
  await audit(deps, 'group.created', actor, { tenantId: group.tenantId, detail: { groupId: group.id, name: group.name } })
  return group
}

/** The group, if the actor may see it (another tenant's group is unknown to an admin key). */
export async function getGroup(deps: Pick<Deps, 'store'>, groupId: string, actor: Actor = CLI_ACTOR): Promise<Group> {
  const group = groupId.length <= 100 ? await deps.store.groups.get(groupId) : null
  if (!group || !actorSees(actor, group.tenantId)) throw notFoundById('Group', groupId)
  return group
}

export async function listGroups(deps: Pick<Deps, 'store'>, tenantId: string, actor: Actor = CLI_ACTOR): Promise<Group[]> {
  if (!actorSees(actor, tenantId)) throw notFoundById('Tenant', tenantId)
  await getTenant(deps, tenantId)
  return deps.store.groups.list(tenantId)
}

/** What of the tenant admits by this group's name: its OpenID clients with --allowed-groups
 *  and its access rules (core/forward-auth). */
async function usersOfName(deps: Pick<Deps, 'store'>, group: Group): Promise<string[]> {
  const [clients, rules] = await Promise.all([deps.store.oidc.listClients(group.tenantId), deps.store.accessRules.list(group.tenantId)])
  return [
    ...clients.filter((client) => client.allowedGroups?.includes(group.name)).map((client) => `OpenID client ${client.name} (${client.id})`),
    ...rules.filter((rule) => rule.groups.includes(group.name)).map((rule) => `access rule ${rule.position} for ${rule.domain} (${rule.id})`),
  ]
}

/** The tenant's upstream providers whose --map-group sets this group by name (core/federation). */
async function mappersOfName(deps: Pick<Deps, 'store'>, group: Group): Promise<string[]> {
  const providers = await deps.store.providers.list(group.tenantId)
  return providers.filter((p) => p.groupMap !== null && Object.values(JSON.parse(p.groupMap) as Record<string, string>).includes(group.name)).map((p) => `identity provider ${p.name} (${p.id})`)
}

async function refuseIfNamed(deps: Pick<Deps, 'store'>, group: Group, change: 'deleted' | 'renamed') {
  const users = await usersOfName(deps, group)
  if (users.length > 0) throw conflict(`Group ${group.name} cannot be ${change}: ${users.join(', ')} ${users.length === 1 ? 'admits' : 'admit'} by it`)
  // (a sign-in through the provider would set a group that is no longer there, or no longer this one)
  const mappers = await mappersOfName(deps, group)
  if (mappers.length > 0) throw conflict(`Group ${group.name} cannot be ${change}: ${mappers.join(', ')} ${mappers.length === 1 ? 'maps' : 'map'} upstream groups to it`)
}

export async function updateGroup(deps: GroupDeps, groupId: string, input: { name?: unknown; description?: unknown }, actor: Actor = CLI_ACTOR): Promise<Group> {
  const group = await getGroup(deps, groupId, actor)
  const name = input.name === undefined ? undefined : validateGroupName(input.name)
  const description = input.description === undefined ? undefined : validateDescription(input.description)
  if (name === undefined && description === undefined) throw badRequest('Nothing to change: give name or description')
  if (name !== undefined && name !== group.name) await refuseIfNamed(deps, group, 'renamed')
  const updated = await deps.store.groups.update(group.id, { name, description, updatedAt: deps.clock.now() })
  if (updated === 'name-taken') throw conflict(`The tenant has a group named ${name}`)
  if (!updated) throw notFoundById('Group', groupId)
  await audit(deps, 'group.updated', actor, { tenantId: group.tenantId, detail: { groupId: group.id, name: updated.name, ...(updated.name !== group.name && { previousName: group.name }) } })
  return updated
}

export async function deleteGroup(deps: GroupDeps, groupId: string, actor: Actor = CLI_ACTOR): Promise<{ groupId: string }> {
  const group = await getGroup(deps, groupId, actor)
  await refuseIfNamed(deps, group, 'deleted')
  if (!(await deps.store.groups.delete(group.id))) throw notFoundById('Group', groupId)
  await audit(deps, 'group.deleted', actor, { tenantId: group.tenantId, detail: { groupId: group.id, name: group.name } })
  return { groupId: group.id }
}

/** The users named, each of the group's tenant (another tenant's user is as unknown as a missing one). */
async function membersToBe(deps: Pick<Deps, 'store'>, group: Group, userIds: unknown): Promise<string[]> {
  const ids = Array.isArray(userIds) ? userIds : [userIds]
  if (ids.length === 0 || ids.length > MAX_USERS_PER_CHANGE || !ids.every((id): id is string => typeof id === 'string' && id !== '')) {
    throw badRequest(`give 1 to ${MAX_USERS_PER_CHANGE} user ids`)
  }
  const unique = [...new Set(ids)]
  for (const id of unique) {
    const user = id.length <= 100 ? await deps.store.users.get(id) : null
    if (!user || user.tenantId !== group.tenantId) throw notFoundById('User', id)
  }
  return unique
}

/** Adds users to the group (those already in it stay as they are). */
export async function addMembers(deps: GroupDeps, groupId: string, userIds: unknown, actor: Actor = CLI_ACTOR): Promise<{ groupId: string; added: number }> {
  const group = await getGroup(deps, groupId, actor)
  const users = await membersToBe(deps, group, userIds)
  const result = await deps.store.groups.addMembers(group, users, deps.clock.now(), MAX_GROUPS_PER_USER)
  if ('full' in result) throw conflict(`User ${result.full} is in ${MAX_GROUPS_PER_USER} groups already, the most a user may be in`)
  // (deleted, or erased, since it was looked up: as unknown as it would have been a moment later)
  if ('refused' in result) throw result.refused === 'group-gone' ? notFoundById('Group', groupId) : notFoundById('User', users.join(', '))
  const { added } = result
  if (added > 0) await audit(deps, 'group.member_added', actor, { tenantId: group.tenantId, userId: users.length === 1 ? users[0] : null, detail: { groupId: group.id, name: group.name, userIds: users } })
  return { groupId: group.id, added }
}

/** Removes users from the group (those not in it are no error). */
export async function removeMembers(deps: GroupDeps, groupId: string, userIds: unknown, actor: Actor = CLI_ACTOR): Promise<{ groupId: string; removed: number }> {
  const group = await getGroup(deps, groupId, actor)
  const users = await membersToBe(deps, group, userIds)
  const removed = await deps.store.groups.removeMembers(group.id, users)
  if (removed > 0) await audit(deps, 'group.member_removed', actor, { tenantId: group.tenantId, userId: users.length === 1 ? users[0] : null, detail: { groupId: group.id, name: group.name, userIds: users } })
  return { groupId: group.id, removed }
}

export const MAX_MEMBERS_PAGE = 100

/** A page of the group's members (user ids in creation order) and the cursor of the next. */
export async function listMembers(deps: Pick<Deps, 'store'>, groupId: string, page: { after?: string; limit?: number }, actor: Actor = CLI_ACTOR): Promise<{ group: Group; userIds: string[]; nextCursor: string | null }> {
  const group = await getGroup(deps, groupId, actor)
  const limit = page.limit ?? 50
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_MEMBERS_PAGE) throw badRequest(`limit must be an integer from 1 to ${MAX_MEMBERS_PAGE}`)
  const ids = await deps.store.groups.members(group.id, page.after ?? null, limit + 1)
  const userIds = ids.slice(0, limit)
  return { group, userIds, nextCursor: ids.length > limit ? userIds.at(-1)! : null }
}

/** The user's groups, by name. */
export async function groupsOfUser(deps: Pick<Deps, 'store'>, userId: string, actor: Actor = CLI_ACTOR): Promise<Group[]> {
  const user = userId.length <= 100 ? await deps.store.users.get(userId) : null
  if (!user || !actorSees(actor, user.tenantId)) throw notFoundById('User', userId)
  return deps.store.groups.groupsOfUser(user.id)
}

/**
 * The tenant's groups of these names, every one of which must exist (users import, a
 * client's --allowed-groups): an unknown name is a 400 naming it.
 */
export async function requireGroupNames(deps: Pick<Deps, 'store'>, tenantId: string, names: string[]): Promise<Group[]> {
  const wanted = [...new Set(names.map(validateGroupName))]
  const found = await deps.store.groups.findByNames(tenantId, wanted)
  const missing = wanted.filter((name) => !found.some((g) => g.name === name))
  if (missing.length > 0) throw badRequest(`No group named ${missing.join(', ')} in the tenant`)
  return found
}
