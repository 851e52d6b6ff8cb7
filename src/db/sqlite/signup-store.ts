// Pending sign-ups over SQLite (core/signup.ts). Every method is one transaction; the
// conditional delete in `complete` is what makes "20 concurrent verifications of one code
// give one account" hold.
import { and, count, eq, gt, gte, isNull, lt, lte, max, sql } from 'drizzle-orm'
import type { SignupStore } from '../../core/signup/store'
import type { Db } from './client'
import { changesOf, immediate } from './helpers'
import { toAuditRow } from './limit-audit-stores'
import { auditEvents, mailOutbox, pendingSignups, signupRequests, users } from './schema'

export function createSignupStore(db: Db): SignupStore {
  const byKey = db
    .select()
    .from(pendingSignups)
    .where(and(eq(pendingSignups.tenantId, sql.placeholder('tenantId')), eq(pendingSignups.emailKey, sql.placeholder('emailKey'))))
    .prepare()
  return {
    async request({ tenantId, emailKey, at, historySince, slot: slotFor, audit, pending, mail, replacingMail }) {
      return immediate(db, () => {
        const history = db
          .select({ issued: count(), lastIssuedAt: max(signupRequests.createdAt) })
          .from(signupRequests)
          .where(and(eq(signupRequests.tenantId, tenantId), eq(signupRequests.emailKey, emailKey), eq(signupRequests.issued, true), gte(signupRequests.createdAt, historySince)))
          .get()!
        const slot = slotFor(history)
        const current = pending ? byKey.get({ tenantId, emailKey }) : undefined
        const replacing = current !== undefined && current.spentAt === null && current.expiresAt > at
        // An issued request is logged at the time its mail leaves: the next one's interval counts from then.
        db.insert(signupRequests).values({ tenantId, emailKey, createdAt: slot?.at ?? at, issued: slot !== null }).run()
        db.insert(auditEvents).values(toAuditRow({ ...audit, detail: { ...audit.detail, underLimits: slot !== null, ...(replacing && { replacing }), ...(slot && slot.at > at && { mailAt: slot.at }) } })).run()
        if (pending) {
          // A newer sign-up ends the older one, whatever becomes of it: its code dies, and its mail if not yet sent.
          db.delete(pendingSignups).where(and(eq(pendingSignups.tenantId, tenantId), eq(pendingSignups.emailKey, emailKey))).run()
          if (mail) db.delete(mailOutbox).where(and(eq(mailOutbox.tenantId, tenantId), eq(mailOutbox.recipient, mail.recipient), eq(mailOutbox.kind, 'signup-code'), eq(mailOutbox.status, 'pending'))).run()
        }
        if (!slot) return null
        const later = slot.at - at
        const code = replacing && replacingMail ? replacingMail : mail
        if (pending) db.insert(pendingSignups).values({ ...pending, expiresAt: pending.expiresAt + later }).run()
        if (code) db.insert(mailOutbox).values({ ...code, nextAttemptAt: slot.at, secretExpiresAt: code.secretExpiresAt === null ? null : code.secretExpiresAt + later }).run()
        return slot
      })
    },
    async find(tenantId, emailKey) {
      return byKey.get({ tenantId, emailKey }) ?? null
    },
    async reserveTry({ tenantId, emailKey, now, maxAttempts }) {
      return immediate(db, () =>
        changesOf(
          db.update(pendingSignups)
            .set({ attempts: sql`${pendingSignups.attempts} + 1` })
            .where(and(eq(pendingSignups.tenantId, tenantId), eq(pendingSignups.emailKey, emailKey), isNull(pendingSignups.spentAt), gt(pendingSignups.expiresAt, now), lt(pendingSignups.attempts, maxAttempts)))
            .run(),
        ) === 1,
      )
    },
    async complete({ user, emailKey, codeHash, now, maxAttempts, audit }) {
      return immediate(db, () => {
        const taken = db.delete(pendingSignups).where(
          and(
            eq(pendingSignups.tenantId, user.tenantId),
            eq(pendingSignups.emailKey, emailKey),
            eq(pendingSignups.codeHash, codeHash),
            isNull(pendingSignups.spentAt),
            gt(pendingSignups.expiresAt, now),
            lte(pendingSignups.attempts, maxAttempts),
          ),
        )
        if (changesOf(taken.run()) !== 1) return 'spent' as const
        const existing = db.select({ id: users.id }).from(users).where(and(eq(users.tenantId, user.tenantId), eq(users.email, user.email))).get()
        if (existing) return 'email-taken' as const
        db.insert(users).values(user).run()
        db.insert(auditEvents).values(toAuditRow(audit)).run()
        return 'created' as const
      })
    },
  }
}
