// What several PostgreSQL store methods do inside their transaction: the same rules as
// ../helpers.ts for SQLite.
import { and, eq, inArray, isNull, ne, sql } from 'drizzle-orm'
import type { OutboxMessage } from '../../core/types'
import type { SecretsOwner, SessionsOwner } from '../sqlite/helpers'
import type { PgExecutor } from './client'
import { auditEvents, idempotencyKeys, mailOutbox, mfaChallenges, passwordResetOtps, refreshFamilies, setupTokens, users } from './schema'

/** Serialises transactions that take the same key (a check-then-write on one subject). */
export async function lockKey(tx: PgExecutor, key: string) {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`)
}

export async function spendOutstandingSecrets(tx: PgExecutor, owner: SecretsOwner, now: number) {
  const ofOwner = <T extends typeof setupTokens.userId | typeof passwordResetOtps.userId | typeof mfaChallenges.userId>(column: T) =>
    'userId' in owner ? eq(column, owner.userId) : inArray(column, tx.select({ id: users.id }).from(users).where(eq(users.tenantId, owner.tenantId)))
  await tx.update(setupTokens).set({ usedAt: now }).where(and(ofOwner(setupTokens.userId), isNull(setupTokens.usedAt)))
  await tx.update(passwordResetOtps).set({ spentAt: now }).where(and(ofOwner(passwordResetOtps.userId), isNull(passwordResetOtps.spentAt)))
  // A login challenge proves the password it was issued on: a new password (or an admin action) ends it.
  await tx.update(mfaChallenges).set({ spentAt: now }).where(and(ofOwner(mfaChallenges.userId), isNull(mfaChallenges.spentAt)))
}

export async function revokeSessionsOf(tx: PgExecutor, owner: SessionsOwner, now: number, reason: string): Promise<number> {
  const ofOwner =
    'userId' in owner
      ? and(eq(refreshFamilies.userId, owner.userId), owner.exceptFamilyId === undefined ? undefined : ne(refreshFamilies.id, owner.exceptFamilyId))
      : eq(refreshFamilies.tenantId, owner.tenantId)
  const revoked = await tx
    .update(refreshFamilies)
    .set({ revokedAt: now, revokedReason: reason })
    .where(and(ofOwner, isNull(refreshFamilies.revokedAt)))
    .returning({ id: refreshFamilies.id })
  return revoked.length
}

export async function replacePassword(tx: PgExecutor, input: { userId: string; passwordHash: string; now: number; reason: string; notice: OutboxMessage; keepSessionId?: string }) {
  const { userId, passwordHash, now, reason, notice } = input
  await tx.update(users).set({ passwordHash, updatedAt: now, sessionEpoch: sql`${users.sessionEpoch} + 1` }).where(eq(users.id, userId))
  await spendOutstandingSecrets(tx, { userId }, now)
  await revokeSessionsOf(tx, { userId, exceptFamilyId: input.keepSessionId }, now, reason)
  await tx.insert(mailOutbox).values(notice)
}

/** Inside the caller's transaction: the erasure of UserStore.erase (see core/store.ts). */
export async function eraseUser(tx: PgExecutor, user: { id: string; tenantId: string; email: string }): Promise<boolean> {
  await tx.delete(refreshFamilies).where(eq(refreshFamilies.userId, user.id))
  await tx.delete(passwordResetOtps).where(eq(passwordResetOtps.userId, user.id))
  await tx.delete(setupTokens).where(eq(setupTokens.userId, user.id))
  await tx.delete(mailOutbox).where(and(eq(mailOutbox.tenantId, user.tenantId), eq(mailOutbox.recipient, user.email)))
  await tx.delete(idempotencyKeys).where(eq(idempotencyKeys.userId, user.id))
  await tx.update(auditEvents).set({ ip: null, userAgent: null, detail: null }).where(eq(auditEvents.userId, user.id))
  const deleted = await tx.delete(users).where(eq(users.id, user.id)).returning({ id: users.id })
  return deleted.length === 1
}
