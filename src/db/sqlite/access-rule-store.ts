// Access rules of forward authentication over SQLite (core/forward-auth). A tenant's rules are
// numbered 1..n without gaps: an insert moves the rules at and after its position down by one,
// a deletion moves the rules after it up by one, each in its own IMMEDIATE transaction (no
// other writer between the count, the renumbering and the write). The rules are read rarely
// (the server holds each tenant's in memory), through the (tenant, position) index.
import { and, asc, count, eq, gt, gte, sql } from 'drizzle-orm'
import type { AccessRuleStore } from '../../core/forward-auth/store'
import type { AccessPolicy, AccessRule } from '../../core/forward-auth/types'
import type { Db } from './client'
import { immediate } from './helpers'
import { accessRules } from './schema'

type Row = typeof accessRules.$inferSelect

/** paths, methods and groups are stored as JSON arrays. */
export const toAccessRule = (row: Row): AccessRule => ({
  ...row,
  paths: JSON.parse(row.paths) as string[],
  methods: JSON.parse(row.methods) as string[],
  policy: row.policy as AccessPolicy,
  groups: JSON.parse(row.groups) as string[],
})
export const toAccessRuleRow = (rule: AccessRule): Row => ({ ...rule, paths: JSON.stringify(rule.paths), methods: JSON.stringify(rule.methods), groups: JSON.stringify(rule.groups) })

export function createAccessRuleStore(db: Db): AccessRuleStore {
  return {
    async list(tenantId) {
      return db.select().from(accessRules).where(eq(accessRules.tenantId, tenantId)).orderBy(asc(accessRules.position)).all().map(toAccessRule)
    },
    async get(id) {
      const row = db.select().from(accessRules).where(eq(accessRules.id, id)).get()
      return row ? toAccessRule(row) : null
    },
    async insert(rule, position, maxRules) {
      return immediate(db, () => {
        const n = db.select({ n: count() }).from(accessRules).where(eq(accessRules.tenantId, rule.tenantId)).get()?.n ?? 0
        if (n >= maxRules) return 'full' as const
        const at = position === null ? n + 1 : Math.min(Math.max(position, 1), n + 1)
        db.update(accessRules)
          .set({ position: sql`${accessRules.position} + 1` })
          .where(and(eq(accessRules.tenantId, rule.tenantId), gte(accessRules.position, at)))
          .run()
        const inserted = { ...rule, position: at }
        db.insert(accessRules).values(toAccessRuleRow(inserted)).run()
        return inserted
      })
    },
    async delete(id) {
      return immediate(db, () => {
        const gone = db.delete(accessRules).where(eq(accessRules.id, id)).returning({ tenantId: accessRules.tenantId, position: accessRules.position }).get()
        if (!gone) return false
        db.update(accessRules)
          .set({ position: sql`${accessRules.position} - 1` })
          .where(and(eq(accessRules.tenantId, gone.tenantId), gt(accessRules.position, gone.position)))
          .run()
        return true
      })
    },
  }
}
