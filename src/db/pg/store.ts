// The Store over PostgreSQL, for several authd instances on one database. The rules are the
// SQLite store's (../sqlite-store.ts); what differs is how races across processes are
// settled: conditional row writes (UPDATE ... WHERE still-unspent RETURNING), FOR UPDATE SKIP
// LOCKED for the outbox, and advisory locks where a rule reads before it writes.
import { createPgGroupStore } from './group-store'
import { createPgAccessRuleStore } from './access-rule-store'
import { createPgFederationFlowStore, createPgIdentityStore, createPgProviderStore } from './federation-store'
import { SESSION_USE_GRAIN_MS } from '../../core/sessions/store'
import { and, asc, desc, eq, getTableColumns, gt, inArray, isNull, ne, sql, type SQL } from 'drizzle-orm'
import type { Store } from '../../core/store'
import type { SigningKeyRecord } from '../../core/types'
import { reportUnavailability, retryAborted } from '../availability'
import { isPgAborted, isPgUnavailable, isPgUniqueViolation, type PgDb } from './client'
import { eraseUser, lockKey, replacePassword, revokeSessionsOf, spendOutstandingSecrets } from './helpers'
import { createPgAuditStore, createPgLimitStore, toAuditRow } from './limit-audit-stores'
import { pgMigrationStatus } from './migrate'
import { createPgIdempotencyStore } from './idempotency-store'
import { createPgOutboxStore } from './outbox-store'
import { createPgWebhookStore } from './webhook-store'
import { createPgPasswordResetStore, createPgSetupTokenStore } from './password-stores'
import { createPgPrune } from '../retention-store'
import { createPgMfaStore } from './mfa-store'
import { createPgPasskeyStore } from './passkey-store'
import { createPgOidcStore } from './oidc-store'
import { createPgSignupStore } from './signup-store'
import { apiKeys, auditEvents, groupMembers, mailOutbox, refreshFamilies, refreshTokens, serverSecrets, serverSettings, setupTokens, signingKeys, tenants, users } from './schema'

/** Inserts, answering false instead of throwing when a unique index refuses the row. */
async function insertUnlessTaken(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write()
    return true
  } catch (error) {
    if (isPgUniqueViolation(error)) return false
    throw error
  }
}

/** Whether a tenant other than `id` has this audience, compared in lower case. */
async function audienceTaken(tx: Pick<PgDb, 'select'>, audience: string, id: string): Promise<boolean> {
  const [row] = await tx
    .select({ id: tenants.id })
    .from(tenants)
    .where(and(sql`lower(${tenants.audience}) = lower(${audience})`, ne(tenants.id, id)))
    .limit(1)
  return row !== undefined
}

const toSigningKey = (row: typeof signingKeys.$inferSelect): SigningKeyRecord => ({ ...row, alg: row.alg as SigningKeyRecord['alg'], publicJwk: JSON.parse(row.publicJwk) })
const withoutHash = <T extends { keyHash: string }>({ keyHash: _, ...rest }: T) => rest

export function createPgStore(db: PgDb): Store {
  return reportUnavailability(retryAborted(createRawPgStore(db), isPgAborted), isPgUnavailable)
}

const p = sql.placeholder
/** Users read per step when the stored hashes' parameters are counted. */
const HASH_PAGE = 10_000
// A page of users by id (their index), its hashes' parameters counted: the argon2id ones by
// their parameters ('$argon2id$v=19$' then up to the next '$'), the others as null; `last`, on
// every row, is the page's last id in the order the next page starts after (the column's).
const HASH_PARAMETERS_AFTER = `
  SELECT CASE WHEN password_hash LIKE '$argon2id$v=19$%' THEN split_part(password_hash, '$', 4) END AS parameters,
         count(*)::int AS count, max(max(id)) OVER () AS last
  FROM (SELECT id, password_hash FROM users WHERE id > $1 ORDER BY id LIMIT $2) page GROUP BY 1`

