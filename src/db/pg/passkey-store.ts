// Passkeys over PostgreSQL: the SQLite rules (../passkey-store.ts). A user's passkeys are
// counted under an advisory lock on the user, so two registrations racing on any instances
// cannot both pass the limit; the other rules are single conditional statements.
import { and, asc, count, eq, gt, isNull, lt, or, sql } from 'drizzle-orm'
import type { PasskeyStore } from '../../core/passkeys/store'
import type { PgDb } from './client'
import { isPgUniqueViolation } from './client'
import { lockKey } from './helpers'
import { toAuditRow } from './limit-audit-stores'
import { auditEvents, mailOutbox, passkeys, webauthnChallenges } from './schema'

export function createPgPasskeyStore(db: PgDb): PasskeyStore {
  return {
    async listByUser(userId) {
      return db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.createdAt), asc(passkeys.id))
    },
    async findByCredentialId(tenantId, credentialId) {
      const [row] = await db.select().from(passkeys).where(and(eq(passkeys.tenantId, tenantId), eq(passkeys.credentialId, credentialId)))
      return row ?? null
    },
    async insert({ passkey, max, mail, audit }) {
      try {
        return await db.transaction(async (tx) => {
          await lockKey(tx, `passkeys:${passkey.userId}`)
          const [held] = await tx.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, passkey.userId))
          if (Number(held?.n ?? 0) >= max) return 'too-many' as const
          await tx.insert(passkeys).values(passkey)
          await tx.insert(mailOutbox).values(mail)
          await tx.insert(auditEvents).values(toAuditRow(audit))
          return 'added' as const
        })
      } catch (error) {
        if (isPgUniqueViolation(error)) return 'taken'
        throw error
      }
    },
    async rename(id, userId, name) {
      const [row] = await db.update(passkeys).set({ name }).where(and(eq(passkeys.id, id), eq(passkeys.userId, userId))).returning()
      return row ?? null
    },
    async remove(id, userId, audit) {
      return db.transaction(async (tx) => {
        const removed = await tx.delete(passkeys).where(and(eq(passkeys.id, id), eq(passkeys.userId, userId))).returning({ id: passkeys.id })
        if (removed.length === 1) await tx.insert(auditEvents).values(toAuditRow(audit))
        return removed.length === 1
      })
    },
    async recordUse(id, counter, now) {
      const moved = await db
        .update(passkeys)
        .set({ counter, lastUsedAt: now })
        .where(and(eq(passkeys.id, id), or(lt(passkeys.counter, counter), and(eq(passkeys.counter, 0), sql`${counter}::bigint = 0`))))
        .returning({ id: passkeys.id })
      return moved.length === 1
    },
    async createChallenge(challenge) {
      await db.insert(webauthnChallenges).values(challenge)
    },
    async spendChallenge(id, tenantId, purpose, now) {
      const [row] = await db
        .update(webauthnChallenges)
        .set({ spentAt: now })
        .where(and(eq(webauthnChallenges.id, id), eq(webauthnChallenges.tenantId, tenantId), eq(webauthnChallenges.purpose, purpose), isNull(webauthnChallenges.spentAt), gt(webauthnChallenges.expiresAt, now)))
        .returning()
      return row ?? null
    },
  }
}
