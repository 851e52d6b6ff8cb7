// Second factors over PostgreSQL: the SQLite rules (../mfa-store.ts); each conditional write is
// one statement, so concurrent uses on any instances settle on the row lock.
import { and, count, eq, gt, isNull, lt, lte, or, sql } from 'drizzle-orm'
import type { MfaStore } from '../../core/mfa/store'
import type { PgDb } from './client'
import { revokeSessionsOf } from './helpers'
import { lockAndReadLimits, toAuditRow, writeLimits } from './limit-audit-stores'
import { auditEvents, mailOutbox, mfaChallenges, mfaRecoveryCodes, mfaTotp, users } from './schema'

export function createPgMfaStore(db: PgDb): MfaStore {
  return {
    async findTotp(userId) {
      const [row] = await db.select().from(mfaTotp).where(eq(mfaTotp.userId, userId))
      return row ?? null
    },
    async beginTotp(factor) {
      return db.transaction(async (tx) => {
        // Only an unconfirmed factor is replaced: a confirmed one keeps the row (and its lock).
        await tx.delete(mfaTotp).where(and(eq(mfaTotp.userId, factor.userId), isNull(mfaTotp.confirmedAt)))
        const inserted = await tx.insert(mfaTotp).values(factor).onConflictDoNothing().returning({ userId: mfaTotp.userId })
        return inserted.length === 1
      })
    },
    async confirmTotp({ userId, step, now, keepSessionId, recoveryCodes, mail, audit }) {
      return db.transaction(async (tx) => {
        const confirmed = await tx
          .update(mfaTotp)
          .set({ confirmedAt: now, lastUsedStep: step })
          .where(and(eq(mfaTotp.userId, userId), isNull(mfaTotp.confirmedAt)))
          .returning({ userId: mfaTotp.userId })
        if (confirmed.length !== 1) return false
        await tx.update(users).set({ sessionEpoch: sql`${users.sessionEpoch} + 1` }).where(eq(users.id, userId))
        await tx.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId))
        await tx.insert(mfaRecoveryCodes).values(recoveryCodes)
        await revokeSessionsOf(tx, { userId, exceptFamilyId: keepSessionId }, now, 'mfa-enabled')
        await tx.insert(mailOutbox).values(mail)
        await tx.insert(auditEvents).values(toAuditRow(audit))
        return true
      })
    },
    async useTotpStep(userId, step) {
      const rows = await db
        .update(mfaTotp)
        .set({ lastUsedStep: step })
        .where(and(eq(mfaTotp.userId, userId), or(isNull(mfaTotp.lastUsedStep), lt(mfaTotp.lastUsedStep, step))))
        .returning({ userId: mfaTotp.userId })
      return rows.length === 1
    },
    async useRecoveryCode(userId, codeHash, now, notice) {
      return db.transaction(async (tx) => {
        const rows = await tx
          .update(mfaRecoveryCodes)
          .set({ usedAt: now })
          .where(and(eq(mfaRecoveryCodes.userId, userId), eq(mfaRecoveryCodes.codeHash, codeHash), isNull(mfaRecoveryCodes.usedAt)))
          .returning({ id: mfaRecoveryCodes.id })
        if (rows.length !== 1) return false
        if (notice) await tx.insert(mailOutbox).values(notice)
        return true
      })
    },
    async hasRecoveryCode(userId, codeHash) {
      const rows = await db
        .select({ id: mfaRecoveryCodes.id })
        .from(mfaRecoveryCodes)
        .where(and(eq(mfaRecoveryCodes.userId, userId), eq(mfaRecoveryCodes.codeHash, codeHash), isNull(mfaRecoveryCodes.usedAt)))
      return rows.length === 1
    },
    async countRecoveryCodes(userId) {
      const [row] = await db.select({ n: count() }).from(mfaRecoveryCodes).where(and(eq(mfaRecoveryCodes.userId, userId), isNull(mfaRecoveryCodes.usedAt)))
      return Number(row?.n ?? 0)
    },
    async removeTotp({ userId, mail, audit }) {
      return db.transaction(async (tx) => {
        const removed = (await tx.delete(mfaTotp).where(eq(mfaTotp.userId, userId)).returning({ userId: mfaTotp.userId })).length === 1
        await tx.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId))
        await tx.delete(mfaChallenges).where(eq(mfaChallenges.userId, userId))
        if (removed && mail) await tx.insert(mailOutbox).values(mail)
        await tx.insert(auditEvents).values(toAuditRow(audit))
        return removed
      })
    },
    async createChallenge(challenge) {
      await db.insert(mfaChallenges).values(challenge)
    },
    async findChallenge(tokenHash) {
      const [row] = await db.select().from(mfaChallenges).where(eq(mfaChallenges.tokenHash, tokenHash))
      return row ?? null
    },
    async reserveChallengeTry({ id, now, maxAttempts, limits, verdict }) {
      return db.transaction(async (tx) => {
        // The row lock holds concurrent tries of this challenge, on any instance, until this one commits.
        const [challenge] = await tx.select().from(mfaChallenges).where(eq(mfaChallenges.id, id)).for('update')
        if (!challenge || challenge.spentAt !== null || challenge.expiresAt <= now || challenge.attempts >= maxAttempts) return { refused: null, counted: false, admitted: false }
        const refused = verdict(await lockAndReadLimits(tx, limits.map((l) => l.key)))
        if (refused) return { refused, counted: false, admitted: false }
        await tx.update(mfaChallenges).set({ attempts: sql`${mfaChallenges.attempts} + 1` }).where(eq(mfaChallenges.id, id))
        await writeLimits(tx, limits, now)
        return { refused: null, counted: true, admitted: true }
      })
    },
    async spendChallenge(id, now, maxAttempts) {
      const rows = await db
        .update(mfaChallenges)
        .set({ spentAt: now })
        .where(and(eq(mfaChallenges.id, id), isNull(mfaChallenges.spentAt), gt(mfaChallenges.expiresAt, now), lte(mfaChallenges.attempts, maxAttempts)))
        .returning({ id: mfaChallenges.id })
      return rows.length === 1
    },
  }
}