// Raw text rather than drizzle's sql template, so nothing is rebuilt per call (see q below).
// A session is started only at the user's session epoch its proof was checked at ($19): the
// family is inserted from the user's row only while its epoch is that one, read FOR SHARE so
// that a change moving the epoch (a new password, TOTP on, a disable) in flight is waited for
// and the row read again after it: under READ COMMITTED a plain read would see the epoch
// before the change commits, and the change's revocation would not see this session.
const CREATE_FAMILY = `
  WITH family AS (
    INSERT INTO refresh_families (id, user_id, tenant_id, remember_me, created_at, expires_at, revoked_at, revoked_reason, amr, auth_at)
    SELECT $1, $2, $3, $4, $5::bigint, $6::bigint, $7::bigint, $8, $17, $18::bigint FROM users WHERE id = $2 AND session_epoch = $19::int FOR SHARE
    RETURNING id
  )
  INSERT INTO refresh_tokens (id, family_id, token_hash, created_at, expires_at, spent_at, access_kid, ip, user_agent)
  SELECT $9, family.id, $10, $11::bigint, $12::bigint, $13::bigint, $14, $15, $16 FROM family
  RETURNING id`
// A login's session with what it commits beside it (core/store.ts SessionStartRecord): the
// back-off counters its success ends ($20, a JSON array of keys, bound as text: a string bound
// straight to jsonb arrives as a JSON string, not an array), those that take its reserved
// guess back ($29, likewise) and its audit event, all only if the family was inserted. A
// session is authenticated when it starts. The keys as `= ANY(ARRAY(…))`, not `IN (SELECT …)`:
// the planner guesses 100 rows for the set and, against a small counters table, joined it by
// walking the table's whole primary key; an array is looked up key by key whatever the sizes.
// The upstream provider the login went through, if any ($30), is the family's: session.created
// names it.
const CREATE_FAMILY_RECORDED = `
  WITH family AS (
    INSERT INTO refresh_families (id, user_id, tenant_id, remember_me, created_at, expires_at, revoked_at, revoked_reason, amr, auth_at, provider_id)
    SELECT $1, $2, $3, $4, $5::bigint, $6::bigint, $7::bigint, $8, $17, $18::bigint, $30 FROM users WHERE id = $2 AND session_epoch = $19::int FOR SHARE
    RETURNING id
  ), token AS (
    INSERT INTO refresh_tokens (id, family_id, token_hash, created_at, expires_at, spent_at, access_kid, ip, user_agent)
    SELECT $9, family.id, $10, $11::bigint, $12::bigint, $13::bigint, $14, $15, $16 FROM family
  ), ended AS (
    DELETE FROM limit_counters WHERE key = ANY(ARRAY(SELECT jsonb_array_elements_text($20::text::jsonb))) AND EXISTS (SELECT 1 FROM family)
  ), refunded AS (
    UPDATE limit_counters SET count = count - 1 WHERE key = ANY(ARRAY(SELECT jsonb_array_elements_text($29::text::jsonb))) AND count > 0 AND EXISTS (SELECT 1 FROM family)
  )
  INSERT INTO audit_events (at, type, tenant_id, user_id, ip, user_agent, api_key_id, detail)
  SELECT $21::bigint, $22, $23, $24, $25, $26, $27, $28 FROM family
  RETURNING id`
// A family revoked (if still live) with the audit event that reports it: one statement.
const REVOKE_FAMILY = `
  WITH revoked AS (
    UPDATE refresh_families SET revoked_at = $2::bigint, revoked_reason = $3 WHERE id = $1 AND revoked_at IS NULL
  )
  INSERT INTO audit_events (at, type, tenant_id, user_id, ip, user_agent, api_key_id, detail)
  VALUES ($4::bigint, $5, $6, $7, $8, $9, $10, $11)`
const ROTATE_TOKEN = `
  WITH spent AS (
    UPDATE refresh_tokens SET spent_at = $2::bigint WHERE id = $1 AND spent_at IS NULL RETURNING id
  )
  INSERT INTO refresh_tokens (id, family_id, token_hash, created_at, expires_at, spent_at, access_kid, ip, user_agent)
  SELECT $3, $4, $5, $6::bigint, $7::bigint, $8::bigint, $9, $10, $11
  WHERE EXISTS (SELECT 1 FROM spent)
  RETURNING id`

// A rotation with the audit event that reports it (an OpenID grant's refresh, core/oidc): one statement.
const ROTATE_TOKEN_AUDITED = `
  WITH spent AS (
    UPDATE refresh_tokens SET spent_at = $2::bigint WHERE id = $1 AND spent_at IS NULL RETURNING id
  ), successor AS (
    INSERT INTO refresh_tokens (id, family_id, token_hash, created_at, expires_at, spent_at, access_kid, ip, user_agent)
    SELECT $3, $4, $5, $6::bigint, $7::bigint, $8::bigint, $9, $10, $11
    WHERE EXISTS (SELECT 1 FROM spent)
    RETURNING id
  )
  INSERT INTO audit_events (at, type, tenant_id, user_id, ip, user_agent, api_key_id, detail)
  SELECT $12::bigint, $13, $14, $15, $16, $17, $18, $19 FROM successor
  RETURNING id`

