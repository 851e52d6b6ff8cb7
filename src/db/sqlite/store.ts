// The Store over SQLite. Queries on request paths are prepared once (drizzle's unprepared
// builder halved refresh throughput in our measurements); writes that must be atomic run in
// BEGIN IMMEDIATE transactions, which take the write lock up front instead of failing
// half-way with SQLITE_BUSY when the CLI writes at the same time.
import { createGroupStore } from './group-store'
import { createAccessRuleStore } from './access-rule-store'
import { createFederationFlowStore, createIdentityStore, createProviderStore } from './federation-store'
import { SESSION_USE_GRAIN_MS } from '../../core/sessions/store'
import { and, asc, desc, eq, getTableColumns, gt, inArray, isNull, ne, sql } from 'drizzle-orm'
import type { Store } from '../../core/store'
import type { ApiKey, SigningKeyRecord, Tenant, User } from '../../core/types'
import { openDatabase, type Db } from './client'
import { changesOf, eraseUserInTransaction, immediate as immediateTx, isUniqueViolation, replacePasswordInTransaction, revokeSessionsOf, spendOutstandingSecrets } from './helpers'
import { migrationStatus } from './migrate'
import { auditWriter, createAuditStore, createLimitStore, limitWriter } from './limit-audit-stores'
import { createIdempotencyStore } from './idempotency-store'
import { createOutboxStore } from './outbox-store'
import { createWebhookStore } from './webhook-store'
import { createPrune } from '../retention-store'
import { createPasswordResetStore, createSetupTokenStore } from './password-stores'
import { createMfaStore } from './mfa-store'
import { createPasskeyStore } from './passkey-store'
import { createOidcStore } from './oidc-store'
import { createSignupStore } from './signup-store'
import { apiKeys, groupMembers, mailOutbox, refreshFamilies, refreshTokens, serverSecrets, serverSettings, setupTokens, signingKeys, tenants, users } from './schema'

const p = sql.placeholder
/** Users read per step when the stored hashes' parameters are counted. */
const HASH_PAGE = 10_000

