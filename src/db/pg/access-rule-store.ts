// Access rules of forward authentication over PostgreSQL: the SQLite rules
// (../sqlite/access-rule-store.ts). An insert and a deletion each take the tenant's rules lock
// (an advisory lock) in their transaction, so two instances changing the same tenant's rules
// count and renumber in turn: the limit holds and the positions stay 1..n without gaps.
import { and, asc, count, eq, gt, gte, sql } from 'drizzle-orm'
import type { AccessRuleStore } from '../../core/forward-auth/store'
import { toAccessRule, toAccessRuleRow } from '../sqlite/access-rule-store'
import type { PgDb } from './client'
import { lockKey } from './helpers'
import { accessRules } from './schema'

const rulesLock = (tenantId: string) => `access-rules:${tenantId}`

export function createPgAccessRuleStore(db: PgDb): AccessRuleStore {
  return {
    async list(tenantId) {
      return (await db.select().from(accessRules).where(eq(accessRules.tenantId, tenantId)).orderBy(asc(accessRules.position))).map(toAccessRule)
    },
    async get(id) {
      const [row] = await db.select().from(accessRules).where(eq(accessRules.id, id))
      return row ? toAccessRule(row) : null
    },
    async insert(rule, position, maxRules) {
      return db.transaction(async (tx) => {
        await lockKey(tx, rulesLock(rule.tenantId))
        const [counted] = await tx.select({ n: count() }).from(accessRules).where(eq(accessRules.tenantId, rule.tenantId))
        const n = Number(counted?.n ?? 0)
        if (n >= maxRules) return 'full' as const
        const at = position === null ? n + 1 : Math.min(Math.max(position, 1), n + 1)
        await tx
          .update(accessRules)
          .set({ position: sql`${accessRules.position} + 1` })
          .where(and(eq(accessRules.tenantId, rule.tenantId), gte(accessRules.position, at)))
        const inserted = { ...rule, position: at }
        await tx.insert(accessRules).values(toAccessRuleRow(inserted))
        return inserted
      })
    },
    async delete(id) {
      const [rule] = await db.select({ tenantId: accessRules.tenantId }).from(accessRules).where(eq(accessRules.id, id))
      if (!rule) return false
      return db.transaction(async (tx) => {
        await lockKey(tx, rulesLock(rule.tenantId))
        // (gone meanwhile: another deletion took it, and closed its gap)
        const [gone] = await tx.delete(accessRules).where(eq(accessRules.id, id)).returning({ position: accessRules.position })
        if (!gone) return false
        await tx
          .update(accessRules)
          .set({ position: sql`${accessRules.position} - 1` })
          .where(and(eq(accessRules.tenantId, rule.tenantId), gt(accessRules.position, gone.position)))
        return true
      })
    },
  }
}
