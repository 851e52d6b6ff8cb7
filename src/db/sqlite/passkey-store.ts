// Passkeys over SQLite (core/passkeys). The conditional writes here are what make a ceremony's
// challenge work once, a credential id register once, and a user hold at most `max` passkeys,
// however many requests race.
import { and, asc, count, eq, gt, isNull, lt, or, sql } from 'drizzle-orm'
import type { PasskeyStore } from '../../core/passkeys/store'
import type { Passkey } from '../../core/types'
import type { Db } from './client'
import { changesOf, immediate, isUniqueViolation } from './helpers'
import { toAuditRow } from './limit-audit-stores'
import { auditEvents, mailOutbox, passkeys, webauthnChallenges } from './schema'

/** The stored counter may become `counter`: it is lower, or both are 0 (a synced passkey). */
const counterMovesTo = (counter: number) => or(lt(passkeys.counter, counter), and(eq(passkeys.counter, 0), sql`${counter} = 0`))

export function createPasskeyStore(db: Db): PasskeyStore {
  const byCredential = db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.tenantId, sql.placeholder('tenantId')), eq(passkeys.credentialId, sql.placeholder('credentialId'))))
    .prepare()
  return {
    async listByUser(userId) {
      return db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.createdAt), asc(passkeys.id)).all()
    },
    async findByCredentialId(tenantId, credentialId) {
      return (byCredential.get({ tenantId, credentialId }) as Passkey | undefined) ?? null
    },
    async insert({ passkey, max, mail, audit }) {
      try {
        return await immediate(db, () => {
          const held = db.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, passkey.userId)).get()!.n
          if (held >= max) return 'too-many' as const
          db.insert(passkeys).values(passkey).run()
          db.insert(mailOutbox).values(mail).run()
          db.insert(auditEvents).values(toAuditRow(audit)).run()
          return 'added' as const
        })
      } catch (error) {
        if (isUniqueViolation(error)) return 'taken'
        throw error
      }
    },
    async rename(id, userId, name) {
      return immediate(db, () => db.update(passkeys).set({ name }).where(and(eq(passkeys.id, id), eq(passkeys.userId, userId))).returning().get() ?? null)
    },
    async remove(id, userId, audit) {
      return immediate(db, () => {
        const removed = changesOf(db.delete(passkeys).where(and(eq(passkeys.id, id), eq(passkeys.userId, userId))).run()) === 1
        if (removed) db.insert(auditEvents).values(toAuditRow(audit)).run()
        return removed
      })
    },
    async recordUse(id, counter, now) {
      return immediate(db, () => changesOf(db.update(passkeys).set({ counter, lastUsedAt: now }).where(and(eq(passkeys.id, id), counterMovesTo(counter))).run()) === 1)
    },
    async createChallenge(challenge) {
      await immediate(db, () => db.insert(webauthnChallenges).values(challenge).run())
    },
    async spendChallenge(id, tenantId, purpose, now) {
      return immediate(
        db,
        () =>
          db
            .update(webauthnChallenges)
            .set({ spentAt: now })
            .where(and(eq(webauthnChallenges.id, id), eq(webauthnChallenges.tenantId, tenantId), eq(webauthnChallenges.purpose, purpose), isNull(webauthnChallenges.spentAt), gt(webauthnChallenges.expiresAt, now)))
            .returning()
            .get() ?? null,
      )
    },
  }
}
