import { and, eq, isNull } from 'drizzle-orm'
import type { OutboxMessage } from '../core/types'
import type { Db } from './client'
import { mailOutbox, refreshFamilies, setupTokens, users } from './schema'

/** Runs `fn` in BEGIN IMMEDIATE: the write lock is taken up front, so the transaction
 *  waits (busy timeout) for another writer instead of failing half-way. */
export const immediate = <T>(db: Db, fn: () => T): T => db.$client.transaction(fn).immediate()

/** bun:sqlite returns { changes } from run(); drizzle's types say void. */
export const changesOf = (result: unknown): number => (result as { changes: number }).changes

export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && /UNIQUE constraint failed/.test(error.message)
}

/**
 * What every new password brings, inside the caller's transaction: the hash stored, the
 * user's setup tokens spent, every session revoked, and the notice queued.
 */
export function replacePasswordInTransaction(db: Db, input: { userId: string; passwordHash: string; now: number; reason: string; notice: OutboxMessage }) {
  const { userId, passwordHash, now, reason, notice } = input
  db.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, userId)).run()
  db.update(setupTokens).set({ usedAt: now }).where(and(eq(setupTokens.userId, userId), isNull(setupTokens.usedAt))).run()
  db.update(refreshFamilies)
    .set({ revokedAt: now, revokedReason: reason })
    .where(and(eq(refreshFamilies.userId, userId), isNull(refreshFamilies.revokedAt)))
    .run()
  db.insert(mailOutbox).values(notice).run()
}
