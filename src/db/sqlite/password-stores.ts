// Password resets (OTPs) and setup tokens over SQLite. The conditional writes here are what
// make "20 concurrent uses of one OTP give one success" hold.
import { and, count, eq, gt, gte, isNull, lt, lte, max, sql } from 'drizzle-orm'
import type { PasswordResetStore, SetupTokenStore } from '../../core/accounts/store'
import type { Db } from './client'
import { changesOf, immediate, replacePasswordInTransaction, spendOutstandingSecrets } from './helpers'
import { limitReader, limitWriter } from './limit-audit-stores'
import { auditEvents, mailOutbox, passwordResetOtps, passwordResetRequests, setupTokens, users } from './schema'

export function createPasswordResetStore(db: Db): PasswordResetStore {
  const otpByUser = db.select().from(passwordResetOtps).where(eq(passwordResetOtps.userId, sql.placeholder('userId'))).prepare()
  // A try against the latest reset request of the address, if it was issued recently enough
  // for its code to be live and has tries left.
  const countTry = db.$client.prepare(`
    UPDATE password_reset_requests SET attempts = attempts + 1
    WHERE id = (
      SELECT id FROM password_reset_requests
      WHERE tenant_id = $tenantId AND email_key = $emailKey AND issued = 1
      ORDER BY created_at DESC, id DESC LIMIT 1
    ) AND created_at > $since AND attempts < $maxAttempts`)
  const writeLimits = limitWriter(db)
  const readLimits = limitReader(db)
  return {
    async request({ tenantId, emailKey, at, historySince, allowed, audit, otp, mail }) {
      return immediate(db, () => {
        const history = db
          .select({ issued: count(), lastIssuedAt: max(passwordResetRequests.createdAt) })
          .from(passwordResetRequests)
          .where(
            and(
              eq(passwordResetRequests.tenantId, tenantId),
              eq(passwordResetRequests.emailKey, emailKey),
              eq(passwordResetRequests.issued, true),
              gte(passwordResetRequests.createdAt, historySince),
            ),
          )
          .get()!
        const underLimits = allowed(history)
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
    async findOtp(owner) {
      return otpByUser.get({ userId: owner }) ?? null
    },
    async reserveTry({ tenantId, emailKey, otpOwner, now, ttlMs, maxAttempts, limits, verdict }) {
      return immediate(db, () => {
        const refused = verdict(readLimits(limits.map((l) => l.key)))
        if (refused) return { refused, counted: false, admitted: false }
        const counted = changesOf(countTry.run({ tenantId, emailKey, since: now - ttlMs, maxAttempts })) === 1
        const admitted =
          changesOf(
            db.update(passwordResetOtps)
              .set({ attempts: sql`${passwordResetOtps.attempts} + 1` })
              .where(and(eq(passwordResetOtps.userId, otpOwner), isNull(passwordResetOtps.spentAt), gt(passwordResetOtps.expiresAt, now), lt(passwordResetOtps.attempts, maxAttempts)))
              .run(),
          ) === 1
        if (counted) writeLimits(limits, now)
        return { refused: null, counted, admitted }
      })
    },
    async complete({ userId, tenantId, emailKey, codeHash, now, maxAttempts, passwordHash, notice }) {
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
              lte(passwordResetOtps.attempts, maxAttempts),
            ),
          )
          .run()
        if (changesOf(spent) !== 1) return false
        // No code can match any more: later wrong tries do not count toward the lock.
        db.update(passwordResetRequests)
          .set({ attempts: maxAttempts })
          .where(and(eq(passwordResetRequests.tenantId, tenantId), eq(passwordResetRequests.emailKey, emailKey), eq(passwordResetRequests.issued, true)))
          .run()
        replacePasswordInTransaction(db, { userId, passwordHash, now, reason: 'password-changed', notice })
        // The OTP was read in the mailbox.
        db.update(users).set({ emailVerifiedAt: now }).where(eq(users.id, userId)).run()
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
      await immediate(db, () => {
        db.update(setupTokens).set({ usedAt: token.createdAt }).where(and(eq(setupTokens.userId, token.userId), isNull(setupTokens.usedAt))).run()
        db.insert(setupTokens).values(token).run()
        if (mail) db.insert(mailOutbox).values(mail).run()
      })
    },
    async complete({ userId, passwordHash, now }) {
      return immediate(db, () => {
        // The token reached the user by mail (or from an admin who took it for their address).
        const set = db.update(users).set({ passwordHash, updatedAt: now, emailVerifiedAt: now }).where(and(eq(users.id, userId), isNull(users.passwordHash))).run()
        if (changesOf(set) !== 1) return false
        spendOutstandingSecrets(db, { userId }, now)
        return true
      })
    },
  }
}
