// Groups and their members over PostgreSQL: the SQLite rules (../sqlite/group-store.ts).
import { and, asc, count, eq, gt, inArray, sql } from 'drizzle-orm'
import type { GroupStore } from '../../core/groups/store'
import { isPgUniqueViolation, type PgDb } from './client'
import { lockKey } from './helpers'
import { groupMembers, groups, users } from './schema'

export function createPgGroupStore(db: PgDb): GroupStore {
  const namesOfUser = db
    .select({ name: groups.name })
    .from(groupMembers)
    .innerJoin(groups, eq(groups.id, groupMembers.groupId))
    .where(eq(groupMembers.userId, sql.placeholder('userId')))
    // (byte order, as SQLite's and JavaScript's: a database created with a locale's collation
    // would otherwise sort `a-b` after `ab`, and the claim would differ by engine)
    .orderBy(sql`${groups.name} collate "C"`)
    .prepare('authd_group_names_of_user')
  return {
    async insert(group) {
      try {
        await db.insert(groups).values(group)
        return true
      } catch (error) {
        if (isPgUniqueViolation(error)) return false
        throw error
      }
    },
    async get(id) {
      return (await db.select().from(groups).where(eq(groups.id, id)))[0] ?? null
    },
    async findByNames(tenantId, names) {
      if (names.length === 0) return []
      return db.select().from(groups).where(and(eq(groups.tenantId, tenantId), inArray(groups.name, names)))
    },
    async list(tenantId) {
      return db.select().from(groups).where(eq(groups.tenantId, tenantId)).orderBy(asc(groups.name))
    },
    async update(id, changes) {
      try {
        return (await db.update(groups).set(changes).where(eq(groups.id, id)).returning())[0] ?? null
      } catch (error) {
        if (isPgUniqueViolation(error)) return 'name-taken'
        throw error
      }
    },
    async delete(id) {
      return (await db.delete(groups).where(eq(groups.id, id)).returning({ id: groups.id })).length === 1
    },
    async addMembers(group, userIds, now, maxGroupsPerUser) {
      return db.transaction(async (tx) => {
        // The group's row shared (a deletion waits for this, or this finds it gone), the users'
        // rows shared the same way, and one lock per user so concurrent additions count in turn.
        if ((await tx.select({ id: groups.id }).from(groups).where(eq(groups.id, group.id)).for('share')).length === 0) return { refused: 'group-gone' as const }
        const present = await tx.select({ id: users.id }).from(users).where(and(inArray(users.id, userIds), eq(users.tenantId, group.tenantId))).for('share')
        if (present.length !== userIds.length) return { refused: 'user-gone' as const }
        for (const id of [...userIds].sort()) await lockKey(tx, `group-members:${id}`)
        const already = new Set((await tx.select({ userId: groupMembers.userId }).from(groupMembers).where(and(eq(groupMembers.groupId, group.id), inArray(groupMembers.userId, userIds)))).map((r) => r.userId))
        const joining = userIds.filter((id) => !already.has(id))
        if (joining.length === 0) return { added: 0 }
        const counts = await tx.select({ userId: groupMembers.userId, n: count() }).from(groupMembers).where(inArray(groupMembers.userId, joining)).groupBy(groupMembers.userId)
        const full = counts.find((c) => Number(c.n) >= maxGroupsPerUser)
        if (full) return { full: full.userId }
        const added = await tx
          .insert(groupMembers)
          .values(joining.map((userId) => ({ groupId: group.id, userId, tenantId: group.tenantId, createdAt: now })))
          .onConflictDoNothing()
          .returning({ userId: groupMembers.userId })
        return { added: added.length }
      })
    },
    async removeMembers(groupId, userIds) {
      return (await db.delete(groupMembers).where(and(eq(groupMembers.groupId, groupId), inArray(groupMembers.userId, userIds))).returning({ userId: groupMembers.userId })).length
    },
    async members(groupId, afterUserId, limit) {
      const rows = await db
        .select({ userId: groupMembers.userId })
        .from(groupMembers)
        .where(and(eq(groupMembers.groupId, groupId), afterUserId === null ? undefined : gt(groupMembers.userId, afterUserId)))
        .orderBy(asc(groupMembers.userId))
        .limit(limit)
      return rows.map((r) => r.userId)
    },
    async groupsOfUser(userId) {
      return (await db.select({ g: groups }).from(groupMembers).innerJoin(groups, eq(groups.id, groupMembers.groupId)).where(eq(groupMembers.userId, userId)).orderBy(asc(groups.name))).map((r) => r.g)
    },
    async groupNamesOfUser(userId) {
      return (await namesOfUser.execute({ userId })).map((r) => r.name)
    },
    async groupNamesOfUsers(userIds) {
      const names = new Map<string, string[]>()
      if (userIds.length === 0) return names
      const rows = await db
        .select({ userId: groupMembers.userId, name: groups.name })
        .from(groupMembers)
        .innerJoin(groups, eq(groups.id, groupMembers.groupId))
        .where(inArray(groupMembers.userId, userIds))
        .orderBy(asc(groups.name))
      for (const row of rows) names.set(row.userId, [...(names.get(row.userId) ?? []), row.name])
      return names
    },
  }
}
