// The OpenID Provider over PostgreSQL: the SQLite rules (../oidc-store.ts). Two instances
// redeeming one code at once: the conditional UPDATE takes the code's row lock, so the second
// waits, then finds it spent and starts nothing; a reuse locks the row too (FOR UPDATE), so it
// revokes the grant of a redemption that was still committing.
import { and, asc, eq, gt, isNull, lte } from 'drizzle-orm'
import type { OidcStore } from '../../core/oidc/store'
import { toClient, toClientRow, toDeviceAuthorization } from '../sqlite/oidc-store'
import type { PgDb } from './client'
import { toAuditRow } from './limit-audit-stores'
import { auditEvents, clientAssertions, deviceAuthorizations, oidcClients, oidcCodes, oidcConsents, refreshFamilies, refreshTokens, users } from './schema'

type Executor = Pick<PgDb, 'update'>
type ClientRow = typeof oidcClients.$inferSelect

export function createPgOidcStore(db: PgDb): OidcStore {
  // (ending a user's grants to a client spends that user's unredeemed codes for it too: see ../oidc-store.ts)
  const revokeGrants = async (tx: Executor, userId: string | null, clientId: string, now: number, reason: string) => {
    if (userId !== null) await tx.update(oidcCodes).set({ spentAt: now }).where(and(eq(oidcCodes.userId, userId), eq(oidcCodes.clientId, clientId), isNull(oidcCodes.spentAt)))
    return (
      await tx
        .update(refreshFamilies)
        .set({ revokedAt: now, revokedReason: reason })
        .where(and(eq(refreshFamilies.clientId, clientId), userId === null ? undefined : eq(refreshFamilies.userId, userId), isNull(refreshFamilies.revokedAt)))
        .returning({ id: refreshFamilies.id })
    ).length
  }
  return {
    async insertClient(client) {
      await db.insert(oidcClients).values(toClientRow(client) as ClientRow)
    },
    async getClient(id) {
      const [row] = await db.select().from(oidcClients).where(eq(oidcClients.id, id))
      return row ? toClient(row) : null
    },
    async listClients(tenantId) {
      return (await db.select().from(oidcClients).where(eq(oidcClients.tenantId, tenantId)).orderBy(asc(oidcClients.createdAt), asc(oidcClients.id))).map(toClient)
    },
    async updateClient(id, changes) {
      const [row] = await db.update(oidcClients).set(toClientRow(changes)).where(eq(oidcClients.id, id)).returning()
      return row ? toClient(row) : null
    },
    async deleteClient(id, now) {
      return db.transaction(async (tx) => {
        await revokeGrants(tx, null, id, now, 'client-deleted')
        await tx.delete(oidcCodes).where(eq(oidcCodes.clientId, id))
        await tx.delete(oidcConsents).where(eq(oidcConsents.clientId, id))
        return (await tx.delete(oidcClients).where(eq(oidcClients.id, id)).returning({ id: oidcClients.id })).length === 1
      })
    },
    async spendClientAssertion(clientId, jtiHash, expiresAt, now) {
      // One statement: a live row of the jti keeps it (a replay, nothing returned); an expired
      // one is taken over, so a jti may be used again once its assertion has expired.
      const rows = await db
        .insert(clientAssertions)
        .values({ clientId, jtiHash, expiresAt })
        .onConflictDoUpdate({ target: [clientAssertions.clientId, clientAssertions.jtiHash], set: { expiresAt }, setWhere: lte(clientAssertions.expiresAt, now) })
        .returning({ clientId: clientAssertions.clientId })
      return rows.length === 1
    },
    async insertCode(code) {
      await db.insert(oidcCodes).values(code)
    },
    async findCode(codeHash) {
      const [row] = await db.select().from(oidcCodes).where(eq(oidcCodes.codeHash, codeHash))
      return row ?? null
    },
    async redeemCode({ codeId, now, family, firstToken, userEpoch, audit }) {
      return db.transaction(async (tx) => {
        const spent = await tx
          .update(oidcCodes)
          .set({ spentAt: now, familyId: family.id })
          .where(and(eq(oidcCodes.id, codeId), isNull(oidcCodes.spentAt), gt(oidcCodes.expiresAt, now)))
          .returning({ sessionId: oidcCodes.sessionId })
        if (spent.length !== 1) return 'spent' as const
        const [user] = await tx.select({ sessionEpoch: users.sessionEpoch }).from(users).where(eq(users.id, family.userId))
        if (user?.sessionEpoch !== userEpoch) return 'stale' as const
        // (the page session ended since: see ../oidc-store.ts; the share lock makes a revocation under way finish first)
        const [page] = await tx.select({ revokedAt: refreshFamilies.revokedAt }).from(refreshFamilies).where(eq(refreshFamilies.id, spent[0]!.sessionId)).for('share')
        if (page && page.revokedAt !== null) return 'stale' as const
        await tx.insert(refreshFamilies).values(family)
        await tx.insert(refreshTokens).values(firstToken)
        await tx.insert(auditEvents).values(toAuditRow(audit))
        return 'redeemed' as const
      })
    },
    async revokeCodeGrant(codeId, now, audit) {
      await db.transaction(async (tx) => {
        const [code] = await tx.select({ familyId: oidcCodes.familyId }).from(oidcCodes).where(eq(oidcCodes.id, codeId)).for('update')
        if (code?.familyId) await tx.update(refreshFamilies).set({ revokedAt: now, revokedReason: 'code-reused' }).where(and(eq(refreshFamilies.id, code.familyId), isNull(refreshFamilies.revokedAt)))
        await tx.insert(auditEvents).values(toAuditRow(audit))
      })
    },
    async findConsent(userId, clientId) {
      const [row] = await db.select().from(oidcConsents).where(and(eq(oidcConsents.userId, userId), eq(oidcConsents.clientId, clientId)))
      return row ?? null
    },
    async saveConsent(consent) {
      await db
        .insert(oidcConsents)
        .values(consent)
        .onConflictDoUpdate({ target: [oidcConsents.userId, oidcConsents.clientId], set: { scope: consent.scope, createdAt: consent.createdAt } })
    },
    async listConsents(userId) {
      return db.select().from(oidcConsents).where(eq(oidcConsents.userId, userId)).orderBy(asc(oidcConsents.createdAt))
    },
    async withdrawConsent(userId, clientId, now) {
      return db.transaction(async (tx) => {
        await revokeGrants(tx, userId, clientId, now, 'consent-withdrawn')
        return (await tx.delete(oidcConsents).where(and(eq(oidcConsents.userId, userId), eq(oidcConsents.clientId, clientId))).returning({ userId: oidcConsents.userId })).length === 1
      })
    },
    async revokeGrants(userId, clientId, now, reason) {
      return db.transaction((tx) => revokeGrants(tx, userId, clientId, now, reason))
    },
    async insertDeviceAuthorization(authorization) {
      return (await db.insert(deviceAuthorizations).values(authorization).onConflictDoNothing().returning({ id: deviceAuthorizations.id })).length === 1
    },
    async findDeviceAuthorization(by) {
      const where = 'deviceCodeHash' in by ? eq(deviceAuthorizations.deviceCodeHash, by.deviceCodeHash) : eq(deviceAuthorizations.userCodeHash, by.userCodeHash)
      const [row] = await db.select().from(deviceAuthorizations).where(where)
      return row ? toDeviceAuthorization(row) : null
    },
    async recordDevicePoll(id, now, intervalSec) {
      await db.update(deviceAuthorizations).set({ lastPolledAt: now, intervalSec }).where(eq(deviceAuthorizations.id, id))
    },
    async decideDeviceAuthorization(id, { status, userId, now, code }) {
      return db.transaction(async (tx) => {
        // (the conditional UPDATE takes the row lock: a racing decision waits, then finds it decided)
        const decided = await tx
          .update(deviceAuthorizations)
          .set({ status, userId, decidedAt: now })
          .where(and(eq(deviceAuthorizations.id, id), eq(deviceAuthorizations.status, 'pending'), gt(deviceAuthorizations.expiresAt, now)))
          .returning({ id: deviceAuthorizations.id })
        if (decided.length !== 1) return false
        if (code) await tx.insert(oidcCodes).values(code)
        return true
      })
    },
  }
}
