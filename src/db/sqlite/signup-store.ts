// Pending sign-ups over SQLite (core/signup.ts). Every method is one transaction; the
// conditional delete in `complete` is what makes "20 concurrent verifications of one code
// give one account" hold.
import { and, desc, eq, gt, gte, inArray, isNull, lt, lte, sql } from 'drizzle-orm'
import type { SignupStore } from '../../core/signup/store'
import type { Db } from './client'
import { changesOf, immediate } from './helpers'
import { toAuditRow } from './limit-audit-stores'
import { auditEvents, mailOutbox, pendingSignups, signupRequests, users } from './schema'

/** A sign-up code mail to the address not yet taken by the outbox: it can still be withdrawn unsent. */
const unsentCodeMail = (tenantId: string, recipient: string) =>
  and(eq(mailOutbox.tenantId, tenantId), eq(mailOutbox.recipient, recipient), eq(mailOutbox.kind, 'signup-code'), eq(mailOutbox.status, 'pending'))

export function createSignupStore(db: Db): SignupStore {
  const byKey = db
    .select()
    .from(pendingSignups)
    .where(and(eq(pendingSignups.tenantId, sql.placeholder('tenantId')), eq(pendingSignups.emailKey, sql.placeholder('emailKey'))))
    .prepare()
  return {
    async request({ tenantId, emailKey, at, historySince, slot: slotFor, audit, pending, mail, replacingMail }) {
      return immediate(db, () => {
        const issued = db
          .select({ id: signupRequests.id, createdAt: signupRequests.createdAt })
          .from(signupRequests)
          .where(and(eq(signupRequests.tenantId, tenantId), eq(signupRequests.emailKey, emailKey), eq(signupRequests.issued, true), gte(signupRequests.createdAt, historySince)))
          .orderBy(desc(signupRequests.createdAt), desc(signupRequests.id))
          .all()
        // The code mail this sign-up would withdraw unsent (one at most: each withdraws the one
        // before) was never sent: its request stops counting against the address's budget.
        const unsent = pending && mail ? db.select({ id: mailOutbox.id }).from(mailOutbox).where(unsentCodeMail(tenantId, mail.recipient)).all() : []
        const withdrawn = issued.slice(0, unsent.length)
        const counted = issued.slice(unsent.length)
        const slot = slotFor({ issued: counted.length, lastIssuedAt: counted[0]?.createdAt ?? null })
        const current = pending ? byKey.get({ tenantId, emailKey }) : undefined
        const replacing = slot !== null && current !== undefined && current.spentAt === null && current.expiresAt > at
        // An issued request is logged at the time its mail leaves: the next one's interval counts from then.
        db.insert(signupRequests).values({ tenantId, emailKey, createdAt: slot?.at ?? at, issued: slot !== null }).run()
        db.insert(auditEvents).values(toAuditRow({ ...audit, detail: { ...audit.detail, underLimits: slot !== null, ...(replacing && { replacing }), ...(slot && slot.at > at && { mailAt: slot.at }) } })).run()
        // Past the budget nothing changes: the pending sign-up (the owner's, maybe) and its mail stay.
        if (!slot) return null
        if (pending) {
          // A newer sign-up ends the older one, whatever becomes of it: its code dies, and its mail if not yet sent.
          db.delete(pendingSignups).where(and(eq(pendingSignups.tenantId, tenantId), eq(pendingSignups.emailKey, emailKey))).run()
          if (unsent.length > 0) db.delete(mailOutbox).where(inArray(mailOutbox.id, unsent.map((m) => m.id))).run()
          if (withdrawn.length > 0) db.update(signupRequests).set({ issued: false }).where(inArray(signupRequests.id, withdrawn.map((r) => r.id))).run()
        }
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
