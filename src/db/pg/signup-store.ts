// Pending sign-ups over PostgreSQL: the SQLite rules (../signup-store.ts), with an advisory
// lock where a rule reads before it writes (the per-address limits) and a conditional delete
// settling concurrent verifications across instances.
import { and, desc, eq, gt, gte, inArray, isNull, lt, lte, sql } from 'drizzle-orm'
import type { SignupStore } from '../../core/signup/store'
import type { PgDb } from './client'
import { lockKey } from './helpers'
import { toAuditRow } from './limit-audit-stores'
import { auditEvents, mailOutbox, pendingSignups, signupRequests, users } from './schema'

export function createPgSignupStore(db: PgDb): SignupStore {
  return {
    async request({ tenantId, emailKey, at, historySince, slot: slotFor, audit, pending, mail, replacingMail }) {
      return db.transaction(async (tx) => {
        // Two requests for one address at once, on any instances, must not both pass the limits.
        await lockKey(tx, `signup:${tenantId}:${emailKey}`)
        const issued = await tx
          .select({ id: signupRequests.id, createdAt: signupRequests.createdAt })
          .from(signupRequests)
          .where(and(eq(signupRequests.tenantId, tenantId), eq(signupRequests.emailKey, emailKey), eq(signupRequests.issued, true), gte(signupRequests.createdAt, historySince)))
          .orderBy(desc(signupRequests.createdAt), desc(signupRequests.id))
        // The code mail this sign-up would withdraw unsent (one at most: each withdraws the one
        // before) was never sent: its request stops counting against the address's budget.
        const unsent = pending && mail
          ? await tx
              .select({ id: mailOutbox.id })
              .from(mailOutbox)
              .where(and(eq(mailOutbox.tenantId, tenantId), eq(mailOutbox.recipient, mail.recipient), eq(mailOutbox.kind, 'signup-code'), eq(mailOutbox.status, 'pending')))
          : []
        const withdrawn = issued.slice(0, unsent.length)
        const counted = issued.slice(unsent.length)
        const slot = slotFor({ issued: counted.length, lastIssuedAt: counted[0] === undefined ? null : Number(counted[0].createdAt) })
        const [current] = pending ? await tx.select().from(pendingSignups).where(and(eq(pendingSignups.tenantId, tenantId), eq(pendingSignups.emailKey, emailKey))) : []
        const replacing = slot !== null && current !== undefined && current.spentAt === null && current.expiresAt > at
        await tx.insert(signupRequests).values({ tenantId, emailKey, createdAt: slot?.at ?? at, issued: slot !== null })
        await tx.insert(auditEvents).values(toAuditRow({ ...audit, detail: { ...audit.detail, underLimits: slot !== null, ...(replacing && { replacing }), ...(slot && slot.at > at && { mailAt: slot.at }) } }))
        // Past the budget nothing changes: the pending sign-up (the owner's, maybe) and its mail stay.
        if (!slot) return null
        if (pending) {
          await tx.delete(pendingSignups).where(and(eq(pendingSignups.tenantId, tenantId), eq(pendingSignups.emailKey, emailKey)))
          if (unsent.length > 0) await tx.delete(mailOutbox).where(inArray(mailOutbox.id, unsent.map((m) => m.id)))
          if (withdrawn.length > 0) await tx.update(signupRequests).set({ issued: false }).where(inArray(signupRequests.id, withdrawn.map((r) => r.id)))
        }
        const later = slot.at - at
        const code = replacing && replacingMail ? replacingMail : mail
        if (pending) await tx.insert(pendingSignups).values({ ...pending, expiresAt: pending.expiresAt + later })
        if (code) await tx.insert(mailOutbox).values({ ...code, nextAttemptAt: slot.at, secretExpiresAt: code.secretExpiresAt === null ? null : code.secretExpiresAt + later })
        return slot
      })
    },
    async find(tenantId, emailKey) {
      const [row] = await db
        .select()
        .from(pendingSignups)
        .where(and(eq(pendingSignups.tenantId, tenantId), eq(pendingSignups.emailKey, emailKey)))
      return row ?? null
    },
    async reserveTry({ tenantId, emailKey, now, maxAttempts }) {
      const rows = await db
        .update(pendingSignups)
        .set({ attempts: sql`${pendingSignups.attempts} + 1` })
        .where(and(eq(pendingSignups.tenantId, tenantId), eq(pendingSignups.emailKey, emailKey), isNull(pendingSignups.spentAt), gt(pendingSignups.expiresAt, now), lt(pendingSignups.attempts, maxAttempts)))
        .returning({ emailKey: pendingSignups.emailKey })
      return rows.length === 1
    },
    async complete({ user, emailKey, codeHash, now, maxAttempts, audit }) {
      return db.transaction(async (tx) => {
        // A concurrent verification waits on the row lock here, then finds the row gone.
        const taken = await tx
          .delete(pendingSignups)
          .where(
            and(
              eq(pendingSignups.tenantId, user.tenantId),
              eq(pendingSignups.emailKey, emailKey),
              eq(pendingSignups.codeHash, codeHash),
              isNull(pendingSignups.spentAt),
              gt(pendingSignups.expiresAt, now),
              lte(pendingSignups.attempts, maxAttempts),
            ),
          )
          .returning({ tenantId: pendingSignups.tenantId })
        if (taken.length !== 1) return 'spent' as const
        const inserted = await tx.insert(users).values(user).onConflictDoNothing().returning({ id: users.id })
        if (inserted.length !== 1) return 'email-taken' as const
        await tx.insert(auditEvents).values(toAuditRow(audit))
        return 'created' as const
      })
    },
  }
}
