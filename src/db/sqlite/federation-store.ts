// Upstream identity providers, the identities they vouch for, and the sign-in flows between
// authd and them, over SQLite (core/federation). A write that checks before it writes (the
// user still there, the identity not yet linked, another way in left) runs in one IMMEDIATE
// transaction: no other writer, in this process or another, comes between the check and the
// write. The webhook events of identities are written by triggers (the federation migration).
import { and, asc, count, eq, gt, isNotNull, ne } from 'drizzle-orm'
import type { FederationFlowStore, IdentityStore, ProviderStore } from '../../core/federation/store'
import type { Identity } from '../../core/federation/types'
import type { Db } from './client'
import { changesOf, immediate } from './helpers'
import { auditWriter } from './limit-audit-stores'
import { federationFlows, identities, identityProviders, passkeys, users } from './schema'

export function createProviderStore(db: Db): ProviderStore {
  return {
    async insert(provider) {
      await immediate(db, () => db.insert(identityProviders).values(provider).run())
    },
    async get(id) {
      return db.select().from(identityProviders).where(eq(identityProviders.id, id)).get() ?? null
    },
    async list(tenantId) {
      return db.select().from(identityProviders).where(eq(identityProviders.tenantId, tenantId)).orderBy(asc(identityProviders.name), asc(identityProviders.id)).all()
    },
    async update(id, changes) {
      return immediate(db, () => db.update(identityProviders).set(changes).where(eq(identityProviders.id, id)).returning().get() ?? null)
    },
    async delete(id) {
      // Its identities and flows go with it (foreign keys); the identities' trigger writes no
      // identity.unlinked for them, the provider being gone.
      return immediate(db, () => changesOf(db.delete(identityProviders).where(eq(identityProviders.id, id)).run()) === 1)
    },
    async countIdentities(id) {
      return db.select({ n: count() }).from(identities).where(eq(identities.providerId, id)).get()?.n ?? 0
    },
  }
}

export function createIdentityStore(db: Db): IdentityStore {
  const writeAudit = auditWriter(db)
  /** Inside the caller's transaction: whether the identity's (provider, subject) is linked already. */
  const linked = (identity: Identity) =>
    db.select({ id: identities.id }).from(identities).where(and(eq(identities.providerId, identity.providerId), eq(identities.subject, identity.subject))).get() !== undefined
  /** Inside the caller's transaction: whether the user and the provider both exist in the identity's tenant. */
  const ownersPresent = (identity: Identity) =>
    db.select({ id: users.id }).from(users).where(and(eq(users.id, identity.userId), eq(users.tenantId, identity.tenantId))).get() !== undefined &&
    db.select({ id: identityProviders.id }).from(identityProviders).where(and(eq(identityProviders.id, identity.providerId), eq(identityProviders.tenantId, identity.tenantId))).get() !== undefined
  /** Inside the caller's transaction: whether the user can sign in without this identity (a password, a passkey, another identity). */
  const otherWayIn = (userId: string, identityId: string) =>
    db.select({ id: users.id }).from(users).where(and(eq(users.id, userId), isNotNull(users.passwordHash))).get() !== undefined ||
    db.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, userId)).limit(1).get() !== undefined ||
    db.select({ id: identities.id }).from(identities).where(and(eq(identities.userId, userId), ne(identities.id, identityId))).limit(1).get() !== undefined
  return {
    async get(id) {
      return db.select().from(identities).where(eq(identities.id, id)).get() ?? null
    },
    async find(providerId, subject) {
      return db.select().from(identities).where(and(eq(identities.providerId, providerId), eq(identities.subject, subject))).get() ?? null
    },
    async listByUser(userId) {
      return db.select().from(identities).where(eq(identities.userId, userId)).orderBy(asc(identities.createdAt), asc(identities.id)).all()
    },
    async insert(identity, audit) {
      return immediate(db, () => {
        // (a provider deleted meanwhile is refused the same way, rather than by its foreign key)
        if (!ownersPresent(identity)) return false
        if (changesOf(db.insert(identities).values(identity).onConflictDoNothing().run()) !== 1) return false
        writeAudit(audit)
        return true
      })
    },
    async insertWithUser(user, identity, audits) {
      return immediate(db, () => {
        if (linked(identity)) return 'identity-taken' as const
        if (!db.select({ id: identityProviders.id }).from(identityProviders).where(and(eq(identityProviders.id, identity.providerId), eq(identityProviders.tenantId, identity.tenantId))).get()) return 'provider-gone' as const
        if (db.select({ id: users.id }).from(users).where(and(eq(users.tenantId, user.tenantId), eq(users.email, user.email))).get()) return 'email-taken' as const
        db.insert(users).values(user).run()
        db.insert(identities).values(identity).run()
        audits.forEach(writeAudit)
        return 'created' as const
      })
    },
    async recordUse(id, email, emailVerified, now) {
      await immediate(db, () => db.update(identities).set({ email, emailVerified, lastUsedAt: now }).where(eq(identities.id, id)).run())
    },
    async deleteUnlessLast(id, userId, audit) {
      return immediate(db, () => {
        if (!db.select({ id: identities.id }).from(identities).where(and(eq(identities.id, id), eq(identities.userId, userId))).get()) return 'none' as const
        if (!otherWayIn(userId, id)) return 'last' as const
        db.delete(identities).where(eq(identities.id, id)).run()
        writeAudit(audit)
        return 'deleted' as const
      })
    },
  }
}

export function createFederationFlowStore(db: Db): FederationFlowStore {
  return {
    async insert(flow) {
      await immediate(db, () => db.insert(federationFlows).values(flow).run())
    },
    async findByState(stateHash) {
      return db.select().from(federationFlows).where(eq(federationFlows.stateHash, stateHash)).get() ?? null
    },
    async advance(id, from, to, now, pending) {
      return immediate(
        db,
        () =>
          changesOf(
            db
              .update(federationFlows)
              .set({ stage: to, ...(pending && { pendingSealed: pending.pendingSealed, userId: pending.userId }) })
              .where(and(eq(federationFlows.id, id), eq(federationFlows.stage, from), gt(federationFlows.expiresAt, now)))
              .run(),
          ) === 1,
      )
    },
  }
}
