// Upstream identity providers, identities and sign-in flows over PostgreSQL: the SQLite rules
// (../sqlite/federation-store.ts). What differs is how races across instances are settled: a
// link holds its user's and provider's rows (FOR KEY SHARE, the lock a foreign key takes) so an
// erasure or a deletion waits for it or is seen; unlinks of one user's identities take an
// advisory lock on the user and so count the ways in left one after the other; a flow moves on
// by one conditional UPDATE.
import { and, asc, count, eq, gt, isNotNull, ne, sql } from 'drizzle-orm'
import type { FederationFlowStore, IdentityStore, ProviderStore } from '../../core/federation/store'
import type { Identity } from '../../core/federation/types'
import type { PgDb, PgExecutor } from './client'
import { lockKey } from './helpers'
import { toAuditRow } from './limit-audit-stores'
import { auditEvents, federationFlows, identities, identityProviders, passkeys, users } from './schema'

export function createPgProviderStore(db: PgDb): ProviderStore {
  return {
    async insert(provider) {
      await db.insert(identityProviders).values(provider)
    },
    async get(id) {
      const [row] = await db.select().from(identityProviders).where(eq(identityProviders.id, id))
      return row ?? null
    },
    async list(tenantId) {
      // (byte order, as SQLite's: a database created with a locale's collation would sort otherwise)
      return db
        .select()
        .from(identityProviders)
        .where(eq(identityProviders.tenantId, tenantId))
        .orderBy(sql`${identityProviders.name} collate "C"`, asc(identityProviders.id))
    },
    async update(id, changes) {
      const [row] = await db.update(identityProviders).set(changes).where(eq(identityProviders.id, id)).returning()
      return row ?? null
    },
    async delete(id) {
      return (await db.delete(identityProviders).where(eq(identityProviders.id, id)).returning({ id: identityProviders.id })).length === 1
    },
    async countIdentities(id) {
      const [row] = await db.select({ n: count() }).from(identities).where(eq(identities.providerId, id))
      return Number(row?.n ?? 0)
    },
  }
}

/** Thrown inside insertWithUser's transaction to roll the user back; answered as its value. */
class IdentityTaken extends Error {}

export function createPgIdentityStore(db: PgDb): IdentityStore {
  const linked = async (tx: PgExecutor, identity: Identity) =>
    (await tx.select({ id: identities.id }).from(identities).where(and(eq(identities.providerId, identity.providerId), eq(identities.subject, identity.subject)))).length > 0
  const otherWayIn = async (tx: PgExecutor, userId: string, identityId: string) =>
    (await tx.select({ id: users.id }).from(users).where(and(eq(users.id, userId), isNotNull(users.passwordHash)))).length > 0 ||
    (await tx.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, userId)).limit(1)).length > 0 ||
    (await tx.select({ id: identities.id }).from(identities).where(and(eq(identities.userId, userId), ne(identities.id, identityId))).limit(1)).length > 0
  return {
    async get(id) {
      const [row] = await db.select().from(identities).where(eq(identities.id, id))
      return row ?? null
    },
    async find(providerId, subject) {
      const [row] = await db.select().from(identities).where(and(eq(identities.providerId, providerId), eq(identities.subject, subject)))
      return row ?? null
    },
    async listByUser(userId) {
      return db.select().from(identities).where(eq(identities.userId, userId)).orderBy(asc(identities.createdAt), asc(identities.id))
    },
    async insert(identity, audit) {
      return db.transaction(async (tx) => {
        // The user's and the provider's rows held as their foreign keys would hold them: an
        // erasure or a deletion in flight is waited for, then seen.
        const [user] = await tx.select({ id: users.id }).from(users).where(and(eq(users.id, identity.userId), eq(users.tenantId, identity.tenantId))).for('key share')
        const [provider] = await tx
          .select({ id: identityProviders.id })
          .from(identityProviders)
          .where(and(eq(identityProviders.id, identity.providerId), eq(identityProviders.tenantId, identity.tenantId)))
          .for('key share')
        if (!user || !provider) return false
        const inserted = await tx.insert(identities).values(identity).onConflictDoNothing().returning({ id: identities.id })
        if (inserted.length !== 1) return false
        await tx.insert(auditEvents).values(toAuditRow(audit))
        return true
      })
    },
    async insertWithUser(user, identity, audits) {
      try {
        return await db.transaction(async (tx) => {
          if (await linked(tx, identity)) return 'identity-taken' as const
          // (held as its foreign key would hold it: a deletion in flight is waited for, then seen)
          const [provider] = await tx
            .select({ id: identityProviders.id })
            .from(identityProviders)
            .where(and(eq(identityProviders.id, identity.providerId), eq(identityProviders.tenantId, identity.tenantId)))
            .for('key share')
          if (!provider) return 'provider-gone' as const
          const created = await tx.insert(users).values(user).onConflictDoNothing().returning({ id: users.id })
          if (created.length !== 1) return 'email-taken' as const
          // Linked meanwhile by another instance (its insert waited for, then seen): the user goes too.
          const inserted = await tx.insert(identities).values(identity).onConflictDoNothing().returning({ id: identities.id })
          if (inserted.length !== 1) throw new IdentityTaken()
          if (audits.length > 0) await tx.insert(auditEvents).values(audits.map(toAuditRow))
          return 'created' as const
        })
      } catch (error) {
        if (error instanceof IdentityTaken) return 'identity-taken'
        throw error
      }
    },
    async recordUse(id, email, emailVerified, now) {
      await db.update(identities).set({ email, emailVerified, lastUsedAt: now }).where(eq(identities.id, id))
    },
    async deleteUnlessLast(id, userId, audit) {
      return db.transaction(async (tx) => {
        // One unlink of the user's at a time, on any instance: the second counts after the first's delete.
        await lockKey(tx, `ways-in:${userId}`)
        const [identity] = await tx.select({ id: identities.id }).from(identities).where(and(eq(identities.id, id), eq(identities.userId, userId)))
        if (!identity) return 'none' as const
        if (!(await otherWayIn(tx, userId, id))) return 'last' as const
        await tx.delete(identities).where(eq(identities.id, id))
        await tx.insert(auditEvents).values(toAuditRow(audit))
        return 'deleted' as const
      })
    },
  }
}

export function createPgFederationFlowStore(db: PgDb): FederationFlowStore {
  return {
    async insert(flow) {
      await db.insert(federationFlows).values(flow)
    },
    async findByState(stateHash) {
      const [row] = await db.select().from(federationFlows).where(eq(federationFlows.stateHash, stateHash))
      return row ?? null
    },
    async advance(id, from, to, now, pending) {
      // Concurrent moves of one flow wait on its row lock; the later ones then find it moved on.
      const moved = await db
        .update(federationFlows)
        .set({ stage: to, ...(pending && { pendingSealed: pending.pendingSealed, userId: pending.userId }) })
        .where(and(eq(federationFlows.id, id), eq(federationFlows.stage, from), gt(federationFlows.expiresAt, now)))
        .returning({ id: federationFlows.id })
      return moved.length === 1
    },
  }
}
