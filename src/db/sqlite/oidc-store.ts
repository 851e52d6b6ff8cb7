// The OpenID Provider over SQLite (core/oidc). A code is spent by one conditional write in the
// same transaction that starts its grant, so two redemptions racing give one grant; a second
// use revokes the grant the first started.
import { and, asc, eq, gt, isNull, lte } from 'drizzle-orm'
import type { OidcStore } from '../../core/oidc/store'
import type { DeviceAuthorization, OidcClient } from '../../core/oidc/types'
import type { Db } from './client'
import { changesOf, immediate } from './helpers'
import { toAuditRow } from './limit-audit-stores'
import { auditEvents, clientAssertions, deviceAuthorizations, oidcClients, oidcCodes, oidcConsents, refreshFamilies, refreshTokens, users } from './schema'

type ClientRow = typeof oidcClients.$inferSelect

export const toClient = (row: ClientRow): OidcClient => ({
  ...row,
  idTokenAlg: row.idTokenAlg as OidcClient['idTokenAlg'],
  groupsClaim: row.groupsClaim as OidcClient['groupsClaim'],
  redirectUris: JSON.parse(row.redirectUris),
  postLogoutRedirectUris: JSON.parse(row.postLogoutRedirectUris),
  allowedGroups: row.allowedGroups === null ? null : JSON.parse(row.allowedGroups),
  scopes: JSON.parse(row.scopes),
  audiences: JSON.parse(row.audiences),
  jwks: row.jwks === null ? null : JSON.parse(row.jwks),
})
export const toDeviceAuthorization = (row: typeof deviceAuthorizations.$inferSelect): DeviceAuthorization => ({ ...row, status: row.status as DeviceAuthorization['status'] })
export const toClientRow = (client: Partial<OidcClient>): Partial<ClientRow> => {
  const { redirectUris, postLogoutRedirectUris, allowedGroups, scopes, audiences, jwks, ...rest } = client
  return {
    ...rest,
    ...(redirectUris && { redirectUris: JSON.stringify(redirectUris) }),
    ...(postLogoutRedirectUris && { postLogoutRedirectUris: JSON.stringify(postLogoutRedirectUris) }),
    ...(allowedGroups !== undefined && { allowedGroups: allowedGroups === null ? null : JSON.stringify(allowedGroups) }),
    ...(scopes && { scopes: JSON.stringify(scopes) }),
    ...(audiences && { audiences: JSON.stringify(audiences) }),
    ...(jwks !== undefined && { jwks: jwks === null ? null : JSON.stringify(jwks) }),
  }
}

