// Idempotency keys over SQLite (core/idempotency.ts has the rules). A claim is one insert;
// a stale record (past 24 hours, not yet pruned) is replaced in the same transaction.
import { and, eq, isNull, lt, or } from 'drizzle-orm'
import type { IdempotencyStore } from '../../core/guards/store'
import type { Db } from './client'
import { immediate } from './helpers'
import { idempotencyKeys } from './schema'

export function createIdempotencyStore(db: Db): IdempotencyStore {
  const ofKey = (tenantId: string, key: string) => and(eq(idempotencyKeys.tenantId, tenantId), eq(idempotencyKeys.key, key))
  return {
    async claim(record, { staleBefore, abandonedBefore }) {
      return immediate(db, () => {
        db.delete(idempotencyKeys).where(and(ofKey(record.tenantId, record.key), or(lt(idempotencyKeys.createdAt, staleBefore), and(isNull(idempotencyKeys.statusCode), lt(idempotencyKeys.createdAt, abandonedBefore))))).run()
        const held = db.select().from(idempotencyKeys).where(ofKey(record.tenantId, record.key)).get()
        if (held) return held
        db.insert(idempotencyKeys).values({ ...record, userId: null, statusCode: null, sealedResponse: null }).run()
        return null
      })
    },
    async complete(tenantId, key, answer) {
      await immediate(db, () => db.update(idempotencyKeys).set(answer).where(ofKey(tenantId, key)).run())
    },
    async release(tenantId, key) {
      await immediate(db, () => db.delete(idempotencyKeys).where(ofKey(tenantId, key)).run())
    },
  }
}
