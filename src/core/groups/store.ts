// The storage contract of groups and their members: composed into Store (core/store.ts),
// implemented by each engine in src/db.
import type { Group } from './types'

export interface GroupStore {
  /** False, writing nothing, when the tenant has a group of this name. */
  insert(group: Group): Promise<boolean>
  get(id: string): Promise<Group | null>
  /** The tenant's groups of these names (stored lower-case), in any order. */
  findByNames(tenantId: string, names: string[]): Promise<Group[]>
  /** The tenant's groups by name. */
  list(tenantId: string): Promise<Group[]>
  /** The group after the change, null if there is none, 'name-taken' when another group of the tenant has the name. */
  update(id: string, changes: { name?: string; description?: string | null; updatedAt: number }): Promise<Group | null | 'name-taken'>
  /** Deletes the group and its memberships; false if there was none. */
  delete(id: string): Promise<boolean>
  /**
   * Adds these users to the group, in one transaction that also checks what the caller checked
   * before (the group still there, each user still of its tenant) and holds each user to at most
   * `maxGroupsPerUser` groups, so a deletion or a burst of additions racing it cannot slip by.
   * Those already in the group are left as they are.
   */
  addMembers(group: Pick<Group, 'id' | 'tenantId'>, userIds: string[], now: number, maxGroupsPerUser: number): Promise<{ added: number } | { refused: 'group-gone' | 'user-gone' } | { full: string }>
  /** Removes these users from the group; those not in it are no error. How many were removed. */
  removeMembers(groupId: string, userIds: string[]): Promise<number>
  /** The group's members' ids in id order (UUIDv7: the order they were created), after `afterUserId`. */
  members(groupId: string, afterUserId: string | null, limit: number): Promise<string[]>
  /** The user's groups by name. */
  groupsOfUser(userId: string): Promise<Group[]>
  /** The names of the user's groups, sorted: what every token of the user carries (one indexed read). */
  groupNamesOfUser(userId: string): Promise<string[]>
  /** The names of each of these users' groups, sorted (a page of users in one read); a user in none is absent. */
  groupNamesOfUsers(userIds: string[]): Promise<Map<string, string[]>>
}