export function createOidcStore(db: Db): OidcStore {
  // Ending a user's grants to a client also spends the codes issued to it and not yet redeemed:
  // a code from just before would otherwise start a grant the user (or an admin) just ended.
  const revokeGrants = (userId: string | null, clientId: string, now: number, reason: string) => {
    if (userId !== null) db.update(oidcCodes).set({ spentAt: now }).where(and(eq(oidcCodes.userId, userId), eq(oidcCodes.clientId, clientId), isNull(oidcCodes.spentAt))).run()
    return changesOf(
      db
        .update(refreshFamilies)
        .set({ revokedAt: now, revokedReason: reason })
        .where(and(eq(refreshFamilies.clientId, clientId), userId === null ? undefined : eq(refreshFamilies.userId, userId), isNull(refreshFamilies.revokedAt)))
        .run(),
    )
  }
  return {
    async insertClient(client) {
      await immediate(db, () => db.insert(oidcClients).values(toClientRow(client) as ClientRow).run())
    },
    async getClient(id) {
      const row = db.select().from(oidcClients).where(eq(oidcClients.id, id)).get()
      return row ? toClient(row) : null
    },
    async listClients(tenantId) {
      return db.select().from(oidcClients).where(eq(oidcClients.tenantId, tenantId)).orderBy(asc(oidcClients.createdAt), asc(oidcClients.id)).all().map(toClient)
    },
    async updateClient(id, changes) {
      const row = await immediate(db, () => db.update(oidcClients).set(toClientRow(changes)).where(eq(oidcClients.id, id)).returning().get())
      return row ? toClient(row) : null
    },
    async deleteClient(id, now) {
      return immediate(db, () => {
        revokeGrants(null, id, now, 'client-deleted')
        db.delete(oidcCodes).where(eq(oidcCodes.clientId, id)).run()
        db.delete(oidcConsents).where(eq(oidcConsents.clientId, id)).run()
        return changesOf(db.delete(oidcClients).where(eq(oidcClients.id, id)).run()) === 1
      })
    },
    async spendClientAssertion(clientId, jtiHash, expiresAt, now) {
      return immediate(db, () => {
        // (a jti whose assertion has expired may be used again: only live ones are kept apart)
        db.delete(clientAssertions).where(and(eq(clientAssertions.clientId, clientId), eq(clientAssertions.jtiHash, jtiHash), lte(clientAssertions.expiresAt, now))).run()
        return changesOf(db.insert(clientAssertions).values({ clientId, jtiHash, expiresAt }).onConflictDoNothing().run()) === 1
      })
    },
    async insertCode(code) {
      await immediate(db, () => db.insert(oidcCodes).values(code).run())
    },
    async findCode(codeHash) {
      return db.select().from(oidcCodes).where(eq(oidcCodes.codeHash, codeHash)).get() ?? null
    },
    async redeemCode({ codeId, now, family, firstToken, userEpoch, audit }) {
      return immediate(db, () => {
        const spent = db
          .update(oidcCodes)
          .set({ spentAt: now, familyId: family.id })
          .where(and(eq(oidcCodes.id, codeId), isNull(oidcCodes.spentAt), gt(oidcCodes.expiresAt, now)))
          .returning({ sessionId: oidcCodes.sessionId })
          .get()
        if (!spent) return 'spent' as const
        const epoch = db.select({ sessionEpoch: users.sessionEpoch }).from(users).where(eq(users.id, family.userId)).get()?.sessionEpoch
        if (epoch !== userEpoch) return 'stale' as const
        // The page session the code was issued in has ended since (logout-all, sessions revoke):
        // what the user ended gives no new grant.
        const page = db.select({ revokedAt: refreshFamilies.revokedAt }).from(refreshFamilies).where(eq(refreshFamilies.id, spent.sessionId)).get()
        if (page && page.revokedAt !== null) return 'stale' as const
        db.insert(refreshFamilies).values(family).run()
        db.insert(refreshTokens).values(firstToken).run()
        db.insert(auditEvents).values(toAuditRow(audit)).run()
        return 'redeemed' as const
      })
    },
    async revokeCodeGrant(codeId, now, audit) {
      await immediate(db, () => {
        const familyId = db.select({ familyId: oidcCodes.familyId }).from(oidcCodes).where(eq(oidcCodes.id, codeId)).get()?.familyId
        if (familyId) db.update(refreshFamilies).set({ revokedAt: now, revokedReason: 'code-reused' }).where(and(eq(refreshFamilies.id, familyId), isNull(refreshFamilies.revokedAt))).run()
        db.insert(auditEvents).values(toAuditRow(audit)).run()
      })
    },
    async findConsent(userId, clientId) {
      return db.select().from(oidcConsents).where(and(eq(oidcConsents.userId, userId), eq(oidcConsents.clientId, clientId))).get() ?? null
    },
    async saveConsent(consent) {
      await immediate(db, () =>
        db
          .insert(oidcConsents)
          .values(consent)
          .onConflictDoUpdate({ target: [oidcConsents.userId, oidcConsents.clientId], set: { scope: consent.scope, createdAt: consent.createdAt } })
          .run(),
      )
    },
    async listConsents(userId) {
      return db.select().from(oidcConsents).where(eq(oidcConsents.userId, userId)).orderBy(asc(oidcConsents.createdAt)).all()
    },
    async withdrawConsent(userId, clientId, now) {
      return immediate(db, () => {
        revokeGrants(userId, clientId, now, 'consent-withdrawn')
        return changesOf(db.delete(oidcConsents).where(and(eq(oidcConsents.userId, userId), eq(oidcConsents.clientId, clientId))).run()) === 1
      })
    },
    async revokeGrants(userId, clientId, now, reason) {
      return immediate(db, () => revokeGrants(userId, clientId, now, reason))
    },
    async insertDeviceAuthorization(authorization) {
      return immediate(db, () => changesOf(db.insert(deviceAuthorizations).values(authorization).onConflictDoNothing().run()) === 1)
    },
    async findDeviceAuthorization(by) {
      const where = 'deviceCodeHash' in by ? eq(deviceAuthorizations.deviceCodeHash, by.deviceCodeHash) : eq(deviceAuthorizations.userCodeHash, by.userCodeHash)
      const row = db.select().from(deviceAuthorizations).where(where).get()
      return row ? toDeviceAuthorization(row) : null
    },
    async recordDevicePoll(id, now, intervalSec) {
      await immediate(db, () => db.update(deviceAuthorizations).set({ lastPolledAt: now, intervalSec }).where(eq(deviceAuthorizations.id, id)).run())
    },
    async decideDeviceAuthorization(id, { status, userId, now, code }) {
      return immediate(db, () => {
        // (the conditional write is the decision: a second, racing one changes nothing)
        const decided = db
          .update(deviceAuthorizations)
          .set({ status, userId, decidedAt: now })
          .where(and(eq(deviceAuthorizations.id, id), eq(deviceAuthorizations.status, 'pending'), gt(deviceAuthorizations.expiresAt, now)))
          .run()
        if (changesOf(decided) !== 1) return false
        if (code) db.insert(oidcCodes).values(code).run()
        return true
      })
    },
  }
}
