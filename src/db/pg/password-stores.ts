// Password resets (OTPs) and setup tokens over PostgreSQL: the SQLite rules
// (../password-stores.ts), with row-level conditional writes settling the races across
// instances and an advisory lock where a rule reads before it writes (the per-address limits).
import { and, count, desc, eq, gt, gte, isNull, lt, lte, max, sql } from 'drizzle-orm'
import type { PasswordResetStore, SetupTokenStore } from '../../core/accounts/store'
import type { PgDb } from './client'
import { lockKey, replacePassword, spendOutstandingSecrets } from './helpers'
import { lockAndReadLimits, toAuditRow, writeLimits } from './limit-audit-stores'
import { auditEvents, mailOutbox, passwordResetOtps, passwordResetRequests, setupTokens, users } from './schema'

export function createPgPasswordResetStore(db: PgDb): PasswordResetStore {
  return {
    async request({ tenantId, emailKey, at, historySince, allowed, audit, otp, mail }) {
      return db.transaction(async (tx) => {
        // Two requests for one address at once, on any instances, must not both pass the limits.
        await lockKey(tx, `reset:${tenantId}:${emailKey}`)
        const [history] = await tx
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
        const lastIssuedAt = history?.lastIssuedAt === null || history?.lastIssuedAt === undefined ? null : Number(history.lastIssuedAt)
        const underLimits = allowed({ issued: Number(history?.issued ?? 0), lastIssuedAt })
        await tx.insert(passwordResetRequests).values({ tenantId, emailKey, createdAt: at, issued: underLimits })
        await tx.insert(auditEvents).values(toAuditRow({ ...audit, detail: { ...audit.detail, underLimits } }))
        if (underLimits && otp) {
          const { userId: _, ...replacement } = otp
          await tx.insert(passwordResetOtps).values(otp).onConflictDoUpdate({ target: passwordResetOtps.userId, set: replacement })
        }
        if (underLimits && mail) await tx.insert(mailOutbox).values(mail)
        return underLimits
      })
    },
    async findOtp(owner) {
      const [row] = await db.select().from(passwordResetOtps).where(eq(passwordResetOtps.userId, owner))
      return row ?? null
    },
    async reserveTry({ tenantId, emailKey, otpOwner, now, ttlMs, maxAttempts, limits, verdict }) {
      return db.transaction(async (tx) => {
        const refused = verdict(await lockAndReadLimits(tx, limits.map((l) => l.key)))
        if (refused) return { refused, counted: false, admitted: false }
        // The OTP's row first, as complete() takes it: two orders would deadlock.
        const admitted = await tx
          .update(passwordResetOtps)
          .set({ attempts: sql`${passwordResetOtps.attempts} + 1` })
          .where(and(eq(passwordResetOtps.userId, otpOwner), isNull(passwordResetOtps.spentAt), gt(passwordResetOtps.expiresAt, now), lt(passwordResetOtps.attempts, maxAttempts)))
          .returning({ userId: passwordResetOtps.userId })
        const latest = tx
          .select({ id: passwordResetRequests.id })
          .from(passwordResetRequests)
          .where(and(eq(passwordResetRequests.tenantId, tenantId), eq(passwordResetRequests.emailKey, emailKey), eq(passwordResetRequests.issued, true)))
          .orderBy(desc(passwordResetRequests.createdAt), desc(passwordResetRequests.id))
          .limit(1)
        const tried = await tx
          .update(passwordResetRequests)
          .set({ attempts: sql`${passwordResetRequests.attempts} + 1` })
          .where(and(eq(passwordResetRequests.id, latest), gt(passwordResetRequests.createdAt, now - ttlMs), lt(passwordResetRequests.attempts, maxAttempts)))
          .returning({ id: passwordResetRequests.id })
        const counted = tried.length === 1
        if (counted) await writeLimits(tx, limits, now)
        return { refused: null, counted, admitted: admitted.length === 1 }
      })
    },
    async complete({ userId, tenantId, emailKey, codeHash, now, maxAttempts, passwordHash, notice }) {
      return db.transaction(async (tx) => {
        const spent = await tx
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
          .returning({ userId: passwordResetOtps.userId })
        if (spent.length !== 1) return false
        await tx
          .update(passwordResetRequests)
          .set({ attempts: maxAttempts })
          .where(and(eq(passwordResetRequests.tenantId, tenantId), eq(passwordResetRequests.emailKey, emailKey), eq(passwordResetRequests.issued, true)))
        await replacePassword(tx, { userId, passwordHash, now, reason: 'password-changed', notice })
        // The OTP was read in the mailbox.
        await tx.update(users).set({ emailVerifiedAt: now }).where(eq(users.id, userId))
        return true
      })
    },
  }
}

export function createPgSetupTokenStore(db: PgDb): SetupTokenStore {
  return {
    async findByHash(hash) {
      const [row] = await db.select().from(setupTokens).where(eq(setupTokens.tokenHash, hash))
      return row ?? null
    },
    async replace(token, mail) {
      await db.transaction(async (tx) => {
        await tx.update(setupTokens).set({ usedAt: token.createdAt }).where(and(eq(setupTokens.userId, token.userId), isNull(setupTokens.usedAt)))
        await tx.insert(setupTokens).values(token)
        if (mail) await tx.insert(mailOutbox).values(mail)
      })
    },
    async complete({ userId, passwordHash, now }) {
      return db.transaction(async (tx) => {
        const set = await tx
          .update(users)
          // The token reached the user by mail (or from an admin who took it for their address).
          .set({ passwordHash, updatedAt: now, emailVerifiedAt: now })
          .where(and(eq(users.id, userId), isNull(users.passwordHash)))
          .returning({ id: users.id })
        if (set.length !== 1) return false
        await spendOutstandingSecrets(tx, { userId }, now)
        return true
      })
    },
  }
}