function createRawPgStore(db: PgDb): Store {
  // Request-path queries are built once: drizzle's builder rebuilt the four-table join on
  // every call and was ~40% of a refresh's CPU on this engine (profiled under load).
  /** A token with its family, user and tenant (and `extra` columns), by the token's hash. */
  const tokenRows = <E extends Record<string, SQL.Aliased | SQL>>(extra: E) =>
    db
      .select({ token: refreshTokens, family: refreshFamilies, user: users, tenant: tenants, ...extra })
      .from(refreshTokens)
      .innerJoin(refreshFamilies, eq(refreshFamilies.id, refreshTokens.familyId))
      .innerJoin(users, eq(users.id, refreshFamilies.userId))
      .innerJoin(tenants, eq(tenants.id, refreshFamilies.tenantId))
      .where(eq(refreshTokens.tokenHash, p('hash')))

  const q = {
    apiKeyByHash: db
      .select({ apiKey: apiKeys, tenant: tenants })
      .from(apiKeys)
      .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
      .where(and(eq(apiKeys.keyHash, p('hash')), isNull(apiKeys.revokedAt)))
      .prepare('authd_api_key_by_hash'),
    userByEmail: db
      .select()
      .from(users)
      .where(and(eq(users.tenantId, p('tenantId')), eq(users.email, p('email'))))
      .prepare('authd_user_by_email'),
    tokenByHash: tokenRows({}).prepare('authd_token_by_hash'),
    tokenWithGroupsByHash: tokenRows({
      // (byte order, as the group store's own read: core/groups)
      groups: sql<string[]>`coalesce((SELECT array_agg(g.name ORDER BY g.name COLLATE "C") FROM group_members m JOIN groups g ON g.id = m.group_id WHERE m.user_id = ${users.id}), '{}')`,
    }).prepare('authd_token_with_groups_by_hash'),
    sessionById: db
      .select({ family: refreshFamilies, user: users, tenant: tenants })
      .from(refreshFamilies)
      .innerJoin(users, eq(users.id, refreshFamilies.userId))
      .innerJoin(tenants, eq(tenants.id, refreshFamilies.tenantId))
      .where(eq(refreshFamilies.id, p('id')))
      .prepare('authd_session_by_id'),
  }

  const revokeFamiliesSignedBy = async (tx: Pick<PgDb, 'update' | 'select'>, kid: string, now: number) => {
    const signed = tx.select({ id: refreshTokens.familyId }).from(refreshTokens).where(eq(refreshTokens.accessKid, kid))
    const rows = await tx
      .update(refreshFamilies)
      .set({ revokedAt: now, revokedReason: 'signing-key-revoked' })
      .where(and(isNull(refreshFamilies.revokedAt), inArray(refreshFamilies.id, signed)))
      .returning({ id: refreshFamilies.id })
    return rows.length
  }

  return {
    tenants: {
      // Audiences are compared in one canonical form (lower case: they are ASCII), under a
      // lock that two instances changing audiences at once both take.
      insert: (tenant) =>
        db.transaction(async (tx) => {
          await lockKey(tx, 'tenant-audience')
          if (await audienceTaken(tx, tenant.audience, tenant.id)) return false
          return insertUnlessTaken(() => tx.insert(tenants).values(tenant))
        }),
      async setAudience(id, audience) {
        return db.transaction(async (tx) => {
          await lockKey(tx, 'tenant-audience')
          if (await audienceTaken(tx, audience, id)) return 'audience-taken' as const
          const [row] = await tx.update(tenants).set({ audience }).where(eq(tenants.id, id)).returning()
          return row ?? null
        })
      },
      async updateSettings(id, changes) {
        try {
          const [row] = await db.update(tenants).set(changes).where(eq(tenants.id, id)).returning()
          return row ?? null
        } catch (error) {
          if (isPgUniqueViolation(error)) return 'slug-taken'
          throw error
        }
      },
      async setSignup(id, signup) {
        const [row] = await db.update(tenants).set({ signup }).where(eq(tenants.id, id)).returning()
        return row ?? null
      },
      async get(id) {
        const [row] = await db.select().from(tenants).where(eq(tenants.id, id))
        return row ?? null
      },
      async findBySlug(slug) {
        const [row] = await db.select().from(tenants).where(eq(tenants.slug, slug))
        return row ?? null
      },
      list: () => db.select().from(tenants).orderBy(asc(tenants.createdAt), asc(tenants.id)),
      async setDisabledAt(id, disabledAt) {
        return db.transaction(async (tx) => {
          const [tenant] = await tx.update(tenants).set({ disabledAt }).where(eq(tenants.id, id)).returning()
          if (tenant && disabledAt !== null) {
            await spendOutstandingSecrets(tx, { tenantId: id }, disabledAt)
            await revokeSessionsOf(tx, { tenantId: id }, disabledAt, 'tenant-disabled')
          }
          return tenant ?? null
        })
      },
      initialise: (first) =>
        db.transaction(async (tx) => {
          // Two first runs at once: the second waits, then finds the first one's tenant.
          await lockKey(tx, 'authd:initialise')
          if ((await tx.select({ id: tenants.id }).from(tenants).limit(1)).length > 0) return false
          await tx.insert(tenants).values(first.tenant)
          await tx.insert(apiKeys).values({ ...first.apiKey, keyHash: first.keyHash })
          await tx.insert(users).values(first.user)
          if (first.setupToken) await tx.insert(setupTokens).values(first.setupToken)
          if (first.invitation) await tx.insert(mailOutbox).values(first.invitation)
          if (first.audit.length > 0) await tx.insert(auditEvents).values(first.audit.map(toAuditRow))
          return true
        }),
    },

    apiKeys: {
      async insert(key, keyHash) {
        await db.insert(apiKeys).values({ ...key, keyHash })
      },
      async findActiveByHash(hash) {
        const [row] = await q.apiKeyByHash.execute({ hash })
        return row ? { apiKey: withoutHash(row.apiKey), tenant: row.tenant } : null
      },
      async list(tenantId) {
        const { keyHash: _, ...columns } = getTableColumns(apiKeys)
        return db
          .select(columns)
          .from(apiKeys)
          .where(tenantId ? eq(apiKeys.tenantId, tenantId) : undefined)
          .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))
      },
      async revoke(id, revokedAt) {
        await db.update(apiKeys).set({ revokedAt }).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
        const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, id))
        return row ? withoutHash(row) : null
      },
    },

    users: {
      insert: (user, setupToken, invitation) =>
        insertUnlessTaken(() =>
          db.transaction(async (tx) => {
            await tx.insert(users).values(user)
            if (setupToken) await tx.insert(setupTokens).values(setupToken)
            if (invitation) await tx.insert(mailOutbox).values(invitation)
          }),
        ),
      async get(id) {
        const [row] = await db.select().from(users).where(eq(users.id, id))
        return row ?? null
      },
      async findByEmail(tenantId, email) {
        const [row] = await q.userByEmail.execute({ tenantId, email })
        return row ?? null
      },
      page: (tenantId, { email, afterId, limit }) =>
        db
          .select()
          .from(users)
          .where(and(eq(users.tenantId, tenantId), email === undefined ? undefined : eq(users.email, email), afterId === undefined ? undefined : gt(users.id, afterId)))
          .orderBy(asc(users.id))
          .limit(limit),
      async update(id, changes, now) {
        try {
          return await db.transaction(async (tx) => {
            const [user] = await tx.update(users).set({ ...changes, updatedAt: now }).where(eq(users.id, id)).returning()
            // What was mailed to the old address must not prove the new one.
            if (user && changes.email !== undefined) await spendOutstandingSecrets(tx, { userId: id }, now)
            return user ?? null
          })
        } catch (error) {
          if (isPgUniqueViolation(error)) return 'email-taken'
          throw error
        }
      },
      // Deleted rows stay in PostgreSQL's files until VACUUM reclaims them (docs/security.md).
      erase: (user) => db.transaction((tx) => eraseUser(tx, user)),
      async setDisabledAt(id, disabledAt, now) {
        return db.transaction(async (tx) => {
          const epoch = disabledAt === null ? {} : { sessionEpoch: sql`${users.sessionEpoch} + 1` }
          const [user] = await tx.update(users).set({ disabledAt, updatedAt: now, ...epoch }).where(eq(users.id, id)).returning()
          if (user && disabledAt !== null) {
            await spendOutstandingSecrets(tx, { userId: id }, now)
            await revokeSessionsOf(tx, { userId: id }, now, 'user-disabled')
          }
          return user ?? null
        })
      },
      async setPasswordHash(id, passwordHash, now) {
        await db.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, id))
      },
      insertMany: (newUsers, tokens, memberships = []) =>
        insertUnlessTaken(() =>
          db.transaction(async (tx) => {
            for (const user of newUsers) await tx.insert(users).values(user)
            for (const token of tokens) await tx.insert(setupTokens).values(token)
            for (const membership of memberships) await tx.insert(groupMembers).values(membership)
          }),
        ),
      async passwordHashParameters() {
        // A page of users at a time by id (its index), counted here: as one GROUP BY it was a
        // sequential scan of every user in one statement (see the SQLite store).
        const counts = new Map<string, number>()
        for (let after = ''; ; ) {
          const groups = (await db.$client.unsafe(HASH_PARAMETERS_AFTER, [after, HASH_PAGE])) as Array<{ parameters: string | null; count: number; last: string }>
          for (const { parameters, count } of groups) if (parameters !== null) counts.set(parameters, (counts.get(parameters) ?? 0) + count)
          if (groups.reduce((n, g) => n + g.count, 0) < HASH_PAGE) break
          after = groups[0]!.last
        }
        return [...counts].map(([parameters, count]) => ({ parameters, count }))
      },
      async replacePassword(input) {
        await db.transaction((tx) => replacePassword(tx, input))
      },
    },

    signingKeys: {
      async insertAndRetireOthers(key) {
        await db.transaction(async (tx) => {
          await lockKey(tx, 'signing-keys')
          await tx.update(signingKeys).set({ retiredAt: key.createdAt }).where(and(isNull(signingKeys.retiredAt), eq(signingKeys.alg, key.alg)))
          await tx.insert(signingKeys).values({ ...key, publicJwk: JSON.stringify(key.publicJwk) })
        })
      },
      async insertIfNoneActive(key) {
        return db.transaction(async (tx) => {
          // Instances starting together on a database without such a key would otherwise each add one.
          await lockKey(tx, 'signing-keys')
          const [active] = await tx.select({ kid: signingKeys.kid }).from(signingKeys).where(and(isNull(signingKeys.retiredAt), eq(signingKeys.alg, key.alg))).limit(1)
          if (active) return false
          await tx.insert(signingKeys).values({ ...key, publicJwk: JSON.stringify(key.publicJwk) })
          return true
        })
      },
      async list() {
        return (await db.select().from(signingKeys).orderBy(asc(signingKeys.createdAt))).map(toSigningKey)
      },
      async revoke(kid, now, replacement) {
        return db.transaction(async (tx) => {
          await lockKey(tx, 'signing-keys')
          const [key] = await tx.select().from(signingKeys).where(eq(signingKeys.kid, kid))
          if (!key) return null
          await tx
            .update(signingKeys)
            .set({ revokedAt: key.revokedAt ?? now, retiredAt: key.retiredAt ?? now })
            .where(eq(signingKeys.kid, kid))
          if (replacement) await tx.insert(signingKeys).values({ ...replacement, publicJwk: JSON.stringify(replacement.publicJwk) })
          return { sessionsRevoked: await revokeFamiliesSignedBy(tx, kid, now) }
        })
      },
      revokeSessionsSignedBy: (kid, now) => revokeFamiliesSignedBy(db, kid, now),
    },

    sessions: {
      async createFamily(f, t, userEpoch, record) {
        // One statement rather than BEGIN, INSERT, INSERT, COMMIT: a login holds no
        // connection across round trips.
        const session = [f.id, f.userId, f.tenantId, f.rememberMe, f.createdAt, f.expiresAt, f.revokedAt, f.revokedReason, t.id, t.tokenHash, t.createdAt, t.expiresAt, t.spentAt, t.accessKid, t.ip, t.userAgent, f.amr, f.authAt, userEpoch]
        if (!record) return (await db.$client.unsafe(CREATE_FAMILY, session)).length === 1
        const a = toAuditRow(record.audit)
        const rows = await db.$client.unsafe(CREATE_FAMILY_RECORDED, [...session, JSON.stringify(record.limitResets), a.at, a.type, a.tenantId, a.userId, a.ip, a.userAgent, a.apiKeyId, a.detail, JSON.stringify(record.limitRefunds), record.providerId ?? null])
        return rows.length === 1
      },
      async findToken(hash) {
        const [row] = await q.tokenByHash.execute({ hash })
        return row ?? null
      },
      async findTokenWithGroups(hash) {
        const [row] = await q.tokenWithGroupsByHash.execute({ hash })
        return row ?? null
      },
      async rotate(tokenId, spentAt, successor, audit) {
        // One statement, so one round trip and no transaction held across awaits (it was
        // BEGIN, UPDATE, INSERT, COMMIT). Concurrent rotations of one token, on any
        // instances: the row lock makes the others wait, then re-check spent_at and find the
        // token spent, so they insert nothing.
        const s = successor
        const rotation = [tokenId, spentAt, s.id, s.familyId, s.tokenHash, s.createdAt, s.expiresAt, s.spentAt, s.accessKid, s.ip, s.userAgent]
        if (audit) {
          const a = toAuditRow(audit)
          return (await db.$client.unsafe(ROTATE_TOKEN_AUDITED, [...rotation, a.at, a.type, a.tenantId, a.userId, a.ip, a.userAgent, a.apiKeyId, a.detail])).length === 1
        }
        const rows = await db.$client.unsafe(ROTATE_TOKEN, rotation)
        return rows.length === 1
      },
      async findSession(familyId) {
        const [row] = await q.sessionById.execute({ id: familyId })
        return row ?? null
      },
      async listLive(userId, now) {
        return db
          .select({ family: refreshFamilies, liveToken: refreshTokens })
          .from(refreshFamilies)
          .innerJoin(refreshTokens, and(eq(refreshTokens.familyId, refreshFamilies.id), isNull(refreshTokens.spentAt)))
          .where(and(eq(refreshFamilies.userId, userId), isNull(refreshFamilies.revokedAt), gt(refreshTokens.expiresAt, now)))
          .orderBy(desc(refreshFamilies.createdAt), desc(refreshFamilies.id))
      },
      async revokeFamily(familyId, revokedAt, reason, audit) {
        const a = toAuditRow(audit)
        await db.$client.unsafe(REVOKE_FAMILY, [familyId, revokedAt, reason, a.at, a.type, a.tenantId, a.userId, a.ip, a.userAgent, a.apiKeyId, a.detail])
      },
      revokeUserFamilies: (userId, revokedAt, reason) => revokeSessionsOf(db, { userId }, revokedAt, reason),
      async markUsed(familyId, at) {
        await db
          .update(refreshFamilies)
          .set({ lastUsedAt: at })
          .where(and(eq(refreshFamilies.id, familyId), sql`coalesce(${refreshFamilies.lastUsedAt}, 0) <= ${at - SESSION_USE_GRAIN_MS}`))
      },
      async markAuthenticated(familyId, at, audit, amr) {
        return db.transaction(async (tx) => {
          const marked = await tx
            .update(refreshFamilies)
            .set({ authAt: at, ...(amr !== undefined && { amr }) })
            .where(and(eq(refreshFamilies.id, familyId), isNull(refreshFamilies.revokedAt)))
            .returning({ id: refreshFamilies.id })
          if (marked.length === 1) await tx.insert(auditEvents).values(toAuditRow(audit))
          return marked.length === 1
        })
      },
    },

    passwordResets: createPgPasswordResetStore(db),
    setupTokens: createPgSetupTokenStore(db),
    signups: createPgSignupStore(db),
    mfa: createPgMfaStore(db),
    groups: createPgGroupStore(db),
    accessRules: createPgAccessRuleStore(db),
    providers: createPgProviderStore(db),
    identities: createPgIdentityStore(db),
    federationFlows: createPgFederationFlowStore(db),
    passkeys: createPgPasskeyStore(db),
    oidc: createPgOidcStore(db),
    outbox: createPgOutboxStore(db),
    webhooks: createPgWebhookStore(db),
    limits: createPgLimitStore(db),
    audit: createPgAuditStore(db),
    idempotency: createPgIdempotencyStore(db),
    prune: createPgPrune(db),

    async serverSecret(name, create) {
      await db.insert(serverSecrets).values({ name, value: create(), createdAt: Date.now() }).onConflictDoNothing()
      const [row] = await db.select().from(serverSecrets).where(eq(serverSecrets.name, name))
      return row!.value
    },

    serverSettings: {
      async get(name) {
        const [row] = await db.select({ value: serverSettings.value }).from(serverSettings).where(eq(serverSettings.name, name))
        return row?.value ?? null
      },
      async set(name, value, now) {
        await db.insert(serverSettings).values({ name, value, updatedAt: now }).onConflictDoUpdate({ target: serverSettings.name, set: { value, updatedAt: now } })
      },
    },

    async ping() {
      await db.execute(sql`SELECT 1`)
    },

    migrationStatus: () => pgMigrationStatus(db.$client),

    close() {
      void db.$client.close()
    },
  }
}
