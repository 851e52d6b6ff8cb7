// Groups and their members over SQLite (core/groups). The names of a user's groups are read at
// every login and refresh (the tokens' groups claim): one prepared statement on the members'
// user index.
import { and, asc, count, eq, gt, inArray, sql } from 'drizzle-orm'
import type { GroupStore } from '../../core/groups/store'
import type { Group } from '../../core/groups/types'
import type { Db } from './client'
import { changesOf, immediate, isUniqueViolation } from './helpers'
import { groupMembers, groups, users } from './schema'

export function createGroupStore(db: Db): GroupStore {
  const namesOfUser = db
    .select({ name: groups.name })
    .from(groupMembers)
    .innerJoin(groups, eq(groups.id, groupMembers.groupId))
    .where(eq(groupMembers.userId, sql.placeholder('userId')))
    .orderBy(asc(groups.name))
    .prepare()
  return {
    async insert(group) {
      try {
        await immediate(db, () => db.insert(groups).values(group).run())
        return true
      } catch (error) {
        if (isUniqueViolation(error)) return false
        throw error
      }
    },
    async get(id) {
      return (db.select().from(groups).where(eq(groups.id, id)).get() as Group | undefined) ?? null
    },
    async findByNames(tenantId, names) {
      if (names.length === 0) return []
      return db.select().from(groups).where(and(eq(groups.tenantId, tenantId), inArray(groups.name, names))).all()
    },
    async list(tenantId) {
      return db.select().from(groups).where(eq(groups.tenantId, tenantId)).orderBy(asc(groups.name)).all()
    },
    async update(id, changes) {
      try {
        return await immediate(db, () => db.update(groups).set(changes).where(eq(groups.id, id)).returning().get() ?? null)
      } catch (error) {
        if (isUniqueViolation(error)) return 'name-taken'
        throw error
      }
    },
    async delete(id) {
      return immediate(db, () => changesOf(db.delete(groups).where(eq(groups.id, id)).run()) === 1)
    },
    async addMembers(group, userIds, now, maxGroupsPerUser) {
      // One IMMEDIATE transaction: no other writer between the checks and the insert.
      return immediate(db, () => {
        if (!db.select({ id: groups.id }).from(groups).where(eq(groups.id, group.id)).get()) return { refused: 'group-gone' as const }
        const present = db.select({ id: users.id }).from(users).where(and(inArray(users.id, userIds), eq(users.tenantId, group.tenantId))).all()
        if (present.length !== userIds.length) return { refused: 'user-gone' as const }
        const already = new Set(db.select({ userId: groupMembers.userId }).from(groupMembers).where(and(eq(groupMembers.groupId, group.id), inArray(groupMembers.userId, userIds))).all().map((r) => r.userId))
        const joining = userIds.filter((id) => !already.has(id))
        if (joining.length === 0) return { added: 0 }
        const counts = db.select({ userId: groupMembers.userId, n: count() }).from(groupMembers).where(inArray(groupMembers.userId, joining)).groupBy(groupMembers.userId).all()
        const full = counts.find((c) => c.n >= maxGroupsPerUser)
        if (full) return { full: full.userId }
        return { added: changesOf(db.insert(groupMembers).values(joining.map((userId) => ({ groupId: group.id, userId, tenantId: group.tenantId, createdAt: now }))).run()) }
      })
    },
    async removeMembers(groupId, userIds) {
      return immediate(db, () => changesOf(db.delete(groupMembers).where(and(eq(groupMembers.groupId, groupId), inArray(groupMembers.userId, userIds))).run()))
    },
    async members(groupId, afterUserId, limit) {
      const rows = db
        .select({ userId: groupMembers.userId })
        .from(groupMembers)
        .where(and(eq(groupMembers.groupId, groupId), afterUserId === null ? undefined : gt(groupMembers.userId, afterUserId)))
        .orderBy(asc(groupMembers.userId))
        .limit(limit)
        .all()
      return rows.map((r) => r.userId)
    },
    async groupsOfUser(userId) {
      return db.select({ g: groups }).from(groupMembers).innerJoin(groups, eq(groups.id, groupMembers.groupId)).where(eq(groupMembers.userId, userId)).orderBy(asc(groups.name)).all().map((r) => r.g)
    },
    async groupNamesOfUser(userId) {
      return (namesOfUser.all({ userId }) as Array<{ name: string }>).map((r) => r.name)
    },
    async groupNamesOfUsers(userIds) {
      const names = new Map<string, string[]>()
      if (userIds.length === 0) return names
      const rows = db
        .select({ userId: groupMembers.userId, name: groups.name })
        .from(groupMembers)
        .innerJoin(groups, eq(groups.id, groupMembers.groupId))
        .where(inArray(groupMembers.userId, userIds))
        .orderBy(asc(groups.name))
        .all()
      for (const row of rows) names.set(row.userId, [...(names.get(row.userId) ?? []), row.name])
      return names
    },
  }
}
