// Idempotency keys over PostgreSQL: the same rules as ../idempotency-store.ts. Two instances
// claiming one key at once: the primary key lets one insert win; the other reads its record.
import { and, eq, isNull, lt, or } from 'drizzle-orm'
import type { IdempotencyStore } from '../../core/guards/store'
import type { PgDb } from './client'
import { idempotencyKeys } from './schema'

export function createPgIdempotencyStore(db: PgDb): IdempotencyStore {
  const ofKey = (tenantId: string, key: string) => and(eq(idempotencyKeys.tenantId, tenantId), eq(idempotencyKeys.key, key))
  return {
    async claim(record, { staleBefore, abandonedBefore }) {
      return db.transaction(async (tx) => {
        await tx.delete(idempotencyKeys).where(and(ofKey(record.tenantId, record.key), or(lt(idempotencyKeys.createdAt, staleBefore), and(isNull(idempotencyKeys.statusCode), lt(idempotencyKeys.createdAt, abandonedBefore)))))
        const inserted = await tx
          .insert(idempotencyKeys)
          .values({ ...record, userId: null, statusCode: null, sealedResponse: null })
          .onConflictDoNothing()
          .returning({ key: idempotencyKeys.key })
        if (inserted.length === 1) return null
        const [held] = await tx.select().from(idempotencyKeys).where(ofKey(record.tenantId, record.key))
        // Released between the conflict and the read: answered as still running, and a retry
        // claims it.
        return held ?? { ...record, userId: null, statusCode: null, sealedResponse: null }
      })
    },
    async complete(tenantId, key, answer) {
      await db.update(idempotencyKeys).set(answer).where(ofKey(tenantId, key))
    },
    async release(tenantId, key) {
      await db.delete(idempotencyKeys).where(ofKey(tenantId, key))
    },
  }
}
