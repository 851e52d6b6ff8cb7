// Second factors over SQLite (core/mfa/). The conditional writes here are what make a TOTP
// code work once, a recovery code once, and a challenge give one session however many race.
import { and, count, eq, gt, isNull, lt, lte, or, sql } from 'drizzle-orm'
import type { MfaStore } from '../../core/mfa/store'
import type { Db } from './client'
import { changesOf, immediate, revokeSessionsOf } from './helpers'
import { limitReader, limitWriter, toAuditRow } from './limit-audit-stores'
import { auditEvents, mailOutbox, mfaChallenges, mfaRecoveryCodes, mfaTotp, users } from './schema'

export function createMfaStore(db: Db): MfaStore {
  const totpByUser = db.select().from(mfaTotp).where(eq(mfaTotp.userId, sql.placeholder('userId'))).prepare()
  const challengeByHash = db.select().from(mfaChallenges).where(eq(mfaChallenges.tokenHash, sql.placeholder('hash'))).prepare()
  const readLimits = limitReader(db)
  const writeLimits = limitWriter(db)
  return {
    async findTotp(userId) {
      return totpByUser.get({ userId }) ?? null
    },
    async beginTotp(factor) {
      return immediate(db, () => {
        const existing = totpByUser.get({ userId: factor.userId })
        if (existing?.confirmedAt != null) return false
        db.delete(mfaTotp).where(eq(mfaTotp.userId, factor.userId)).run()
        db.insert(mfaTotp).values(factor).run()
        return true
      })
    },
    async confirmTotp({ userId, step, now, keepSessionId, recoveryCodes, mail, audit }) {
      return immediate(db, () => {
        const confirmed = db
          .update(mfaTotp)
          .set({ confirmedAt: now, lastUsedStep: step })
          .where(and(eq(mfaTotp.userId, userId), isNull(mfaTotp.confirmedAt)))
          .run()
        if (changesOf(confirmed) !== 1) return false
        db.update(users).set({ sessionEpoch: sql`${users.sessionEpoch} + 1` }).where(eq(users.id, userId)).run()
        db.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId)).run()
        db.insert(mfaRecoveryCodes).values(recoveryCodes).run()
        revokeSessionsOf(db, { userId, exceptFamilyId: keepSessionId }, now, 'mfa-enabled')
        db.insert(mailOutbox).values(mail).run()
        db.insert(auditEvents).values(toAuditRow(audit)).run()
        return true
      })
    },
    async useTotpStep(userId, step) {
      return immediate(db, () =>
        changesOf(
          db.update(mfaTotp)
            .set({ lastUsedStep: step })
            .where(and(eq(mfaTotp.userId, userId), or(isNull(mfaTotp.lastUsedStep), lt(mfaTotp.lastUsedStep, step))))
            .run(),
        ) === 1,
      )
    },
    async useRecoveryCode(userId, codeHash, now, notice) {
      return immediate(db, () => {
        const spent = db
          .update(mfaRecoveryCodes)
          .set({ usedAt: now })
          .where(and(eq(mfaRecoveryCodes.userId, userId), eq(mfaRecoveryCodes.codeHash, codeHash), isNull(mfaRecoveryCodes.usedAt)))
          .run()
        if (changesOf(spent) !== 1) return false
        if (notice) db.insert(mailOutbox).values(notice).run()
        return true
      })
    },
    async hasRecoveryCode(userId, codeHash) {
      const row = db
        .select({ id: mfaRecoveryCodes.id })
        .from(mfaRecoveryCodes)
        .where(and(eq(mfaRecoveryCodes.userId, userId), eq(mfaRecoveryCodes.codeHash, codeHash), isNull(mfaRecoveryCodes.usedAt)))
        .get()
      return row !== undefined
    },
    async countRecoveryCodes(userId) {
      return db.select({ n: count() }).from(mfaRecoveryCodes).where(and(eq(mfaRecoveryCodes.userId, userId), isNull(mfaRecoveryCodes.usedAt))).get()!.n
    },
    async removeTotp({ userId, mail, audit }) {
      return immediate(db, () => {
        const removed = changesOf(db.delete(mfaTotp).where(eq(mfaTotp.userId, userId)).run()) === 1
        db.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId)).run()
        db.delete(mfaChallenges).where(eq(mfaChallenges.userId, userId)).run()
        if (removed && mail) db.insert(mailOutbox).values(mail).run()
        db.insert(auditEvents).values(toAuditRow(audit)).run()
        return removed
      })
    },
    async createChallenge(challenge) {
      await immediate(db, () => db.insert(mfaChallenges).values(challenge).run())
    },
    async findChallenge(tokenHash) {
      return challengeByHash.get({ hash: tokenHash }) ?? null
    },
    async reserveChallengeTry({ id, now, maxAttempts, limits, verdict }) {
      return immediate(db, () => {
        const challenge = db.select().from(mfaChallenges).where(eq(mfaChallenges.id, id)).get()
        if (!challenge || challenge.spentAt !== null || challenge.expiresAt <= now || challenge.attempts >= maxAttempts) return { refused: null, counted: false, admitted: false }
        const refused = verdict(readLimits(limits.map((l) => l.key)))
        if (refused) return { refused, counted: false, admitted: false }
        db.update(mfaChallenges).set({ attempts: sql`${mfaChallenges.attempts} + 1` }).where(eq(mfaChallenges.id, id)).run()
        writeLimits(limits, now)
        return { refused: null, counted: true, admitted: true }
      })
    },
    async spendChallenge(id, now, maxAttempts) {
      return immediate(db, () =>
        changesOf(
          db.update(mfaChallenges)
            .set({ spentAt: now })
            .where(and(eq(mfaChallenges.id, id), isNull(mfaChallenges.spentAt), gt(mfaChallenges.expiresAt, now), lte(mfaChallenges.attempts, maxAttempts)))
            .run(),
        ) === 1,
      )
    },
  }
}
