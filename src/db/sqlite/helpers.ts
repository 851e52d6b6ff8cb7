import { and, eq, inArray, isNull, ne, sql } from 'drizzle-orm'
import type { OutboxMessage } from '../../core/types'
import type { Db } from './client'
import { groupCommitOf } from './group-commit'
import { auditEvents, idempotencyKeys, mailOutbox, mfaChallenges, passwordResetOtps, refreshFamilies, setupTokens, users } from './schema'

/** Runs `fn` (synchronous) as one transaction, committed with the others of its turn of the
 *  event loop (group-commit.ts); resolves once it is durable. The batch's BEGIN IMMEDIATE
 *  takes the write lock up front, so it waits (busy timeout) for another writer instead of
 *  failing half-way. */
export const immediate = <T>(db: Db, fn: () => T): Promise<T> => groupCommitOf(db.$client).run(fn)

/** bun:sqlite returns { changes } from run(); drizzle's types say void. */
export const changesOf = (result: unknown): number => (result as { changes: number }).changes

export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && /UNIQUE constraint failed/.test(error.message)
}

/** Whose outstanding secrets to spend: one user, or every user of a tenant. */
export type SecretsOwner = { userId: string } | { tenantId: string }

/**
 * Inside the caller's transaction: spends every outstanding password-reset OTP, setup token
 * and login challenge of the user (or tenant), so a secret issued before a new password or an
 * admin action (a disable) cannot be used after it.
 */
export function spendOutstandingSecrets(db: Db, owner: SecretsOwner, now: number) {
  const ofOwner = <T extends typeof setupTokens.userId | typeof passwordResetOtps.userId | typeof mfaChallenges.userId>(column: T) =>
    'userId' in owner ? eq(column, owner.userId) : inArray(column, db.select({ id: users.id }).from(users).where(eq(users.tenantId, owner.tenantId)))
  db.update(setupTokens).set({ usedAt: now }).where(and(ofOwner(setupTokens.userId), isNull(setupTokens.usedAt))).run()
  db.update(passwordResetOtps).set({ spentAt: now }).where(and(ofOwner(passwordResetOtps.userId), isNull(passwordResetOtps.spentAt))).run()
  // A login challenge proves the password it was issued on: a new password (or an admin action) ends it.
  db.update(mfaChallenges).set({ spentAt: now }).where(and(ofOwner(mfaChallenges.userId), isNull(mfaChallenges.spentAt))).run()
}

/** Whose sessions to end: one user's (perhaps all but one session of theirs), or a tenant's. */
export type SessionsOwner = { userId: string; exceptFamilyId?: string } | { tenantId: string }

/** Inside the caller's transaction: revokes every live session of the user (or tenant); returns how many. */
export function revokeSessionsOf(db: Db, owner: SessionsOwner, now: number, reason: string): number {
  const ofOwner =
    'userId' in owner
      ? and(eq(refreshFamilies.userId, owner.userId), owner.exceptFamilyId === undefined ? undefined : ne(refreshFamilies.id, owner.exceptFamilyId))
      : eq(refreshFamilies.tenantId, owner.tenantId)
  return changesOf(db.update(refreshFamilies).set({ revokedAt: now, revokedReason: reason }).where(and(ofOwner, isNull(refreshFamilies.revokedAt))).run())
}

/**
 * What every new password brings, inside the caller's transaction: the hash stored, the
 * user's setup tokens and OTPs spent, every session revoked, and the notice queued.
 */
export function replacePasswordInTransaction(db: Db, input: { userId: string; passwordHash: string; now: number; reason: string; notice: OutboxMessage; keepSessionId?: string }) {
  const { userId, passwordHash, now, reason, notice } = input
  db.update(users).set({ passwordHash, updatedAt: now, sessionEpoch: sql`${users.sessionEpoch} + 1` }).where(eq(users.id, userId)).run()
  spendOutstandingSecrets(db, { userId }, now)
  revokeSessionsOf(db, { userId, exceptFamilyId: input.keepSessionId }, now, reason)
  db.insert(mailOutbox).values(notice).run()
}

/** Inside the caller's transaction: the erasure of UserStore.erase (see core/store.ts). */
export function eraseUserInTransaction(db: Db, user: { id: string; tenantId: string; email: string }): boolean {
  // Sessions (and their tokens, which keep IPs and user agents) go with the families.
  db.delete(refreshFamilies).where(eq(refreshFamilies.userId, user.id)).run()
  db.delete(passwordResetOtps).where(eq(passwordResetOtps.userId, user.id)).run()
  db.delete(setupTokens).where(eq(setupTokens.userId, user.id)).run()
  db.delete(mailOutbox).where(and(eq(mailOutbox.tenantId, user.tenantId), eq(mailOutbox.recipient, user.email))).run()
  db.delete(idempotencyKeys).where(eq(idempotencyKeys.userId, user.id)).run()
  db.update(auditEvents).set({ ip: null, userAgent: null, detail: null }).where(eq(auditEvents.userId, user.id)).run()
  return changesOf(db.delete(users).where(eq(users.id, user.id)).run()) === 1
}
