// Password resets (OTPs) and setup tokens over SQLite. The conditional writes here are what
// make "20 concurrent uses of one OTP give one success" hold.
import { and, count, eq, gt, gte, isNull, lt, max, sql } from 'drizzle-orm'
import type { PasswordResetStore, SetupTokenStore } from '../core/store'
import type { Db } from './client'
import { changesOf, immediate, replacePasswordInTransaction, spendOutstandingSecrets } from './helpers'
import { auditEvents, mailOutbox, passwordResetOtps, passwordResetRequests, setupTokens, users } from './schema'

export function createPasswordResetStore(db: Db): PasswordResetStore {
  const otpByUser = db.select().from(passwordResetOtps).where(eq(passwordResetOtps.userId, sql.placeholder('userId'))).prepare()
  return {
    async request({ tenantId, emailKey, at, limits, audit, otp, mail }) {
      return immediate(db, () => {
        const recent = (since: number) =>
          db
            .select({ n: count(), last: max(passwordResetRequests.createdAt) })
            .from(passwordResetRequests)
            .where(
              and(
                eq(passwordResetRequests.tenantId, tenantId),
                eq(passwordResetRequests.emailKey, emailKey),
                eq(passwordResetRequests.issued, true),
                gte(passwordResetRequests.createdAt, since),
              ),
            )
            .get()!
        const lastHour = recent(at - 3600_000)
        const underLimits = lastHour.n < limits.perHour && (lastHour.last === null || lastHour.last <= at - limits.intervalMs)
        db.insert(passwordResetRequests).values({ tenantId, emailKey, createdAt: at, issued: underLimits }).run()
        db.insert(auditEvents).values({ ...audit, detail: JSON.stringify({ ...audit.detail, underLimits }) }).run()
        if (underLimits && otp) {
          const { userId: _, ...replacement } = otp
          db.insert(passwordResetOtps).values(otp).onConflictDoUpdate({ target: passwordResetOtps.userId, set: replacement }).run()
        }
        if (underLimits && mail) db.insert(mailOutbox).values(mail).run()
        return underLimits
      })
    },
    async findOtp(userId) {
      return otpByUser.get({ userId }) ?? null
    },
    async recordOtpFailure(userId, now, maxAttempts) {
      db.update(passwordResetOtps)
        .set({
          attempts: sql`${passwordResetOtps.attempts} + 1`,
          spentAt: sql`CASE WHEN ${passwordResetOtps.attempts} + 1 >= ${maxAttempts} THEN ${now} ELSE NULL END`,
        })
        .where(and(eq(passwordResetOtps.userId, userId), isNull(passwordResetOtps.spentAt)))
        .run()
    },
    async complete({ userId, codeHash, now, maxAttempts, passwordHash, notice }) {
      return immediate(db, () => {
        const spent = db
          .update(passwordResetOtps)
          .set({ spentAt: now })
          .where(
            and(
              eq(passwordResetOtps.userId, userId),
              eq(passwordResetOtps.codeHash, codeHash),
              isNull(passwordResetOtps.spentAt),
              gt(passwordResetOtps.expiresAt, now),
              lt(passwordResetOtps.attempts, maxAttempts),
            ),
          )
          .run()
        if (changesOf(spent) !== 1) return false
        replacePasswordInTransaction(db, { userId, passwordHash, now, reason: 'password-changed', notice })
        return true
      })
    },
  }
}

export function createSetupTokenStore(db: Db): SetupTokenStore {
  const byHash = db.select().from(setupTokens).where(eq(setupTokens.tokenHash, sql.placeholder('hash'))).prepare()
  return {
    async findByHash(hash) {
      return byHash.get({ hash }) ?? null
    },
    async replace(token, mail) {
      immediate(db, () => {
        db.update(setupTokens).set({ usedAt: token.createdAt }).where(and(eq(setupTokens.userId, token.userId), isNull(setupTokens.usedAt))).run()
        db.insert(setupTokens).values(token).run()
        if (mail) db.insert(mailOutbox).values(mail).run()
      })
    },
    async complete({ userId, passwordHash, now }) {
      return immediate(db, () => {
        const set = db.update(users).set({ passwordHash, updatedAt: now }).where(and(eq(users.id, userId), isNull(users.passwordHash))).run()
        if (changesOf(set) !== 1) return false
        spendOutstandingSecrets(db, { userId }, now)
        return true
      })
    },
  }
}