export function createSqliteStore(db: Db): Store {
  const immediate = <T>(fn: () => T): Promise<T> => immediateTx(db, fn)
  const writeLimits = limitWriter(db)
  const writeAudit = auditWriter(db)

  const q = {
    apiKeyByHash: db
      .select({ apiKey: apiKeys, tenant: tenants })
      .from(apiKeys)
      .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
      .where(and(eq(apiKeys.keyHash, p('hash')), isNull(apiKeys.revokedAt)))
      .prepare(),
    userById: db.select().from(users).where(eq(users.id, p('id'))).prepare(),
    userEpoch: db.select({ sessionEpoch: users.sessionEpoch }).from(users).where(eq(users.id, p('id'))).prepare(),
    userByEmail: db
      .select()
      .from(users)
      .where(and(eq(users.tenantId, p('tenantId')), eq(users.email, p('email'))))
      .prepare(),
    tenantById: db.select().from(tenants).where(eq(tenants.id, p('id'))).prepare(),
    // Separate look-ups, not a join: on bun:sqlite each joined table cost ~7 µs more than its
    // own primary-key look-up (~1 µs), measured on this schema.
    tokenByHash: db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, p('hash'))).prepare(),
    familyById: db.select().from(refreshFamilies).where(eq(refreshFamilies.id, p('id'))).prepare(),
    insertFamily: db
      .insert(refreshFamilies)
      .values({ id: p('id'), userId: p('userId'), tenantId: p('tenantId'), rememberMe: p('rememberMe'), createdAt: p('createdAt'), expiresAt: p('expiresAt'), revokedAt: p('revokedAt'), revokedReason: p('revokedReason'), amr: p('amr'), authAt: p('authAt'), providerId: p('providerId') })
      .prepare(),
    insertToken: db
      .insert(refreshTokens)
      .values({ id: p('id'), familyId: p('familyId'), tokenHash: p('tokenHash'), createdAt: p('createdAt'), expiresAt: p('expiresAt'), spentAt: p('spentAt'), accessKid: p('accessKid'), ip: p('ip'), userAgent: p('userAgent') })
      .prepare(),
    // '$argon2id$v=19$' is 15 characters; the parameters run to the next '$'.
    hashesAfter: db.$client.prepare(`
      SELECT CASE WHEN password_hash LIKE '$argon2id$v=19$%' THEN substr(password_hash, 16, instr(substr(password_hash, 16), '$') - 1) END AS parameters,
             count(*) AS count, max(r) AS last
      FROM (SELECT rowid AS r, password_hash FROM users WHERE rowid > ?1 ORDER BY rowid LIMIT ?2) GROUP BY 1`),
    spendToken: db
      .update(refreshTokens)
      .set({ spentAt: sql`${p('spentAt')}` })
      .where(and(eq(refreshTokens.id, p('id')), isNull(refreshTokens.spentAt)))
      .prepare(),
  }

  // A session's reads (its family, user and tenant, and for a refresh first its token) in
  // one read transaction. Outside one, each statement takes and drops SQLite's WAL read lock
  // itself (two fcntl calls and an fstat): a refresh's four reads cost ~25 µs that way and
  // ~8 µs together, on a path of ~240 µs of CPU in all (bench/README.md, session 15). The
  // rows are then also of one snapshot: another process (the CLI disabling the user) cannot
  // commit between them.
  const sessionOf = (familyId: string) => {
    const family = q.familyById.get({ id: familyId })
    const user = family && q.userById.get({ id: family.userId })
    const tenant = family && q.tenantById.get({ id: family.tenantId })
    return family && user && tenant ? { family, user, tenant } : null
  }
  const findSessionSnapshot = db.$client.transaction(sessionOf)
  const tokenOf = (hash: string) => {
    const token = q.tokenByHash.get({ hash })
    const session = token && sessionOf(token.familyId)
    return token && session ? { token, ...session } : null
  }
  const findTokenSnapshot = db.$client.transaction(tokenOf)
  // (byte order, as the group store's own read: core/groups)
  const groupNamesOf = db.$client.prepare<{ name: string }, [string]>('SELECT g.name FROM group_members m JOIN groups g ON g.id = m.group_id WHERE m.user_id = ? ORDER BY g.name')
  const findTokenWithGroupsSnapshot = db.$client.transaction((hash: string) => {
    const found = tokenOf(hash)
    return found && { ...found, groups: groupNamesOf.all(found.user.id).map((row) => row.name) }
  })

  const revokeFamiliesSignedBy = (kid: string, now: number) =>
    changesOf(
      db
        .update(refreshFamilies)
        .set({ revokedAt: now, revokedReason: 'signing-key-revoked' })
        .where(and(isNull(refreshFamilies.revokedAt), inArray(refreshFamilies.id, db.select({ id: refreshTokens.familyId }).from(refreshTokens).where(eq(refreshTokens.accessKid, kid)))))
        .run(),
    )

  const audienceTaken = (audience: string, id: string) =>
    db.select({ id: tenants.id }).from(tenants).where(and(sql`lower(${tenants.audience}) = lower(${audience})`, ne(tenants.id, id))).get() !== undefined

  const toSigningKey = (row: typeof signingKeys.$inferSelect): SigningKeyRecord => ({
    ...row,
    alg: row.alg as SigningKeyRecord['alg'],
    publicJwk: JSON.parse(row.publicJwk),
  })

  return {
    tenants: {
      // Audiences are compared in one canonical form (lower case: they are ASCII).
      async insert(tenant: Tenant) {
        return immediate(() => {
          if (audienceTaken(tenant.audience, tenant.id)) return false
          db.insert(tenants).values(tenant).run()
          return true
        })
      },
      async setAudience(id, audience) {
        return immediate(() => {
          if (audienceTaken(audience, id)) return 'audience-taken' as const
          return db.update(tenants).set({ audience }).where(eq(tenants.id, id)).returning().get() ?? null
        })
      },
      async updateSettings(id, changes) {
        try {
          return await immediate(() => db.update(tenants).set(changes).where(eq(tenants.id, id)).returning().get() ?? null)
        } catch (error) {
          if (isUniqueViolation(error)) return 'slug-taken'
          throw error
        }
      },
      async setSignup(id, signup) {
        return db.update(tenants).set({ signup }).where(eq(tenants.id, id)).returning().get() ?? null
      },
      async get(id) {
        return q.tenantById.get({ id }) ?? null
      },
      async findBySlug(slug) {
        return db.select().from(tenants).where(eq(tenants.slug, slug)).get() ?? null
      },
      async list() {
        return db.select().from(tenants).orderBy(asc(tenants.createdAt), asc(tenants.id)).all()
      },
      async setDisabledAt(id, disabledAt) {
        return immediate(() => {
          const tenant = db.update(tenants).set({ disabledAt }).where(eq(tenants.id, id)).returning().get() ?? null
          if (tenant && disabledAt !== null) {
            spendOutstandingSecrets(db, { tenantId: id }, disabledAt)
            revokeSessionsOf(db, { tenantId: id }, disabledAt, 'tenant-disabled')
          }
          return tenant
        })
      },
      async initialise(first) {
        return immediate(() => {
          if (db.select({ id: tenants.id }).from(tenants).limit(1).get()) return false
          db.insert(tenants).values(first.tenant).run()
          db.insert(apiKeys).values({ ...first.apiKey, keyHash: first.keyHash }).run()
          db.insert(users).values(first.user).run()
          if (first.setupToken) db.insert(setupTokens).values(first.setupToken).run()
          if (first.invitation) db.insert(mailOutbox).values(first.invitation).run()
          first.audit.forEach(writeAudit)
          return true
        })
      },
    },

    apiKeys: {
      async insert(key: ApiKey, keyHash: string) {
        db.insert(apiKeys).values({ ...key, keyHash }).run()
      },
      async findActiveByHash(hash) {
        const row = q.apiKeyByHash.get({ hash })
        if (!row) return null
        const { keyHash: _, ...apiKey } = row.apiKey
        return { apiKey, tenant: row.tenant }
      },
      async list(tenantId) {
        const { keyHash: _, ...columns } = getTableColumns(apiKeys)
        return db
          .select(columns)
          .from(apiKeys)
          .where(tenantId ? eq(apiKeys.tenantId, tenantId) : undefined)
          .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))
          .all()
      },
      async revoke(id, revokedAt) {
        const row = await immediate(() => {
          db.update(apiKeys).set({ revokedAt }).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt))).run()
          return db.select().from(apiKeys).where(eq(apiKeys.id, id)).get()
        })
        if (!row) return null
        const { keyHash: _, ...apiKey } = row
        return apiKey
      },
    },

    users: {
      async insert(user: User, setupToken, invitation) {
        try {
          await immediate(() => {
            db.insert(users).values(user).run()
            if (setupToken) db.insert(setupTokens).values(setupToken).run()
            if (invitation) db.insert(mailOutbox).values(invitation).run()
          })
          return true
        } catch (error) {
          if (isUniqueViolation(error)) return false
          throw error
        }
      },
      async get(id) {
        return q.userById.get({ id }) ?? null
      },
      async findByEmail(tenantId, email) {
        return q.userByEmail.get({ tenantId, email }) ?? null
      },
      async page(tenantId, { email, afterId, limit }) {
        return db
          .select()
          .from(users)
          .where(and(eq(users.tenantId, tenantId), email === undefined ? undefined : eq(users.email, email), afterId === undefined ? undefined : gt(users.id, afterId)))
          .orderBy(asc(users.id))
          .limit(limit)
          .all()
      },
      async update(id, changes, now) {
        try {
          return await immediate(() => {
            const user = db.update(users).set({ ...changes, updatedAt: now }).where(eq(users.id, id)).returning().get() ?? null
            // What was mailed to the old address must not prove the new one.
            if (user && changes.email !== undefined) spendOutstandingSecrets(db, { userId: id }, now)
            return user
          })
        } catch (error) {
          if (isUniqueViolation(error)) return 'email-taken'
          throw error
        }
      },
      async erase(user) {
        const erased = await immediate(() => eraseUserInTransaction(db, user))
        // secure_delete zeroes the freed cells; the WAL still holds the pages as they were
        // (see outbox-store.ts purgeErased): copy it into the database and empty it.
        if (erased) db.$client.run('PRAGMA wal_checkpoint(TRUNCATE)')
        return erased
      },
      async setDisabledAt(id, disabledAt, now) {
        return immediate(() => {
          const epoch = disabledAt === null ? {} : { sessionEpoch: sql`${users.sessionEpoch} + 1` }
          const user = db.update(users).set({ disabledAt, updatedAt: now, ...epoch }).where(eq(users.id, id)).returning().get() ?? null
          if (user && disabledAt !== null) {
            spendOutstandingSecrets(db, { userId: id }, now)
            revokeSessionsOf(db, { userId: id }, now, 'user-disabled')
          }
          return user
        })
      },
      async setPasswordHash(id, passwordHash, now) {
        await immediate(() => db.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, id)).run())
      },
      async insertMany(newUsers, tokens, memberships = []) {
        try {
          await immediate(() => {
            for (const user of newUsers) db.insert(users).values(user).run()
            for (const token of tokens) db.insert(setupTokens).values(token).run()
            for (const membership of memberships) db.insert(groupMembers).values(membership).run()
          })
          return true
        } catch (error) {
          if (isUniqueViolation(error)) return false
          throw error
        }
      },
      async passwordHashParameters() {
        // Every user's hash is read, but a page of rows at a time with the event loop free in
        // between: one GROUP BY over the table held it ~20-60 ms for 20,000 users, so seconds
        // for a million (bench/README.md, Scale), at start-up and on the first unknown-address
        // login of every ten minutes.
        // Each page is counted in SQL (a few rows back, not ten thousand hashes to collect).
        const counts = new Map<string, number>()
        for (let after = 0; ; ) {
          const groups = q.hashesAfter.all(after, HASH_PAGE) as Array<{ parameters: string | null; count: number; last: number }>
          for (const { parameters, count } of groups) if (parameters !== null) counts.set(parameters, (counts.get(parameters) ?? 0) + count)
          if (groups.reduce((n, g) => n + g.count, 0) < HASH_PAGE) break
          after = Math.max(...groups.map((g) => g.last))
          await new Promise((resolve) => setImmediate(resolve))
        }
        return [...counts].map(([parameters, count]) => ({ parameters, count }))
      },
      async replacePassword(input) {
        await immediate(() => replacePasswordInTransaction(db, input))
      },
    },

    signingKeys: {
      async insertAndRetireOthers(key) {
        await immediate(() => {
          db.update(signingKeys).set({ retiredAt: key.createdAt }).where(and(isNull(signingKeys.retiredAt), eq(signingKeys.alg, key.alg))).run()
          db.insert(signingKeys).values({ ...key, publicJwk: JSON.stringify(key.publicJwk) }).run()
        })
      },
      async insertIfNoneActive(key) {
        return immediate(() => {
          const active = db.select({ kid: signingKeys.kid }).from(signingKeys).where(and(isNull(signingKeys.retiredAt), eq(signingKeys.alg, key.alg))).get()
          if (active) return false
          db.insert(signingKeys).values({ ...key, publicJwk: JSON.stringify(key.publicJwk) }).run()
          return true
        })
      },
      async list() {
        return db.select().from(signingKeys).orderBy(asc(signingKeys.createdAt)).all().map(toSigningKey)
      },
      async revoke(kid, now, replacement) {
        return immediate(() => {
          const key = db.select().from(signingKeys).where(eq(signingKeys.kid, kid)).get()
          if (!key) return null
          db.update(signingKeys)
            .set({ revokedAt: key.revokedAt ?? now, retiredAt: key.retiredAt ?? now })
            .where(eq(signingKeys.kid, kid))
            .run()
          if (replacement) db.insert(signingKeys).values({ ...replacement, publicJwk: JSON.stringify(replacement.publicJwk) }).run()
          return { sessionsRevoked: revokeFamiliesSignedBy(kid, now) }
        })
      },
      async revokeSessionsSignedBy(kid, now) {
        return revokeFamiliesSignedBy(kid, now)
      },
    },

    sessions: {
      async createFamily(family, firstToken, userEpoch, record) {
        return immediate(() => {
          if (q.userEpoch.get({ id: family.userId })?.sessionEpoch !== userEpoch) return false
          q.insertFamily.run({ ...family, providerId: record?.providerId ?? null })
          q.insertToken.run({ ...firstToken })
          if (record) {
            writeLimits([...record.limitResets.map((key) => ({ key, op: 'reset' as const })), ...record.limitRefunds.map((key) => ({ key, op: 'refund' as const }))], record.audit.at)
            writeAudit(record.audit)
          }
          return true
        })
      },
      async findToken(hash) {
        return findTokenSnapshot(hash)
      },
      async findTokenWithGroups(hash) {
        return findTokenWithGroupsSnapshot(hash)
      },
      async rotate(tokenId, spentAt, successor, audit) {
        return immediate(() => {
          if (changesOf(q.spendToken.run({ id: tokenId, spentAt })) !== 1) return false
          q.insertToken.run({ ...successor })
          if (audit) writeAudit(audit)
          return true
        })
      },
      async findSession(familyId) {
        return findSessionSnapshot(familyId)
      },
      async listLive(userId, now) {
        return db
          .select({ family: refreshFamilies, liveToken: refreshTokens })
          .from(refreshFamilies)
          .innerJoin(refreshTokens, and(eq(refreshTokens.familyId, refreshFamilies.id), isNull(refreshTokens.spentAt)))
          .where(and(eq(refreshFamilies.userId, userId), isNull(refreshFamilies.revokedAt), gt(refreshTokens.expiresAt, now)))
          .orderBy(desc(refreshFamilies.createdAt), desc(refreshFamilies.id))
          .all()
      },
      async revokeFamily(familyId, revokedAt, reason, audit) {
        await immediate(() => {
          db.update(refreshFamilies)
            .set({ revokedAt, revokedReason: reason })
            .where(and(eq(refreshFamilies.id, familyId), isNull(refreshFamilies.revokedAt)))
            .run()
          writeAudit(audit)
        })
      },
      async revokeUserFamilies(userId, revokedAt, reason) {
        return immediate(() => revokeSessionsOf(db, { userId }, revokedAt, reason))
      },
      async markUsed(familyId, at) {
        await immediate(() => {
          db.update(refreshFamilies)
            .set({ lastUsedAt: at })
            .where(and(eq(refreshFamilies.id, familyId), sql`coalesce(${refreshFamilies.lastUsedAt}, 0) <= ${at - SESSION_USE_GRAIN_MS}`))
            .run()
        })
      },
      async markAuthenticated(familyId, at, audit, amr) {
        return immediate(() => {
          const marked = changesOf(db.update(refreshFamilies).set({ authAt: at, ...(amr !== undefined && { amr }) }).where(and(eq(refreshFamilies.id, familyId), isNull(refreshFamilies.revokedAt))).run()) === 1
          if (marked) writeAudit(audit)
          return marked
        })
      },
    },

    passwordResets: createPasswordResetStore(db),
    setupTokens: createSetupTokenStore(db),
    signups: createSignupStore(db),
    mfa: createMfaStore(db),
    groups: createGroupStore(db),
    accessRules: createAccessRuleStore(db),
    providers: createProviderStore(db),
    identities: createIdentityStore(db),
    federationFlows: createFederationFlowStore(db),
    passkeys: createPasskeyStore(db),
    oidc: createOidcStore(db),
    outbox: createOutboxStore(db),
    webhooks: createWebhookStore(db),
    limits: createLimitStore(db),
    audit: createAuditStore(db),
    idempotency: createIdempotencyStore(db),
    prune: createPrune(db),

    async serverSecret(name, create) {
      return immediate(() => {
        const row = db.select().from(serverSecrets).where(eq(serverSecrets.name, name)).get()
        if (row) return row.value
        const value = create()
        db.insert(serverSecrets).values({ name, value, createdAt: Date.now() }).run()
        return value
      })
    },

    serverSettings: {
      async get(name) {
        return db.select({ value: serverSettings.value }).from(serverSettings).where(eq(serverSettings.name, name)).get()?.value ?? null
      },
      async set(name, value, now) {
        db.insert(serverSettings).values({ name, value, updatedAt: now }).onConflictDoUpdate({ target: serverSettings.name, set: { value, updatedAt: now } }).run()
      },
    },

    async ping() {
      db.$client.query('SELECT 1').get()
    },

    async migrationStatus() {
      return migrationStatus(db.$client)
    },

    close() {
      db.$client.close()
    },
  }
}

export function openSqliteStore(path: string): Store {
  return createSqliteStore(openDatabase(path))
}
