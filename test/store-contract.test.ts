// The Store contract: the same scenarios, through the Store interface, on every engine.
// Whatever core relies on (a race settled once, a limit counted exactly, a message claimed by
// one worker) must hold on SQLite and on PostgreSQL alike.
import { describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Store } from '../src/core/store'
import type { ResetHistory } from '../src/core/accounts/store'
import type { DeviceAuthorization, OidcClient, OidcCode } from '../src/core/oidc/types'
import { TENANT_SETTINGS_UNSET, type AuditEvent, type MfaChallenge, type OutboxMessage, type PendingSignup, type RefreshFamily, type RefreshToken, type Tenant, type User } from '../src/core/types'
import { openDatabase } from '../src/db/sqlite/client'
import { runMigrations } from '../src/db/sqlite/migrate'
import { openPostgres } from '../src/db/pg/client'
import { runPgMigrations } from '../src/db/pg/migrate'
import { createPgStore } from '../src/db/pg/store'
import { createSqliteStore } from '../src/db/sqlite/store'
import { tempDir } from './helpers'
import type { WebhookEndpoint, WebhookEvent } from '../src/core/webhooks/types'
import type { Group } from '../src/core/groups/types'
import type { AccessRule } from '../src/core/forward-auth/types'
import { FLOW_TTL_MS, type FederationFlow, type Identity, type IdentityProvider } from '../src/core/federation/types'
import { deliveriesOf } from '../src/core/webhooks/worker'
import { createTestDatabase, describePostgres } from './pg'

interface Engine {
  store: Store
  /** Another connection to the same database, as a second instance would have. */
  second(): Store
  close(): Promise<void>
}

const engines: Array<[string, (name: string, body: () => void) => void, () => Promise<Engine>]> = [
  [
    'SQLite',
    describe,
    async () => {
      const dir = tempDir()
      const path = join(dir, 'authd.db')
      const db = openDatabase(path)
      runMigrations(db.$client)
      const others: Store[] = []
      return {
        store: createSqliteStore(db),
        second: () => {
          const other = createSqliteStore(openDatabase(path))
          others.push(other)
          return other
        },
        async close() {
          for (const other of others) other.close()
          db.$client.close()
          rmSync(dir, { recursive: true, force: true })
        },
      }
    },
  ],
  [
    'PostgreSQL',
    describePostgres,
    async () => {
      const database = await createTestDatabase()
      const db = openPostgres(database.url)
      await runPgMigrations(db.$client)
      const others: ReturnType<typeof openPostgres>[] = []
      return {
        store: createPgStore(db),
        second: () => {
          const other = openPostgres(database.url)
          others.push(other)
          return createPgStore(other)
        },
        async close() {
          await Promise.all([db, ...others].map((d) => d.$client.close()))
          await database.drop()
        },
      }
    },
  ],
]

const now = 1_800_000_000_000
const tenant = (id = Bun.randomUUIDv7()): Tenant => ({ id, name: 'Acme', createdAt: now, disabledAt: null, audience: `urn:authd:tenant:${id}`, signup: 'closed', consoleEnabled: true, ...TENANT_SETTINGS_UNSET })
const user = (tenantId: string, email = 'ada@example.com'): User => ({
  id: Bun.randomUUIDv7(),
  tenantId,
  email,
  firstName: 'Ada',
  lastName: 'L',
  type: 'user',
  passwordHash: '$argon2id$v=19$m=64,t=1,p=1$c2FsdA$aGFzaA',
  createdAt: now,
  updatedAt: now,
  disabledAt: null,
  sessionEpoch: 0,
  emailVerifiedAt: null,
})
const family = (u: User): RefreshFamily => ({ id: Bun.randomUUIDv7(), userId: u.id, tenantId: u.tenantId, rememberMe: false, createdAt: now, expiresAt: now + 86_400_000, revokedAt: null, revokedReason: null, amr: 'pwd', authAt: now })
const token = (familyId: string, hash = Bun.randomUUIDv7()): RefreshToken => ({ id: Bun.randomUUIDv7(), familyId, tokenHash: hash, createdAt: now, expiresAt: now + 3_600_000, spentAt: null, accessKid: 'k1', ip: '192.0.2.1', userAgent: 'first' })
const mail = (tenantId: string): OutboxMessage => ({
  id: Bun.randomUUIDv7(),
  tenantId,
  kind: 'password-changed',
  recipient: 'ada@example.com',
  subject: 's',
  textBody: 't',
  htmlBody: 'h',
  status: 'pending',
  attempts: 0,
  nextAttemptAt: now,
  leaseUntil: null,
  lastError: null,
  secretExpiresAt: null,
  createdAt: now,
  sentAt: null,
})

for (const [engine, define, open] of engines) {
  define(`the Store on ${engine}`, () => {
    const withEngine = (body: (e: Engine) => Promise<void>) => async () => {
      const e = await open()
      try {
        await body(e)
      } finally {
        await e.close()
      }
    }
    const seeded = async (store: Store) => {
      const t = tenant()
      expect(await store.tenants.insert(t)).toBe(true)
      const u = user(t.id)
      expect(await store.users.insert(u)).toBe(true)
      return { t, u }
    }

    it('initialises a database once: two first runs at once write one tenant, and a failed one writes nothing', withEngine(async ({ store, second }) => {
      const first = (t = tenant()) => {
        const apiKey = { id: Bun.randomUUIDv7(), tenantId: t.id, name: 'default', prefix: 'authd_abcdef', createdAt: now, revokedAt: null, scope: 'client' as const }
        const event = { at: now, type: 'tenant.created' as const, tenantId: t.id, userId: null, ip: null, userAgent: null, apiKeyId: null, detail: null }
        return { tenant: t, apiKey, keyHash: Bun.randomUUIDv7(), user: { ...user(t.id), type: 'admin' as const }, audit: [event] }
      }
      // A write that fails half-way (a user whose tenant does not exist) leaves no tenant behind.
      const broken = first()
      await expect(store.tenants.initialise({ ...broken, user: user(Bun.randomUUIDv7()) })).rejects.toThrow()
      expect(await store.tenants.list()).toEqual([])
      expect(await store.apiKeys.list()).toEqual([])

      const results = await Promise.all([store.tenants.initialise(first()), second().tenants.initialise(first())])
      expect(results.sort()).toEqual([false, true])
      expect(await store.tenants.list()).toHaveLength(1)
      expect(await store.apiKeys.list()).toHaveLength(1)
    }))

    it('refuses a second user with the same address in a tenant, and a second tenant with the same audience, in any case', withEngine(async (e) => {
      const { store } = e
      const { t, u } = await seeded(store)
      expect(await store.users.insert({ ...user(t.id), email: u.email })).toBe(false)
      expect(await store.tenants.insert({ ...tenant(), audience: t.audience })).toBe(false)
      expect(await store.tenants.insert({ ...tenant(), audience: t.audience.toUpperCase() })).toBe(false)
      // Two tenants taking audiences that differ only in case, at once, from two connections: one wins.
      const second = e.second()
      const racing = await Promise.all([store, second].map((s, i) => s.tenants.insert({ ...tenant(), audience: i ? 'https://API.race.example' : 'https://api.race.example' })))
      expect(racing.sort()).toEqual([false, true])
      const other = tenant()
      expect(await store.tenants.insert(other)).toBe(true)
      expect(await store.tenants.setAudience(other.id, t.audience)).toBe('audience-taken')
      expect(await store.tenants.setAudience(other.id, t.audience.toUpperCase())).toBe('audience-taken')
      expect(await store.tenants.setAudience(other.id, 'https://api.other.example')).toMatchObject({ id: other.id, audience: 'https://api.other.example' })
      // A tenant's own audience in another case is no conflict.
      expect(await store.tenants.setAudience(other.id, 'https://API.other.example')).toMatchObject({ audience: 'https://API.other.example' })
      expect(await store.tenants.setAudience('no-such-tenant', 'x')).toBeNull()
    }))

    it('gives a slug to one tenant only, also when two take it at once, and finds the tenant by it', withEngine(async (e) => {
      const [a, b] = [tenant(), tenant()]
      expect(await e.store.tenants.insert(a)).toBe(true)
      expect(await e.store.tenants.insert(b)).toBe(true)
      const racing = await Promise.all([e.store, e.second()].map((s, i) => s.tenants.updateSettings(i ? b.id : a.id, { slug: 'acme' })))
      expect(racing.filter((r) => r === 'slug-taken')).toHaveLength(1)
      const holder = racing.find((r) => r !== 'slug-taken') as { id: string }
      expect((await e.store.tenants.findBySlug('acme'))?.id).toBe(holder.id)
      expect(await e.store.tenants.findBySlug('nobody')).toBeNull()
      // Its holder may set it again; giving it up frees it for the other.
      expect(await e.store.tenants.updateSettings(holder.id, { slug: 'acme' })).toMatchObject({ slug: 'acme' })
      expect(await e.store.tenants.updateSettings(holder.id, { slug: null })).toMatchObject({ slug: null })
      const other = holder.id === a.id ? b : a
      expect(await e.store.tenants.updateSettings(other.id, { slug: 'acme' })).toMatchObject({ id: other.id, slug: 'acme' })
    }))

    it('rotates a refresh token once when 20 rotations race from two connections', withEngine(async (e) => {
      const { u } = await seeded(e.store)
      const f = family(u)
      const first = token(f.id)
      await e.store.sessions.createFamily(f, first, 0)
      const second = e.second()
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? second : e.store).sessions.rotate(first.id, now + 1, { ...token(f.id, `successor-${i}`), ip: `198.51.100.${i}`, userAgent: `agent-${i}` })),
      )
      expect(results.filter(Boolean).length).toBe(1)
      expect((await e.store.sessions.findToken(first.tokenHash))!.token.spentAt).toBe(now + 1)
      // The session's live token, and where it was used from, are the winner's.
      const winner = results.indexOf(true)
      const [live] = await e.store.sessions.listLive(u.id, now)
      expect([live!.liveToken.tokenHash, live!.liveToken.ip, live!.liveToken.userAgent]).toEqual([`successor-${winner}`, `198.51.100.${winner}`, `agent-${winner}`])
    }))

    it('finds a session with its user and tenant, and lists a user\'s refreshable sessions only', withEngine(async (e) => {
      const { t, u } = await seeded(e.store)
      const older = { ...family(u), createdAt: now - 10 }
      const newer = family(u)
      const revoked = family(u)
      const lapsed = family(u)
      const newerFirst = token(newer.id)
      await e.store.sessions.createFamily(older, token(older.id), 0)
      await e.store.sessions.createFamily(newer, newerFirst, 0)
      await e.store.sessions.createFamily(revoked, token(revoked.id), 0)
      await e.store.sessions.createFamily(lapsed, { ...token(lapsed.id), expiresAt: now - 1 }, 0)
      await e.store.sessions.revokeFamily(revoked.id, now, 'test', { at: now, type: 'logout', tenantId: t.id, userId: u.id, ip: null, userAgent: null, apiKeyId: null, detail: null })
      // A rotated session is listed once, with its live token's expiry.
      await e.store.sessions.rotate(newerFirst.id, now + 1, { ...token(newer.id), createdAt: now + 1, expiresAt: now + 7_200_000, ip: '203.0.113.9', userAgent: 'second' })
      const found = await e.store.sessions.findSession(newer.id)
      expect([found!.family.id, found!.user.id, found!.tenant.id]).toEqual([newer.id, u.id, t.id])
      expect(await e.store.sessions.findSession('no-such-session')).toBeNull()
      const live = await e.store.sessions.listLive(u.id, now)
      expect(live.map((s) => s.family.id)).toEqual([newer.id, older.id])
      expect(live.map((s) => s.liveToken.expiresAt)).toEqual([now + 7_200_000, now + 3_600_000])
      expect(live[0]!.liveToken).toMatchObject({ createdAt: now + 1, ip: '203.0.113.9', userAgent: 'second' })
      expect(live[1]!.liveToken).toMatchObject({ createdAt: now, ip: '192.0.2.1', userAgent: 'first' })
    }))

    it('commits a login\'s session with its audit event and the end of its back-off runs, and a revocation with its event', withEngine(async (e) => {
      const { t, u } = await seeded(e.store)
      const event = (type: string, detail: Record<string, unknown> | null) => ({ at: now, type, tenantId: t.id, userId: u.id, ip: '192.0.2.1', userAgent: 'first', apiKeyId: null, detail })
      await e.store.limits.apply([{ key: 'run-a', op: 'hit', windowMs: 60_000 }, { key: 'run-b', op: 'hit', windowMs: 60_000 }, { key: 'other', op: 'hit', windowMs: 60_000 }], now)
      await e.store.limits.apply([{ key: 'reserved', op: 'hit', windowMs: 60_000 }, { key: 'reserved', op: 'hit', windowMs: 60_000 }], now)
      const f = family(u)
      await e.store.sessions.createFamily(f, token(f.id), 0, { limitResets: ['run-a', 'run-b'], limitRefunds: ['reserved'], audit: event('login.succeeded', { rememberMe: false }) })
      expect((await e.store.sessions.findSession(f.id))!.family.id).toBe(f.id)
      expect((await e.store.limits.get(['run-a', 'run-b', 'other'])).map((c) => c.key)).toEqual(['other'])
      // The login's own reserved guess is taken back from a counter that goes on.
      expect((await e.store.limits.get(['reserved']))[0]!.count).toBe(1)
      expect(await e.store.sessions.findSession(f.id)).toMatchObject({ family: { authAt: now } })
      // All or nothing: an event the database refuses leaves no session and ends no run.
      const refused = family(u)
      const badEvent = { ...event('login.succeeded', null), type: null as unknown as string }
      await e.store.limits.apply([{ key: 'run-c', op: 'hit', windowMs: 60_000 }], now)
      await expect(e.store.sessions.createFamily(refused, token(refused.id), 0, { limitResets: ['run-c'], limitRefunds: [], audit: badEvent })).rejects.toThrow()
      expect(await e.store.sessions.findSession(refused.id)).toBeNull()
      expect((await e.store.limits.get(['run-c'])).map((c) => c.key)).toEqual(['run-c'])
      // A user whose session epoch moved on since the proof was checked: nothing is written.
      await e.store.limits.apply([{ key: 'run-d', op: 'hit', windowMs: 60_000 }], now)
      const stale = family(u)
      expect(await e.store.sessions.createFamily(stale, token(stale.id), 1, { limitResets: ['run-d'], limitRefunds: [], audit: event('login.succeeded', { stale: true }) })).toBe(false)
      expect(await e.store.sessions.findSession(stale.id)).toBeNull()
      expect((await e.store.limits.get(['run-d'])).map((c) => c.key)).toEqual(['run-d'])
      expect(await e.store.sessions.createFamily(stale, token(stale.id), 1)).toBe(false)
      // No counters to end: the session and its event are still written.
      const g = family(u)
      await e.store.sessions.createFamily(g, token(g.id), 0, { limitResets: [], limitRefunds: [], audit: event('login.succeeded', { secondFactor: 'totp' }) })
      await e.store.sessions.revokeFamily(g.id, now + 5, 'logout', event('logout', { familyId: g.id }))
      expect((await e.store.sessions.findSession(g.id))!.family).toMatchObject({ revokedAt: now + 5, revokedReason: 'logout' })
      // A failure's counters and its event, together.
      const [counted] = await e.store.limits.apply([{ key: 'other', op: 'hit', windowMs: 60_000 }], now, event('login.failed', { reason: 'wrong-password' }))
      expect(counted!.count).toBe(2)
      const events = (await e.store.audit.query({ userId: u.id })).sort((a, b) => a.id - b.id)
      expect(events.map((ev) => [ev.type, ev.detail, ev.ip])).toEqual([
        ['login.succeeded', { rememberMe: false }, '192.0.2.1'],
        ['login.succeeded', { secondFactor: 'totp' }, '192.0.2.1'],
        ['logout', { familyId: g.id }, '192.0.2.1'],
        ['login.failed', { reason: 'wrong-password' }, '192.0.2.1'],
      ])
    }))

    it('counts limit hits exactly under concurrency, starts a window over once it is past, and resets', withEngine(async (e) => {
      const second = e.second()
      await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? second : e.store).limits.apply([{ key: 'k', op: 'hit', windowMs: 60_000 }], now)))
      expect(await e.store.limits.get(['k'])).toEqual([{ key: 'k', count: 30, windowStart: now, updatedAt: now }])
      const [later] = await e.store.limits.apply([{ key: 'k', op: 'hit', windowMs: 60_000 }], now + 59_999)
      expect(later).toEqual({ key: 'k', count: 31, windowStart: now, updatedAt: now + 59_999 })
      const [restarted] = await e.store.limits.apply([{ key: 'k', op: 'hit', windowMs: 60_000 }], now + 60_000)
      expect(restarted).toEqual({ key: 'k', count: 1, windowStart: now + 60_000, updatedAt: now + 60_000 })
      await e.store.limits.apply([{ key: 'k', op: 'refund' }], now)
      expect((await e.store.limits.get(['k']))[0]!.count).toBe(0)
      await e.store.limits.apply([{ key: 'k', op: 'refund' }], now)
      expect((await e.store.limits.get(['k']))[0]!.count).toBe(0)
      await e.store.limits.apply([{ key: 'k', op: 'reset' }], now)
      expect(await e.store.limits.get(['k'])).toEqual([])
    }))

    it('admits a guess and counts it in one step: of 20 racing reservations on two connections, exactly as many as the verdict allows', withEngine(async (e) => {
      const second = e.second()
      // Refused from the fifth count on, as a back-off of threshold 5 would be.
      const verdict = (counters: Array<{ key: string; count: number }>) => (counters.some((c) => c.count >= 5) ? { limits: ['test'], waitMs: 1000 } : null)
      const hits = [{ key: 'g1', op: 'hit' as const, windowMs: 60_000 }, { key: 'g2', op: 'hit' as const, windowMs: 60_000 }]
      // Half the reservations name the keys in the other order: the locks must not deadlock.
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? second : e.store).limits.reserve(i % 4 < 2 ? hits : [...hits].reverse(), now, verdict)))
      expect(results.filter((r) => r === null)).toHaveLength(5)
      expect(results.filter((r) => r !== null)).toEqual(Array(15).fill({ limits: ['test'], waitMs: 1000 }))
      expect((await e.store.limits.get(['g1', 'g2'])).map((c) => c.count)).toEqual([5, 5])
      // A refusal writes nothing, even for a key the refused hits named that has no counter yet.
      expect(await e.store.limits.reserve([...hits, { key: 'g3', op: 'hit', windowMs: 60_000 }], now, verdict)).not.toBeNull()
      expect(await e.store.limits.get(['g3'])).toEqual([])
    }))

    it('issues at most the per-address limit of reset mails when requests race', withEngine(async (e) => {
      const { t, u } = await seeded(e.store)
      const second = e.second()
      const audit = { at: now, type: 'password_reset.requested', tenantId: t.id, userId: u.id, ip: null, userAgent: null, apiKeyId: null, detail: {} }
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? second : e.store).passwordResets.request({ tenantId: t.id, emailKey: 'ek', at: now, historySince: now - 3600_000, allowed: (h) => h.issued === 0, audit, mail: mail(t.id) }),
        ),
      )
      expect(results.filter(Boolean).length).toBe(1)
      expect((await e.store.outbox.list({})).length).toBe(1)
      // The rule sees the issued requests since historySince, and only those.
      const seen: unknown[] = []
      const ask = (at: number, historySince: number) =>
        e.store.passwordResets.request({ tenantId: t.id, emailKey: 'ek', at, historySince, allowed: (h) => (seen.push(h), true), audit })
      await ask(now + 1000, now - 3600_000)
      await ask(now + 2000, now + 1)
      await ask(now + 3000, now - 3600_000)
      expect(seen).toEqual([{ issued: 1, lastIssuedAt: now }, { issued: 1, lastIssuedAt: now + 1000 }, { issued: 3, lastIssuedAt: now + 2000 }])
    }))

    it('hands each outbox message to exactly one of several claiming workers, and back after its lease', withEngine(async (e) => {
      const { t, u } = await seeded(e.store)
      // (a password set by an admin queues its notice: one way in through the Store)
      await e.store.users.replacePassword({ userId: u.id, passwordHash: 'x', now, notice: mail(t.id), reason: 'password-set-by-admin' })
      const second = e.second()
      const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? second : e.store).outbox.claimNext(now, 60_000)))
      const claimed = claims.filter((m) => m !== null)
      expect(claimed.length).toBe(1)
      expect(await e.store.outbox.claimNext(now + 1000, 60_000)).toBeNull()
      const takenOver = await e.store.outbox.claimNext(now + 61_000, 60_000)
      expect(takenOver).toMatchObject({ id: claimed[0]!.id, attempts: 2, status: 'sending' })
      await e.store.outbox.markSent(takenOver!.id, now + 62_000)
      expect(await e.store.outbox.countByStatus()).toMatchObject({ sent: 1, pending: 0, sending: 0 })
    }))

    it('completes a setup once when 20 setups race', withEngine(async (e) => {
      const t = tenant()
      await e.store.tenants.insert(t)
      const u = { ...user(t.id), passwordHash: null }
      await e.store.users.insert(u, { id: Bun.randomUUIDv7(), userId: u.id, tokenHash: 'st', createdAt: now, expiresAt: now + 1000, usedAt: null })
      const second = e.second()
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? second : e.store).setupTokens.complete({ userId: u.id, passwordHash: `h${i}`, now })))
      expect(results.filter(Boolean).length).toBe(1)
      expect((await e.store.setupTokens.findByHash('st'))!.usedAt).toBe(now)
    }))

    it('keeps one active signing key, and revokes a key with the sessions it signed for', withEngine(async (e) => {
      const { u } = await seeded(e.store)
      const { generateSigningKey } = await import('../src/core/sessions/signing-keys')
      const k1 = { ...generateSigningKey(now), kid: 'k1' }
      await e.store.signingKeys.insertAndRetireOthers(k1)
      const f = family(u)
      const signed = token(f.id)
      await e.store.sessions.createFamily(f, signed, 0)
      const k2 = generateSigningKey(now + 1)
      expect(await e.store.signingKeys.revoke('k1', now + 1, k2)).toEqual({ sessionsRevoked: 1 })
      const keys = await e.store.signingKeys.list()
      expect(keys.map((k) => [k.kid, k.revokedAt !== null, k.retiredAt !== null])).toEqual([['k1', true, true], [k2.kid, false, false]])
      expect((await e.store.sessions.findToken(signed.tokenHash))!.family).toMatchObject({ revokedAt: now + 1, revokedReason: 'signing-key-revoked' })
    }))

    it('adds one key per algorithm when instances start together; a rotation retires only its own algorithm’s key', withEngine(async (e) => {
      const { generateSigningKey, KeyRing } = await import('../src/core/sessions/signing-keys')
      const clock = { now: () => now }
      // Six instances (on two connections) start on a database without keys: one of each algorithm.
      const rings = Array.from({ length: 6 }, (_, i) => new KeyRing((i % 2 ? e.second() : e.store).signingKeys, clock, 900))
      await Promise.all(rings.map((ring) => ring.ensureKey()))
      const keys = await e.store.signingKeys.list()
      expect(keys.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256'])
      const kids = new Set(await Promise.all(rings.map(async (ring) => `${(await ring.signingKey('ES256')).kid} ${(await ring.signingKey('RS256')).kid}`)))
      expect(kids.size).toBe(1)
      // Two racing for the same algorithm once one is active add nothing.
      expect(await Promise.all([e.store.signingKeys.insertIfNoneActive(generateSigningKey(now, 'RS256')), e.second().signingKeys.insertIfNoneActive(generateSigningKey(now, 'RS256'))])).toEqual([false, false])
      const rsa = generateSigningKey(now + 1, 'RS256')
      await e.store.signingKeys.insertAndRetireOthers(rsa)
      const after = await e.store.signingKeys.list()
      expect(after.filter((k) => k.retiredAt === null).map((k) => [k.kid, k.alg]).sort()).toEqual([[keys.find((k) => k.alg === 'ES256')!.kid, 'ES256'], [rsa.kid, 'RS256']].sort())
    }))

    it('reads a family of audit types by its name, its _ and % letters and not wildcards; records the console’s admin', withEngine(async ({ store }) => {
      const event = (type: string, actorUserId: string | null = null) => store.audit.record({ at: now, type, tenantId: null, userId: null, ip: null, userAgent: null, apiKeyId: null, actorUserId, detail: null })
      await event('webhook_endpoint.created', 'admin-1')
      await event('webhookXendpoint.created')
      await event('webhook%endpoint.created')
      expect((await store.audit.query({ type: 'webhook_endpoint.*' })).map((r) => [r.type, r.actorUserId])).toEqual([['webhook_endpoint.created', 'admin-1']])
      expect((await store.audit.query({ type: '%.*' })).map((r) => r.type)).toEqual([])
    }))

    it('prunes only rows past retention, in bounded batches', withEngine(async ({ store }) => {
      for (let i = 0; i < 5; i++) await store.audit.record({ at: now - 10_000 + i, type: 'x', tenantId: null, userId: null, ip: null, userAgent: null, apiKeyId: null, detail: null })
      await store.audit.record({ at: now, type: 'kept', tenantId: null, userId: null, ip: null, userAgent: null, apiKeyId: null, detail: { a: 1 } })
      expect(await store.prune('auditEvents', now - 1, 2)).toBe(2)
      expect(await store.prune('auditEvents', now - 1, 10)).toBe(3)
      expect((await store.audit.query({})).map((r) => [r.type, r.detail])).toEqual([['kept', { a: 1 }]])
    }))

    it('keeps one pending sign-up per address, replaced by the next whoever asks, and creates its user once when 20 verifications race', withEngine(async (e) => {
      const t = tenant()
      await e.store.tenants.insert(t)
      const audit = { at: now, type: 'signup.requested', tenantId: t.id, userId: null, ip: null, userAgent: null, apiKeyId: null, detail: {} }
      const pending = (codeHash: string, firstName: string): PendingSignup => ({
        tenantId: t.id, emailKey: 'ek', firstName, lastName: 'H', passwordHash: `hash-${firstName}`, codeHash, createdAt: now, expiresAt: now + 600_000, attempts: 0, spentAt: null,
      })
      const codeMail = (subject: string) => ({ ...mail(t.id), id: Bun.randomUUIDv7(), kind: 'signup-code' as const, recipient: 'grace@example.com', subject, secretExpiresAt: now + 600_000 })
      const ask = (p: PendingSignup, slot: { at: number } | null = { at: now }, at = now) =>
        e.store.signups.request({ tenantId: t.id, emailKey: p.emailKey, at, historySince: at - 3600_000, slot: () => slot, audit, pending: p, mail: codeMail('fresh'), replacingMail: codeMail('replacing') })
      const codeMails = async () => (await e.store.outbox.list({ pendingOnly: true })).filter((m) => m.kind === 'signup-code')
      expect(await ask(pending('c1', 'First'))).toEqual({ at: now })
      expect((await codeMails()).map((m) => m.subject)).toEqual(['fresh'])
      expect(await e.store.signups.reserveTry({ tenantId: t.id, emailKey: 'ek', now, maxAttempts: 5 })).toBe(true)
      expect(await e.store.signups.find(t.id, 'ek')).toMatchObject({ codeHash: 'c1', attempts: 1 })
      // The next one, at a later slot (the interval since the last mail is not over): it
      // replaces the live one, its mail (the replacing form) waits, the older one's unsent
      // mail is withdrawn, and the code's life starts when its mail leaves.
      expect(await ask(pending('c2', 'Second'), { at: now + 30_000 })).toEqual({ at: now + 30_000 })
      expect(await e.store.signups.find(t.id, 'ek')).toMatchObject({ codeHash: 'c2', firstName: 'Second', attempts: 0, expiresAt: now + 630_000 })
      expect((await codeMails()).map((m) => [m.subject, m.nextAttemptAt, m.secretExpiresAt])).toEqual([['replacing', now + 30_000, now + 630_000]])
      // One after an expired pending sign-up replaces nothing live: the fresh form.
      const afterExpiry = now + 700_000
      expect(await ask(pending('c2d', 'Dead'), { at: afterExpiry }, afterExpiry)).toEqual({ at: afterExpiry })
      expect((await codeMails()).map((m) => m.subject)).toEqual(['fresh'])
      await ask(pending('c2g', 'Fresh'))
      expect(await e.store.signups.find(t.id, 'ek')).toMatchObject({ codeHash: 'c2g' })
      // No slot (the hour's budget is spent): the newer one stores nothing and ends nothing: the older one and its mail stay.
      await ask(pending('c2a', 'Again'))
      expect(await ask(pending('c2b', 'Late'), null)).toBeNull()
      expect(await e.store.signups.find(t.id, 'ek')).toMatchObject({ codeHash: 'c2a', firstName: 'Again' })
      expect((await codeMails()).length).toBe(1)
      // A code mail withdrawn unsent stops counting: the limits see only mails that can have left.
      const t2 = tenant()
      await e.store.tenants.insert(t2)
      const seen: ResetHistory[] = []
      const inT2 = (codeHash: string) =>
        e.store.signups.request({
          tenantId: t2.id, emailKey: 'ek', at: now, historySince: now - 3600_000, slot: (history) => (seen.push(history), { at: now + 60_000 * seen.length }),
          audit: { ...audit, tenantId: t2.id }, pending: { ...pending(codeHash, 'Burst'), tenantId: t2.id }, mail: { ...codeMail('fresh'), tenantId: t2.id }, replacingMail: { ...codeMail('replacing'), tenantId: t2.id },
        })
      for (const codeHash of ['b1', 'b2', 'b3']) await inT2(codeHash)
      expect(seen).toEqual([{ issued: 0, lastIssuedAt: null }, { issued: 0, lastIssuedAt: null }, { issued: 0, lastIssuedAt: null }])
      await ask(pending('c3', 'Third'))
      expect(await e.store.signups.find(t.id, 'ek')).toMatchObject({ codeHash: 'c3', firstName: 'Third', attempts: 0 })
      expect(await e.store.signups.find(t.id, 'other')).toBeNull()

      const newUser = () => ({ ...user(t.id, 'grace@example.com'), passwordHash: 'hash-Third' })
      const complete = (store: Store, codeHash = 'c3') => store.signups.complete({ user: newUser(), emailKey: 'ek', codeHash, now, maxAttempts: 5, audit })
      expect(await complete(e.store, 'c1')).toBe('spent')
      const second = e.second()
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => complete(i % 2 ? second : e.store)))
      expect(results.sort()).toEqual(['created', ...Array(19).fill('spent')])
      expect(await e.store.signups.find(t.id, 'ek')).toBeNull()
      expect((await e.store.users.findByEmail(t.id, 'grace@example.com'))!.passwordHash).toBe('hash-Third')

      // An address that became a user meanwhile: the sign-up creates nothing and is gone.
      await ask({ ...pending('c4', 'Late'), emailKey: 'ek2' })
      const late = await e.store.signups.complete({ user: { ...user(t.id, 'grace@example.com') }, emailKey: 'ek2', codeHash: 'c4', now, maxAttempts: 5, audit })
      expect(late).toBe('email-taken')
      expect(await e.store.signups.find(t.id, 'ek2')).toBeNull()

      // Five tries, even racing, are all a code gets: each counted before it is judged.
      await ask({ ...pending('c5', 'Tried'), emailKey: 'ek3' })
      const tries = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? second : e.store).signups.reserveTry({ tenantId: t.id, emailKey: 'ek3', now, maxAttempts: 5 })))
      expect(tries.filter(Boolean)).toHaveLength(5)
      expect(await e.store.signups.find(t.id, 'ek3')).toMatchObject({ attempts: 5 })
      expect(await e.store.signups.reserveTry({ tenantId: t.id, emailKey: 'ek3', now, maxAttempts: 5 })).toBe(false)
      expect(await e.store.signups.reserveTry({ tenantId: t.id, emailKey: 'ek3', now: now + 600_000, maxAttempts: 5 })).toBe(false)
      // Retention takes a pending sign-up once it can no longer be used, and only that one
      // (another one made in the same millisecond, still live, stays).
      await ask({ ...pending('c6', 'Live'), emailKey: 'ek4' })
      await e.store.signups.complete({ user: user(t.id, 'tried@example.com'), emailKey: 'ek4', codeHash: 'c6', now, maxAttempts: 5, audit })
      await ask({ ...pending('c7', 'Live'), emailKey: 'ek5' })
      expect(await e.store.prune('pendingSignups', now + 1, 10)).toBe(0)
      expect(await e.store.prune('pendingSignups', now + 600_001, 10)).toBe(2)
      expect(await e.store.signups.find(t.id, 'ek5')).toBeNull()
    }))

    it('turns a TOTP factor on once, accepts each step once and only forward, and spends a recovery code once under races', withEngine(async (e) => {
      const { t, u } = await seeded(e.store)
      const audit = { at: now, type: 'mfa.enrolled', tenantId: t.id, userId: u.id, ip: null, userAgent: null, apiKeyId: null, detail: null }
      const factor = (sealedSecret: string) => ({ userId: u.id, sealedSecret, createdAt: now, confirmedAt: null, lastUsedStep: null })
      const codes = ['r1', 'r2', 'r3'].map((codeHash) => ({ id: Bun.randomUUIDv7(), userId: u.id, codeHash, usedAt: null }))
      const confirm = (store: Store) => store.mfa.confirmTotp({ userId: u.id, step: 100, now, keepSessionId: 'none', recoveryCodes: codes, mail: { ...mail(t.id), id: Bun.randomUUIDv7(), kind: 'mfa-enrolled' }, audit })
      // An unconfirmed enrolment is replaced by the next one; confirmed, it cannot be.
      expect(await e.store.mfa.beginTotp(factor('first'))).toBe(true)
      expect(await e.store.mfa.beginTotp(factor('second'))).toBe(true)
      const second = e.second()
      const confirmations = await Promise.all(Array.from({ length: 10 }, (_, i) => confirm(i % 2 ? second : e.store)))
      expect(confirmations.filter(Boolean)).toHaveLength(1)
      expect(await e.store.mfa.findTotp(u.id)).toEqual({ ...factor('second'), confirmedAt: now, lastUsedStep: 100 })
      expect(await e.store.mfa.beginTotp(factor('third'))).toBe(false)
      expect((await e.store.outbox.list({})).filter((m) => m.kind === 'mfa-enrolled')).toHaveLength(1)

      // A step is used once, and never one at or before the last used.
      expect(await e.store.mfa.useTotpStep(u.id, 100)).toBe(false)
      expect(await e.store.mfa.useTotpStep(u.id, 99)).toBe(false)
      const steps = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? second : e.store).mfa.useTotpStep(u.id, 101)))
      expect(steps.filter(Boolean)).toHaveLength(1)
      expect((await e.store.mfa.findTotp(u.id))!.lastUsedStep).toBe(101)

      const notice = () => ({ ...mail(t.id), id: Bun.randomUUIDv7(), kind: 'mfa-recovery-used' as const })
      const spent = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? second : e.store).mfa.useRecoveryCode(u.id, 'r1', now, notice())))
      expect(spent.filter(Boolean)).toHaveLength(1)
      expect((await e.store.outbox.list({})).filter((m) => m.kind === 'mfa-recovery-used')).toHaveLength(1)
      expect(await e.store.mfa.hasRecoveryCode(u.id, 'r1')).toBe(false)
      expect(await e.store.mfa.hasRecoveryCode(u.id, 'r2')).toBe(true)
      expect(await e.store.mfa.countRecoveryCodes(u.id)).toBe(2)

      // Removal takes the factor, the codes and the user's challenges, once.
      await e.store.mfa.createChallenge({ id: Bun.randomUUIDv7(), tokenHash: 'live', userId: u.id, tenantId: t.id, rememberMe: false, createdAt: now, expiresAt: now + 300_000, attempts: 0, spentAt: null, webauthnChallenge: null, providerId: null })
      const removals = await Promise.all([e.store, second].map((store) => store.mfa.removeTotp({ userId: u.id, audit: { ...audit, type: 'mfa.disabled' } })))
      expect(removals.filter(Boolean)).toHaveLength(1)
      expect(await e.store.mfa.findTotp(u.id)).toBeNull()
      expect(await e.store.mfa.countRecoveryCodes(u.id)).toBe(0)
      expect(await e.store.mfa.findChallenge('live')).toBeNull()
      expect(await e.store.mfa.useTotpStep(u.id, 500)).toBe(false)
    }))

    it('spends a login challenge once when 20 verifications race, ends it at the attempt cap or its expiry, and prunes it after', withEngine(async (e) => {
      const { t, u } = await seeded(e.store)
      const challenge = (tokenHash: string): MfaChallenge => ({ id: Bun.randomUUIDv7(), tokenHash, userId: u.id, tenantId: t.id, rememberMe: true, createdAt: now, expiresAt: now + 300_000, attempts: 0, spentAt: null, webauthnChallenge: null, providerId: null })
      const raced = challenge('raced')
      await e.store.mfa.createChallenge(raced)
      expect(await e.store.mfa.findChallenge('raced')).toEqual(raced)
      const second = e.second()
      const spends = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? second : e.store).mfa.spendChallenge(raced.id, now + 1, 5)))
      expect(spends.filter(Boolean)).toHaveLength(1)
      expect((await e.store.mfa.findChallenge('raced'))!.spentAt).toBe(now + 1)

      // Tries are counted before they are judged, with the account's counters: of 8 racing, 5
      // are admitted and counted, and none after; a refusal of the counters writes nothing.
      const guessed = challenge('guessed')
      await e.store.mfa.createChallenge(guessed)
      const hits = [{ key: 'account', op: 'hit' as const, windowMs: 60_000 }]
      const tryIt = (store: Store, verdict: (c: Array<{ count: number }>) => { limits: string[]; waitMs: number } | null = () => null) =>
        store.mfa.reserveChallengeTry({ id: guessed.id, now, maxAttempts: 5, limits: hits, verdict })
      expect(await tryIt(e.store, () => ({ limits: ['blocked'], waitMs: 1 }))).toEqual({ refused: { limits: ['blocked'], waitMs: 1 }, counted: false, admitted: false })
      const tries = await Promise.all(Array.from({ length: 8 }, (_, i) => tryIt(i % 2 ? second : e.store)))
      expect(tries.filter((t) => t.admitted)).toHaveLength(5)
      expect(await e.store.mfa.findChallenge('guessed')).toMatchObject({ attempts: 5, spentAt: null })
      expect((await e.store.limits.get(['account']))[0]!.count).toBe(5)
      expect(await tryIt(e.store)).toEqual({ refused: null, counted: false, admitted: false })
      // The fifth try's code may be the right one: it can still spend the challenge.
      expect(await e.store.mfa.spendChallenge(guessed.id, now, 5)).toBe(true)
      expect((await tryIt(e.store)).admitted).toBe(false)

      const expired = challenge('expired')
      await e.store.mfa.createChallenge(expired)
      expect(await e.store.mfa.spendChallenge(expired.id, expired.expiresAt, 5)).toBe(false)

      // Retention: spent ones go at once, a live one only once it has expired.
      expect(await e.store.prune('mfaChallenges', now + 2, 10)).toBe(2)
      expect(await e.store.mfa.findChallenge('expired')).toEqual(expired)
      expect(await e.store.prune('mfaChallenges', expired.expiresAt + 1, 10)).toBe(1)
      expect(await e.store.mfa.findChallenge('expired')).toBeNull()
    }))

    it('spends a passkey ceremony once across connections, registers a credential id once, and holds a user to the limit when registrations race', withEngine(async (e) => {
      const { t, u } = await seeded(e.store)
      const second = e.second()
      const ceremony = { id: Bun.randomUUIDv7(), tenantId: t.id, userId: null, purpose: 'login' as const, challenge: 'c', createdAt: now, expiresAt: now + 300_000, spentAt: null }
      await e.store.passkeys.createChallenge(ceremony)
      expect(await e.store.passkeys.spendChallenge(ceremony.id, 'another-tenant', 'login', now)).toBeNull()
      expect(await e.store.passkeys.spendChallenge(ceremony.id, t.id, 'register', now)).toBeNull()
      const spends = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? second : e.store).passkeys.spendChallenge(ceremony.id, t.id, 'login', now)))
      expect(spends.filter((c) => c !== null)).toEqual([{ ...ceremony, spentAt: now }])
      const late = { ...ceremony, id: Bun.randomUUIDv7() }
      await e.store.passkeys.createChallenge(late)
      expect(await e.store.passkeys.spendChallenge(late.id, t.id, 'login', late.expiresAt)).toBeNull()

      const passkey = (credentialId: string) => ({
        id: Bun.randomUUIDv7(), tenantId: t.id, userId: u.id, credentialId, publicKey: 'pk', counter: 0, transports: '[]', deviceType: 'singleDevice', backedUp: false, aaguid: '00000000-0000-0000-0000-000000000000', name: 'P', createdAt: now, lastUsedAt: null,
      })
      const add = (store: Store, credentialId: string) =>
        store.passkeys.insert({ passkey: passkey(credentialId), max: 3, mail: { ...mail(t.id), id: Bun.randomUUIDv7(), kind: 'passkey-added' }, audit: { at: now, type: 'passkey.added', tenantId: t.id, userId: u.id, ip: null, userAgent: null, apiKeyId: null, detail: null } })
      expect(await add(e.store, 'cred-0')).toBe('added')
      expect(await add(second, 'cred-0')).toBe('taken')
      const racing = await Promise.all(Array.from({ length: 6 }, (_, i) => add(i % 2 ? second : e.store, `cred-${i + 1}`)))
      expect(racing.filter((r) => r === 'added')).toHaveLength(2)
      expect(racing.filter((r) => r === 'too-many')).toHaveLength(4)
      expect(await e.store.passkeys.listByUser(u.id)).toHaveLength(3)
      // A use moves the counter forward only: of uses racing with one counter, one is recorded;
      // a lower counter is refused; 0 after 0 (a synced passkey) is recorded each time.
      const [first, other] = await e.store.passkeys.listByUser(u.id)
      const raced = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? second : e.store).passkeys.recordUse(first!.id, 9, now + 1)))
      expect(raced.filter(Boolean)).toHaveLength(1)
      expect(await second.passkeys.recordUse(first!.id, 4, now + 2)).toBe(false)
      expect(await e.store.passkeys.findByCredentialId(t.id, first!.credentialId)).toMatchObject({ counter: 9, lastUsedAt: now + 1 })
      expect(await e.store.passkeys.recordUse(other!.id, 0, now + 3)).toBe(true)
      expect(await second.passkeys.recordUse(other!.id, 0, now + 4)).toBe(true)
      expect(await e.store.passkeys.findByCredentialId(t.id, other!.credentialId)).toMatchObject({ counter: 0, lastUsedAt: now + 4 })
    }))

    it('redeems an OpenID code once when 20 redemptions race from two connections; a reuse revokes its grant; consents widen and withdraw; a deleted client loses its grants', withEngine(async (e) => {
      const { t, u } = await seeded(e.store)
      const client: OidcClient = { id: Bun.randomUUIDv7(), tenantId: t.id, name: 'Wiki', secretHash: 'h', secretPrefix: 'authd_cs_abcd', redirectUris: ['https://wiki.example/cb'], postLogoutRedirectUris: [], firstParty: false, idTokenAlg: 'RS256', allowedGroups: null, groupsClaim: 'scope', service: false, scopes: [], audiences: [], tokenLifetimeSec: 900, device: false, jwks: null, createdAt: now, updatedAt: now }
      await e.store.oidc.insertClient(client)
      expect(await e.store.oidc.getClient(client.id)).toEqual(client)
      // A service client's fields (product spec §26) round-trip too.
      const service: OidcClient = { ...client, id: Bun.randomUUIDv7(), redirectUris: [], service: true, scopes: ['read', 'write'], audiences: ['https://api.example/'], tokenLifetimeSec: 300 }
      await e.store.oidc.insertClient(service)
      expect(await e.store.oidc.getClient(service.id)).toEqual(service)
      expect(await e.store.oidc.updateClient(service.id, { scopes: ['read'], audiences: [], tokenLifetimeSec: 60 })).toMatchObject({ service: true, scopes: ['read'], audiences: [], tokenLifetimeSec: 60 })
      await e.store.oidc.deleteClient(service.id, now)
      expect((await e.store.oidc.updateClient(client.id, { redirectUris: ['https://wiki.example/a', 'https://wiki.example/b'], updatedAt: now + 1 }))?.redirectUris).toEqual(['https://wiki.example/a', 'https://wiki.example/b'])
      expect((await e.store.oidc.listClients(t.id)).map((c) => c.id)).toEqual([client.id])
      const code = (userEpoch = 0): OidcCode => ({ id: Bun.randomUUIDv7(), codeHash: Bun.randomUUIDv7(), tenantId: t.id, clientId: client.id, userId: u.id, sessionId: 's', redirectUri: 'https://wiki.example/a', codeChallenge: 'c', nonce: null, scope: 'openid', authAt: now, amr: 'pwd', userEpoch, createdAt: now, expiresAt: now + 60_000, spentAt: null, familyId: null })
      const grant = () => ({ ...family(u), clientId: client.id, scope: 'openid' })
      const started = { at: now, type: 'oidc.grant_started' as const, tenantId: t.id, userId: u.id, ip: null, userAgent: null, apiKeyId: null, detail: null }
      const racing = code()
      await e.store.oidc.insertCode(racing)
      const other = e.second()
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => {
        const f = grant()
        return (i % 2 ? other : e.store).oidc.redeemCode({ codeId: racing.id, now: now + 1, family: f, firstToken: token(f.id), userEpoch: 0, audit: started })
      }))
      expect(outcomes.filter((o) => o === 'redeemed').length).toBe(1)
      expect((await e.store.audit.query({ userId: u.id, type: 'oidc.grant_started' })).length).toBe(1)
      const spent = (await e.store.oidc.findCode(racing.codeHash))!
      expect(spent.spentAt).toBe(now + 1)
      expect((await e.store.sessions.findSession(spent.familyId!))?.family).toMatchObject({ clientId: client.id, scope: 'openid', revokedAt: null })
      // A grant's refresh commits its audit event with the rotation: 20 racing give one of each.
      const first = (await e.store.sessions.findSession(spent.familyId!))!
      const firstToken = (await e.store.sessions.listLive(u.id, now + 1)).find((l) => l.family.id === first.family.id)!.liveToken
      const refreshed = { at: now, type: 'oidc.grant_refreshed' as const, tenantId: t.id, userId: u.id, ip: null, userAgent: null, apiKeyId: null, detail: null }
      const rotations = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? other : e.store).sessions.rotate(firstToken.id, now + 1, token(first.family.id), refreshed)))
      expect(rotations.filter(Boolean).length).toBe(1)
      expect((await e.store.audit.query({ type: 'oidc.grant_refreshed' })).length).toBe(1)
      const event = { at: now, type: 'oidc.code_reused' as const, tenantId: t.id, userId: u.id, ip: null, userAgent: null, apiKeyId: null, detail: null }
      await e.store.oidc.revokeCodeGrant(racing.id, now + 2, event)
      expect((await e.store.sessions.findSession(spent.familyId!))?.family).toMatchObject({ revokedAt: now + 2, revokedReason: 'code-reused' })
      // A code past its 60 s, and one issued before the user's epoch moved, start no grant.
      const late = code()
      await e.store.oidc.insertCode(late)
      const f = grant()
      expect(await e.store.oidc.redeemCode({ codeId: late.id, now: now + 60_000, family: f, firstToken: token(f.id), userEpoch: 0, audit: started })).toBe('spent')
      const stale = code(0)
      await e.store.oidc.insertCode(stale)
      const g = grant()
      expect(await e.store.oidc.redeemCode({ codeId: stale.id, now: now + 1, family: g, firstToken: token(g.id), userEpoch: 7, audit: started })).toBe('stale')
      expect(await e.store.sessions.findSession(g.id)).toBeNull()

      await e.store.oidc.saveConsent({ userId: u.id, clientId: client.id, tenantId: t.id, scope: 'openid', createdAt: now })
      await e.store.oidc.saveConsent({ userId: u.id, clientId: client.id, tenantId: t.id, scope: 'openid email', createdAt: now + 1 })
      expect((await e.store.oidc.listConsents(u.id)).map((c) => c.scope)).toEqual(['openid email'])
      const held = code()
      await e.store.oidc.insertCode(held)
      const h = grant()
      expect(await e.store.oidc.redeemCode({ codeId: held.id, now: now + 1, family: h, firstToken: token(h.id), userEpoch: 0, audit: started })).toBe('redeemed')
      expect(await e.store.oidc.withdrawConsent(u.id, client.id, now + 3)).toBe(true)
      expect(await e.store.oidc.findConsent(u.id, client.id)).toBeNull()
      expect((await e.store.sessions.findSession(h.id))?.family.revokedReason).toBe('consent-withdrawn')
      // Retention: codes go once expired (a spent one is kept its 60 s, so that a reuse is caught).
      expect(await e.store.prune('oidcCodes', now + 59_999, 100)).toBe(0)
      expect(await e.store.prune('oidcCodes', now + 60_001, 100)).toBe(4)
      expect(await e.store.oidc.findCode(racing.codeHash)).toBeNull()
      expect(await e.store.oidc.deleteClient(client.id, now + 4)).toBe(true)
      expect(await e.store.oidc.getClient(client.id)).toBeNull()
      expect(await e.store.oidc.deleteClient(client.id, now + 4)).toBe(false)
    }))

    it('spends a client assertion\'s jti once when 20 uses race from two connections; an expired one may be used again; retention prunes them; keys round-trip', withEngine(async (e) => {
      const { t } = await seeded(e.store)
      const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'k1' }] }
      const client: OidcClient = { id: Bun.randomUUIDv7(), tenantId: t.id, name: 'Robot', secretHash: null, secretPrefix: null, redirectUris: [], postLogoutRedirectUris: [], firstParty: false, idTokenAlg: 'RS256', allowedGroups: null, groupsClaim: 'scope', service: true, scopes: [], audiences: [], tokenLifetimeSec: 900, device: false, jwks, createdAt: now, updatedAt: now }
      await e.store.oidc.insertClient(client)
      expect(await e.store.oidc.getClient(client.id)).toEqual(client)
      const rotated = { keys: [...jwks.keys, { kty: 'OKP', crv: 'Ed25519', x: 'z', kid: 'k2' }] }
      expect(await e.store.oidc.updateClient(client.id, { jwks: rotated })).toMatchObject({ jwks: rotated })
      const other = e.second()
      const raced = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? other : e.store).oidc.spendClientAssertion(client.id, 'jti-a', now + 60_000, now)))
      expect(raced.filter(Boolean)).toHaveLength(1)
      // (another jti, or the same jti of another client, is another assertion)
      expect(await e.store.oidc.spendClientAssertion(client.id, 'jti-b', now + 60_000, now)).toBe(true)
      expect(await e.store.oidc.spendClientAssertion(client.id, 'jti-a', now + 60_000, now + 59_999)).toBe(false)
      expect(await e.store.oidc.spendClientAssertion(client.id, 'jti-a', now + 200_000, now + 60_000)).toBe(true)
      expect(await e.store.oidc.spendClientAssertion(client.id, 'jti-a', now + 200_000, now + 60_001)).toBe(false)
      expect(await e.store.prune('clientAssertions', now + 60_001, 100)).toBe(1)
      expect(await e.store.oidc.spendClientAssertion(client.id, 'jti-b', now + 300_000, now + 60_002)).toBe(true)
      expect(await e.store.oidc.deleteClient(client.id, now)).toBe(true)
    }))

    it('decides a device authorization once when 20 decisions race from two connections (an approval writes its code with it); polls are recorded; expired ones are pruned', withEngine(async (e) => {
      const { t, u } = await seeded(e.store)
      const client: OidcClient = { id: Bun.randomUUIDv7(), tenantId: t.id, name: 'CLI', secretHash: null, secretPrefix: null, redirectUris: [], postLogoutRedirectUris: [], firstParty: false, idTokenAlg: 'RS256', allowedGroups: null, groupsClaim: 'scope', service: false, scopes: [], audiences: [], tokenLifetimeSec: 900, device: true, jwks: null, createdAt: now, updatedAt: now }
      await e.store.oidc.insertClient(client)
      expect(await e.store.oidc.getClient(client.id)).toEqual(client)
      const authorization = (): DeviceAuthorization => ({ id: Bun.randomUUIDv7(), tenantId: t.id, clientId: client.id, deviceCodeHash: Bun.randomUUIDv7(), userCodeHash: Bun.randomUUIDv7(), issuer: 'https://auth.example/t/acme', scope: 'openid', intervalSec: 5, lastPolledAt: null, status: 'pending', userId: null, decidedAt: null, createdAt: now, expiresAt: now + 600_000 })
      const pending = authorization()
      expect(await e.store.oidc.insertDeviceAuthorization(pending)).toBe(true)
      // A user code alike a live one (drawn again by core): nothing written.
      expect(await e.store.oidc.insertDeviceAuthorization({ ...authorization(), userCodeHash: pending.userCodeHash })).toBe(false)
      expect(await e.store.oidc.findDeviceAuthorization({ deviceCodeHash: pending.deviceCodeHash })).toEqual(pending)
      expect(await e.store.oidc.findDeviceAuthorization({ userCodeHash: pending.userCodeHash })).toEqual(pending)
      await e.store.oidc.recordDevicePoll(pending.id, now + 1, 10)
      expect(await e.store.oidc.findDeviceAuthorization({ deviceCodeHash: pending.deviceCodeHash })).toMatchObject({ lastPolledAt: now + 1, intervalSec: 10 })
      const code = (): OidcCode => ({ id: Bun.randomUUIDv7(), codeHash: Bun.randomUUIDv7(), tenantId: t.id, clientId: client.id, userId: u.id, sessionId: 's', redirectUri: 'urn:ietf:params:oauth:grant-type:device_code', codeChallenge: null, nonce: null, scope: 'openid', authAt: now, amr: 'pwd', userEpoch: 0, createdAt: now, expiresAt: now + 600_000, spentAt: null, familyId: null })
      const other = e.second()
      const codes = Array.from({ length: 20 }, code)
      const outcomes = await Promise.all(codes.map((c, i) => (i % 2 ? other : e.store).oidc.decideDeviceAuthorization(pending.id, i % 3 ? { status: 'approved', userId: u.id, now: now + 2, code: c } : { status: 'denied', userId: u.id, now: now + 2, code: null })))
      expect(outcomes.filter(Boolean).length).toBe(1)
      const decided = (await e.store.oidc.findDeviceAuthorization({ deviceCodeHash: pending.deviceCodeHash }))!
      expect(decided).toMatchObject({ userId: u.id, decidedAt: now + 2 })
      const written = (await Promise.all(codes.map((c) => e.store.oidc.findCode(c.codeHash)))).filter((c) => c !== null)
      // (only the winning approval's code, and none for a winning denial)
      expect(written.length).toBe(decided.status === 'approved' ? 1 : 0)
      // An expired one is decided by nobody, and goes with retention.
      const expired = { ...authorization(), expiresAt: now + 1 }
      await e.store.oidc.insertDeviceAuthorization(expired)
      expect(await e.store.oidc.decideDeviceAuthorization(expired.id, { status: 'denied', userId: u.id, now: now + 1, code: null })).toBe(false)
      expect(await e.store.prune('deviceAuthorizations', now + 2, 100)).toBe(1)
      expect(await e.store.prune('deviceAuthorizations', now + 600_001, 100)).toBe(1)
      expect(await e.store.oidc.findDeviceAuthorization({ deviceCodeHash: pending.deviceCodeHash })).toBeNull()
      // Deleting the client takes its device authorizations with it.
      const last = authorization()
      await e.store.oidc.insertDeviceAuthorization(last)
      expect(await e.store.oidc.deleteClient(client.id, now + 3)).toBe(true)
      expect(await e.store.oidc.findDeviceAuthorization({ deviceCodeHash: last.deviceCodeHash })).toBeNull()
    }))

    it('creates a server secret once, whoever asks first', withEngine(async (e) => {
      const second = e.second()
      const values = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? second : e.store).serverSecret('s', () => `value-${i}`)))
      expect(new Set(values).size).toBe(1)
    }))

    describe('groups', () => {
      const group = (tenantId: string, name: string): Group => ({ id: Bun.randomUUIDv7(), tenantId, name, description: null, createdAt: now, updatedAt: now })

      it('inserts a group once per name in a tenant, and renames it unless another has the name', withEngine(async ({ store }) => {
        const { t } = await seeded(store)
        const other = tenant()
        await store.tenants.insert(other)
        const admins = group(t.id, 'admins')
        expect(await store.groups.insert(admins)).toBe(true)
        expect(await store.groups.insert(group(t.id, 'admins'))).toBe(false)
        expect(await store.groups.insert(group(other.id, 'admins'))).toBe(true)
        const staff = group(t.id, 'staff')
        await store.groups.insert(staff)
        expect(await store.groups.update(staff.id, { name: 'admins', updatedAt: now + 1 })).toBe('name-taken')
        expect(await store.groups.update(staff.id, { name: 'people', description: 'Everyone', updatedAt: now + 1 })).toEqual({ ...staff, name: 'people', description: 'Everyone', updatedAt: now + 1 })
        expect(await store.groups.update(Bun.randomUUIDv7(), { name: 'x', updatedAt: now })).toBeNull()
        expect((await store.groups.list(t.id)).map((g) => g.name)).toEqual(['admins', 'people'])
        expect((await store.groups.findByNames(t.id, ['people', 'nobody'])).map((g) => g.id)).toEqual([staff.id])
      }))

      it('holds a user to the most groups when additions race', withEngine(async ({ store }) => {
        const { t, u } = await seeded(store)
        const many = Array.from({ length: 6 }, (_, i) => group(t.id, `g${i}`))
        for (const g of many) await store.groups.insert(g)
        await store.groups.addMembers(many[0]!, [u.id], now, 3)
        await store.groups.addMembers(many[1]!, [u.id], now, 3)
        const answers = await Promise.all(many.slice(2).map((g) => store.groups.addMembers(g, [u.id], now, 3)))
        expect(answers.filter((a) => 'added' in a && a.added === 1)).toHaveLength(1)
        expect(await store.groups.groupNamesOfUser(u.id)).toHaveLength(3)
      }))

      it('adds and removes members idempotently, pages them by user id, and lists a user\'s groups by name', withEngine(async ({ store }) => {
        const { t, u } = await seeded(store)
        const users = [u, user(t.id, 'b@example.com'), user(t.id, 'c@example.com')]
        for (const v of users.slice(1)) await store.users.insert(v)
        const [zeta, alpha] = [group(t.id, 'zeta'), group(t.id, 'alpha')]
        for (const g of [zeta, alpha]) await store.groups.insert(g)
        expect(await store.groups.addMembers(zeta, users.map((v) => v.id), now, 100)).toEqual({ added: 3 })
        expect(await store.groups.addMembers(zeta, [u.id, users[1]!.id], now, 100)).toEqual({ added: 0 })
        expect(await store.groups.addMembers(alpha, [u.id], now, 100)).toEqual({ added: 1 })
        // At most this many groups a user: counted in the insert's own transaction.
        expect(await store.groups.addMembers(zeta, [u.id], now, 1)).toEqual({ added: 0 })
        expect(await store.groups.addMembers({ id: Bun.randomUUIDv7(), tenantId: alpha.tenantId }, [u.id], now, 100)).toEqual({ refused: 'group-gone' })
        expect(await store.groups.addMembers(alpha, [Bun.randomUUIDv7()], now, 100)).toEqual({ refused: 'user-gone' })
        const third = group(t.id, 'third')
        await store.groups.insert(third)
        expect(await store.groups.addMembers(third, [u.id], now, 2)).toEqual({ full: u.id })
        expect(await store.groups.members(zeta.id, null, 2)).toEqual([users[0]!.id, users[1]!.id])
        expect(await store.groups.members(zeta.id, users[1]!.id, 2)).toEqual([users[2]!.id])
        expect((await store.groups.groupsOfUser(u.id)).map((g) => g.name)).toEqual(['alpha', 'zeta'])
        expect(await store.groups.groupNamesOfUser(u.id)).toEqual(['alpha', 'zeta'])
        expect(await store.groups.groupNamesOfUsers([u.id, users[2]!.id, Bun.randomUUIDv7()])).toEqual(new Map([[u.id, ['alpha', 'zeta']], [users[2]!.id, ['zeta']]]))
        expect(await store.groups.removeMembers(zeta.id, [u.id, u.id])).toBe(1)
        expect(await store.groups.removeMembers(zeta.id, [u.id])).toBe(0)
        expect(await store.groups.groupNamesOfUser(u.id)).toEqual(['alpha'])
      }))

      it("reads a session token with its user's group names in byte order, in one read, as findToken reads it", withEngine(async ({ store }) => {
        const { t, u } = await seeded(store)
        const f = family(u)
        const first = token(f.id)
        await store.sessions.createFamily(f, first, 0)
        expect(await store.sessions.findTokenWithGroups(first.tokenHash)).toEqual({ ...(await store.sessions.findToken(first.tokenHash))!, groups: [] })
        const named = ['ab', 'a-b', 'b', 'a.b']
        for (const name of named) {
          const g = group(t.id, name)
          await store.groups.insert(g)
          await store.groups.addMembers(g, [u.id], now, 100)
        }
        expect((await store.sessions.findTokenWithGroups(first.tokenHash))!.groups).toEqual(['a-b', 'a.b', 'ab', 'b'])
        expect((await store.sessions.findTokenWithGroups(first.tokenHash))!.groups).toEqual(await store.groups.groupNamesOfUser(u.id))
        expect(await store.sessions.findTokenWithGroups('no-such-hash')).toBeNull()
      }))

      it('drops the memberships of an erased user and of a deleted group, and writes an import\'s memberships with its users or not at all', withEngine(async ({ store }) => {
        const { t, u } = await seeded(store)
        const other = user(t.id, 'other@example.com')
        await store.users.insert(other)
        const [a, b] = [group(t.id, 'a'), group(t.id, 'b')]
        for (const g of [a, b]) await store.groups.insert(g)
        await store.groups.addMembers(a, [u.id, other.id], now, 100)
        await store.groups.addMembers(b, [u.id, other.id], now, 100)
        expect(await store.users.erase(u)).toBe(true)
        expect(await store.groups.members(a.id, null, 10)).toEqual([other.id])
        expect(await store.groups.delete(b.id)).toBe(true)
        expect(await store.groups.delete(b.id)).toBe(false)
        expect(await store.groups.groupNamesOfUser(other.id)).toEqual(['a'])

        const [fresh, taken] = [user(t.id, 'fresh@example.com'), user(t.id, 'other@example.com')]
        const membership = (v: User) => ({ groupId: a.id, userId: v.id, tenantId: t.id, createdAt: now })
        expect(await store.users.insertMany([fresh, taken], [], [membership(fresh), membership(taken)])).toBe(false)
        expect(await store.groups.members(a.id, null, 10)).toEqual([other.id])
        expect(await store.users.insertMany([fresh], [], [membership(fresh)])).toBe(true)
        expect(await store.groups.groupNamesOfUser(fresh.id)).toEqual(['a'])
      }))
    })

    describe('access rules', () => {
      const rule = (tenantId: string, domain: string, changes: Partial<AccessRule> = {}): Omit<AccessRule, 'position'> => ({
        id: Bun.randomUUIDv7(),
        tenantId,
        domain,
        paths: [],
        methods: [],
        policy: 'one_factor',
        groups: [],
        createdAt: now,
        ...changes,
      })
      const order = async (store: Store, tenantId: string) => (await store.accessRules.list(tenantId)).map((r) => [r.position, r.domain])

      it('inserts a rule at its position, moving the rules at and after it down; past the end or none appends; holds the tenant to the most rules', withEngine(async ({ store }) => {
        const { t } = await seeded(store)
        const other = tenant()
        await store.tenants.insert(other)
        const a = rule(t.id, 'a.example.com', { paths: ['/api', '/health'], methods: ['GET', 'HEAD'], policy: 'two_factor', groups: ['admins', 'ops'] })
        expect(await store.accessRules.insert(a, null, 5)).toEqual({ ...a, position: 1 })
        expect(await store.accessRules.insert(rule(t.id, 'b.example.com'), null, 5)).toMatchObject({ position: 2 })
        expect(await store.accessRules.insert(rule(t.id, 'c.example.com'), 1, 5)).toMatchObject({ position: 1 })
        expect(await order(store, t.id)).toEqual([[1, 'c.example.com'], [2, 'a.example.com'], [3, 'b.example.com']])
        expect(await store.accessRules.insert(rule(t.id, 'd.example.com'), 99, 5)).toMatchObject({ position: 4 })
        expect(await store.accessRules.insert(rule(t.id, 'e.example.com'), 3, 5)).toMatchObject({ position: 3 })
        expect(await order(store, t.id)).toEqual([[1, 'c.example.com'], [2, 'a.example.com'], [3, 'e.example.com'], [4, 'b.example.com'], [5, 'd.example.com']])
        // Full: nothing written, nothing moved.
        const refused = rule(t.id, 'f.example.com')
        expect(await store.accessRules.insert(refused, 1, 5)).toBe('full')
        expect(await store.accessRules.get(refused.id)).toBeNull()
        expect(await order(store, t.id)).toEqual([[1, 'c.example.com'], [2, 'a.example.com'], [3, 'e.example.com'], [4, 'b.example.com'], [5, 'd.example.com']])
        // Another tenant's rules are numbered and counted on their own; a position below 1 is the first.
        expect(await store.accessRules.insert(rule(other.id, 'x.example.com'), null, 1)).toMatchObject({ position: 1 })
        expect(await store.accessRules.insert(rule(other.id, 'y.example.com'), null, 1)).toBe('full')
        expect(await store.accessRules.insert(rule(other.id, 'z.example.com'), 0, 2)).toMatchObject({ position: 1 })
        expect(await order(store, other.id)).toEqual([[1, 'z.example.com'], [2, 'x.example.com']])
        // Read back with its lists as they were given.
        expect(await store.accessRules.get(a.id)).toEqual({ ...a, position: 2 })
        expect((await store.accessRules.list(t.id))[1]).toEqual({ ...a, position: 2 })
        expect(await store.accessRules.get(Bun.randomUUIDv7())).toBeNull()
        expect(await store.accessRules.list(Bun.randomUUIDv7())).toEqual([])
      }))

      it('deletes a rule and closes the gap it leaves, once', withEngine(async ({ store }) => {
        const { t } = await seeded(store)
        const rules = ['a', 'b', 'c', 'd'].map((name) => rule(t.id, `${name}.example.com`))
        for (const r of rules) await store.accessRules.insert(r, null, 10)
        expect(await store.accessRules.delete(rules[1]!.id)).toBe(true)
        expect(await store.accessRules.delete(rules[1]!.id)).toBe(false)
        expect(await order(store, t.id)).toEqual([[1, 'a.example.com'], [2, 'c.example.com'], [3, 'd.example.com']])
        expect(await store.accessRules.delete(rules[0]!.id)).toBe(true)
        expect(await store.accessRules.delete(rules[3]!.id)).toBe(true)
        expect(await order(store, t.id)).toEqual([[1, 'c.example.com']])
        // The next insert takes the place after the last one left.
        expect(await store.accessRules.insert(rule(t.id, 'e.example.com'), null, 10)).toMatchObject({ position: 2 })
        expect(await store.accessRules.delete(Bun.randomUUIDv7())).toBe(false)
      }))

      it('holds a tenant to the most rules and keeps its positions 1..n when inserts and deletions race from two connections', withEngine(async (e) => {
        const { t } = await seeded(e.store)
        const second = e.second()
        const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? second : e.store).accessRules.insert(rule(t.id, `r${i}.example.com`), i % 3 === 0 ? 1 : null, 5)))
        expect(answers.filter((a) => a === 'full')).toHaveLength(3)
        const rules = await e.store.accessRules.list(t.id)
        expect(rules.map((r) => r.position)).toEqual([1, 2, 3, 4, 5])
        const deleted = await Promise.all([rules[0]!, rules[2]!, rules[3]!, rules[0]!].map((r, i) => (i % 2 ? second : e.store).accessRules.delete(r.id)))
        expect(deleted.filter(Boolean)).toHaveLength(3)
        expect((await e.store.accessRules.list(t.id)).map((r) => [r.position, r.id])).toEqual([[1, rules[1]!.id], [2, rules[4]!.id]])
      }))

      it("keeps the tenant's protected domains (a JSON array, as stored)", withEngine(async ({ store }) => {
        const { t } = await seeded(store)
        expect((await store.tenants.get(t.id))!.forwardAuthDomains).toBeNull()
        const domains = JSON.stringify(['example.com', 'example.org'])
        expect(await store.tenants.updateSettings(t.id, { forwardAuthDomains: domains })).toMatchObject({ id: t.id, forwardAuthDomains: domains })
        expect((await store.tenants.get(t.id))!.forwardAuthDomains).toBe(domains)
        expect((await store.tenants.list()).find((x) => x.id === t.id)!.forwardAuthDomains).toBe(domains)
        expect(await store.tenants.updateSettings(t.id, { forwardAuthDomains: null })).toMatchObject({ forwardAuthDomains: null })
      }))
    })

    describe('upstream identity providers', () => {
      const provider = (tenantId: string, name = 'Google', changes: Partial<IdentityProvider> = {}): IdentityProvider => ({
        id: Bun.randomUUIDv7(), tenantId, type: 'google', name, issuer: 'https://accounts.google.com', clientId: 'client', clientSecretSealed: 'v1.sealed', scopes: 'openid email profile',
        linkByEmail: 'verified', createUsers: null, trustUpstreamMfa: false, groupsClaim: null, groupMap: null, createdAt: now, updatedAt: now, ...changes,
      })
      const identity = (p: IdentityProvider, u: User, changes: Partial<Identity> = {}): Identity => ({
        id: Bun.randomUUIDv7(), tenantId: p.tenantId, providerId: p.id, subject: Bun.randomUUIDv7(), userId: u.id, email: u.email, emailVerified: true, createdAt: now, lastUsedAt: null, ...changes,
      })
      const audit = (type: string, u: User): AuditEvent => ({ at: now, type, tenantId: u.tenantId, userId: u.id, ip: null, userAgent: null, apiKeyId: null, detail: null })
      const flow = (p: IdentityProvider, changes: Partial<FederationFlow> = {}): FederationFlow => ({
        id: Bun.randomUUIDv7(), stateHash: Bun.randomUUIDv7(), tenantId: p.tenantId, providerId: p.id, intent: 'sign-in', userId: null, codeVerifierSealed: 'v1.verifier', nonce: 'n',
        returnTo: null, stage: 'started', pendingSealed: null, createdAt: now, expiresAt: now + FLOW_TTL_MS, ...changes,
      })
      /** A user who signs in only through upstream providers. */
      const passwordless = async (store: Store, tenantId: string, email: string) => {
        const u = { ...user(tenantId, email), passwordHash: null }
        expect(await store.users.insert(u)).toBe(true)
        return u
      }
      const auditTypes = async (store: Store, u: User) => (await store.audit.query({ userId: u.id })).map((event) => event.type).sort()
      /** The webhook events written since the last call (fanned out to no endpoint), by type and
       *  data, in that order (events of one millisecond have no order of their own). */
      const newEvents = async (store: Store) => {
        const seen: WebhookEvent[] = []
        await store.webhooks.fanOut(1000, now, (event) => (seen.push(event), []))
        return seen.map((event) => ({ type: event.type, data: JSON.parse(event.data) as Record<string, unknown> })).sort((a, b) => (a.type + JSON.stringify(a.data)).localeCompare(b.type + JSON.stringify(b.data)))
      }

      it('inserts, lists by name, updates and deletes providers; a deleted provider takes its identities, flows and login challenges with it', withEngine(async ({ store }) => {
        const { t, u } = await seeded(store)
        const other = tenant()
        await store.tenants.insert(other)
        const google = provider(t.id, 'Google')
        const github = provider(t.id, 'GitHub', { type: 'github', issuer: null, linkByEmail: 'never', createUsers: 'domains:example.com', trustUpstreamMfa: true, groupsClaim: 'groups', groupMap: '{"eng":"engineers"}' })
        const lab = provider(t.id, 'gitlab', { type: 'gitlab' })
        for (const p of [google, github, lab, provider(other.id)]) await store.providers.insert(p)
        // Byte order, the same on both engines.
        expect(await store.providers.list(t.id)).toEqual([github, google, lab])
        expect(await store.providers.get(github.id)).toEqual(github)
        expect(await store.providers.get(Bun.randomUUIDv7())).toBeNull()
        const changes = { name: 'Google Workspace', trustUpstreamMfa: true, createUsers: 'closed', groupMap: '{"a":"b"}', updatedAt: now + 1 }
        expect(await store.providers.update(google.id, changes)).toEqual({ ...google, ...changes })
        expect(await store.providers.update(google.id, { issuer: null, groupMap: null, updatedAt: now + 2 })).toEqual({ ...google, ...changes, issuer: null, groupMap: null, updatedAt: now + 2 })
        expect(await store.providers.update(Bun.randomUUIDv7(), { name: 'x', updatedAt: now })).toBeNull()

        const linked = identity(google, u)
        expect(await store.identities.insert(linked, audit('identity.linked', u))).toBe(true)
        expect(await store.providers.countIdentities(google.id)).toBe(1)
        expect(await store.providers.countIdentities(github.id)).toBe(0)
        const started = flow(google)
        await store.federationFlows.insert(started)
        const challenge: MfaChallenge = { id: Bun.randomUUIDv7(), tokenHash: 'upstream', userId: u.id, tenantId: t.id, rememberMe: false, createdAt: now, expiresAt: now + 300_000, attempts: 0, spentAt: null, webauthnChallenge: null, providerId: google.id }
        await store.mfa.createChallenge(challenge)
        expect(await store.mfa.findChallenge('upstream')).toEqual(challenge)
        expect(await store.providers.delete(google.id)).toBe(true)
        expect(await store.providers.delete(google.id)).toBe(false)
        expect(await store.providers.get(google.id)).toBeNull()
        expect(await store.identities.get(linked.id)).toBeNull()
        expect(await store.federationFlows.findByState(started.stateHash)).toBeNull()
        // A sign-in through a provider deleted meanwhile does not complete (as a password's, or at all).
        expect(await store.mfa.findChallenge('upstream')).toBeNull()
        expect(await store.providers.countIdentities(google.id)).toBe(0)
        expect((await store.providers.list(t.id)).map((p) => p.id)).toEqual([github.id, lab.id])
      }))

      it('links an identity once, only for a user still there and of its tenant, and records its uses', withEngine(async (e) => {
        const { t, u } = await seeded(e.store)
        const other = tenant()
        await e.store.tenants.insert(other)
        const google = provider(t.id)
        await e.store.providers.insert(google)
        const first = identity(google, u, { subject: 'sub-1', createdAt: now + 1 })
        expect(await e.store.identities.insert(first, audit('identity.linked', u))).toBe(true)
        expect(await e.store.identities.get(first.id)).toEqual(first)
        expect(await e.store.identities.find(google.id, 'sub-1')).toEqual(first)
        expect(await e.store.identities.find(google.id, 'sub-2')).toBeNull()
        // (provider, subject) belongs to one user: a second link of it writes nothing.
        expect(await e.store.identities.insert(identity(google, u, { subject: 'sub-1' }), audit('identity.linked', u))).toBe(false)
        const another = user(t.id, 'another@example.com')
        await e.store.users.insert(another)
        expect(await e.store.identities.insert(identity(google, another, { subject: 'sub-1' }), audit('identity.linked', another))).toBe(false)
        expect(await auditTypes(e.store, another)).toEqual([])
        // Of links of one subject racing from two connections, one goes.
        const second = e.second()
        const raced = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? second : e.store).identities.insert(identity(google, another, { subject: 'raced' }), audit('identity.linked', another))))
        expect(raced.filter(Boolean)).toHaveLength(1)
        expect(await auditTypes(e.store, another)).toEqual(['identity.linked'])
        // A user erased before the link, or of another tenant, is refused without an error.
        const gone = user(t.id, 'gone@example.com')
        await e.store.users.insert(gone)
        await e.store.users.erase(gone)
        expect(await e.store.identities.insert(identity(google, gone), audit('identity.linked', gone))).toBe(false)
        const stranger = user(other.id, 'stranger@example.com')
        await e.store.users.insert(stranger)
        expect(await e.store.identities.insert({ ...identity(google, stranger), tenantId: t.id }, audit('identity.linked', stranger))).toBe(false)
        expect(await e.store.identities.insert(identity(google, stranger), audit('identity.linked', stranger))).toBe(false)
        expect(await auditTypes(e.store, stranger)).toEqual([])
        // The user's identities, oldest first; a use records the upstream's address as it is now.
        const lab = provider(t.id, 'GitLab', { type: 'gitlab' })
        await e.store.providers.insert(lab)
        const older = identity(lab, u, { createdAt: now })
        expect(await e.store.identities.insert(older, audit('identity.linked', u))).toBe(true)
        expect((await e.store.identities.listByUser(u.id)).map((i) => i.id)).toEqual([older.id, first.id])
        expect(await e.store.identities.listByUser(Bun.randomUUIDv7())).toEqual([])
        await e.store.identities.recordUse(first.id, 'ada@new.example.com', false, now + 60_000)
        expect(await e.store.identities.get(first.id)).toEqual({ ...first, email: 'ada@new.example.com', emailVerified: false, lastUsedAt: now + 60_000 })
        await e.store.identities.recordUse(first.id, null, false, now + 120_000)
        expect(await e.store.identities.get(first.id)).toMatchObject({ email: null, lastUsedAt: now + 120_000 })
        expect(await auditTypes(e.store, u)).toEqual(['identity.linked', 'identity.linked'])
      }))

      it('creates a user with their identity in one transaction, and writes nothing when the address or the identity is taken', withEngine(async ({ store }) => {
        const { t, u } = await seeded(store)
        const google = provider(t.id)
        await store.providers.insert(google)
        const fresh = { ...user(t.id, 'fresh@example.com'), passwordHash: null, emailVerifiedAt: now }
        const freshIdentity = identity(google, fresh, { subject: 'fresh' })
        expect(await store.identities.insertWithUser(fresh, freshIdentity, [audit('user.created', fresh), audit('identity.linked', fresh)])).toBe('created')
        expect(await store.users.get(fresh.id)).toEqual(fresh)
        expect(await store.identities.find(google.id, 'fresh')).toEqual(freshIdentity)
        expect(await auditTypes(store, fresh)).toEqual(['identity.linked', 'user.created'])
        // The address of an existing user: neither the user nor the identity is written.
        const twin = { ...user(t.id, u.email), passwordHash: null }
        expect(await store.identities.insertWithUser(twin, identity(google, twin, { subject: 'twin' }), [audit('user.created', twin), audit('identity.linked', twin)])).toBe('email-taken')
        expect(await store.users.get(twin.id)).toBeNull()
        expect(await store.identities.find(google.id, 'twin')).toBeNull()
        expect(await auditTypes(store, twin)).toEqual([])
        // An identity linked already: no user is created for it.
        const late = { ...user(t.id, 'late@example.com'), passwordHash: null }
        expect(await store.identities.insertWithUser(late, identity(google, late, { subject: 'fresh' }), [audit('user.created', late), audit('identity.linked', late)])).toBe('identity-taken')
        expect(await store.users.findByEmail(t.id, 'late@example.com')).toBeNull()
        expect(await store.identities.find(google.id, 'fresh')).toEqual(freshIdentity)
        expect(await auditTypes(store, late)).toEqual([])
        // Its provider deleted meanwhile (an upstream sign-in in flight): nothing written, no error.
        const gone = provider(t.id, 'Gone')
        await store.providers.insert(gone)
        await store.providers.delete(gone.id)
        const orphan = { ...user(t.id, 'orphan@example.com'), passwordHash: null }
        expect(await store.identities.insertWithUser(orphan, identity(gone, orphan, { subject: 'orphan' }), [audit('user.created', orphan)])).toBe('provider-gone')
        expect(await store.users.findByEmail(t.id, 'orphan@example.com')).toBeNull()
      }))

      it("unlinks an identity unless it is the user's last way in (no password, no passkey, no other identity)", withEngine(async ({ store }) => {
        const { t, u } = await seeded(store)
        const [google, github] = [provider(t.id), provider(t.id, 'GitHub', { type: 'github' })]
        for (const p of [google, github]) await store.providers.insert(p)
        const only = await passwordless(store, t.id, 'only@example.com')
        const onlyGoogle = identity(google, only)
        await store.identities.insert(onlyGoogle, audit('identity.linked', only))
        expect(await store.identities.deleteUnlessLast(onlyGoogle.id, only.id, audit('identity.unlinked', only))).toBe('last')
        expect(await store.identities.get(onlyGoogle.id)).toEqual(onlyGoogle)
        // Another user's identity, or none: nothing to unlink.
        expect(await store.identities.deleteUnlessLast(onlyGoogle.id, u.id, audit('identity.unlinked', u))).toBe('none')
        expect(await store.identities.deleteUnlessLast(Bun.randomUUIDv7(), only.id, audit('identity.unlinked', only))).toBe('none')
        // A second identity is another way in; once the first goes, the second is the last.
        const onlyGithub = identity(github, only)
        await store.identities.insert(onlyGithub, audit('identity.linked', only))
        expect(await store.identities.deleteUnlessLast(onlyGoogle.id, only.id, audit('identity.unlinked', only))).toBe('deleted')
        expect(await store.identities.deleteUnlessLast(onlyGoogle.id, only.id, audit('identity.unlinked', only))).toBe('none')
        expect(await store.identities.deleteUnlessLast(onlyGithub.id, only.id, audit('identity.unlinked', only))).toBe('last')
        expect(await auditTypes(store, only)).toEqual(['identity.linked', 'identity.linked', 'identity.unlinked'])
        // A password is another way in.
        const withPassword = identity(google, u)
        await store.identities.insert(withPassword, audit('identity.linked', u))
        expect(await store.identities.deleteUnlessLast(withPassword.id, u.id, audit('identity.unlinked', u))).toBe('deleted')
        // So is a passkey.
        const keyed = await passwordless(store, t.id, 'keyed@example.com')
        const keyedGoogle = identity(google, keyed)
        await store.identities.insert(keyedGoogle, audit('identity.linked', keyed))
        const passkey = { id: Bun.randomUUIDv7(), tenantId: t.id, userId: keyed.id, credentialId: 'cred', publicKey: 'pk', counter: 0, transports: '[]', deviceType: 'multiDevice', backedUp: true, aaguid: '00000000-0000-0000-0000-000000000000', name: 'P', createdAt: now, lastUsedAt: null }
        expect(await store.passkeys.insert({ passkey, max: 10, mail: { ...mail(t.id), kind: 'passkey-added' }, audit: audit('passkey.added', keyed) })).toBe('added')
        expect(await store.identities.deleteUnlessLast(keyedGoogle.id, keyed.id, audit('identity.unlinked', keyed))).toBe('deleted')
        expect(await store.identities.listByUser(keyed.id)).toEqual([])
      }))

      it("of two unlinks of a user's two identities racing from two connections (no password, no passkey), exactly one goes", withEngine(async (e) => {
        const { t } = await seeded(e.store)
        const [google, github] = [provider(t.id), provider(t.id, 'GitHub', { type: 'github' })]
        for (const p of [google, github]) await e.store.providers.insert(p)
        const second = e.second()
        for (let round = 0; round < 5; round++) {
          const u = await passwordless(e.store, t.id, `racer-${round}@example.com`)
          const both = [identity(google, u), identity(github, u)]
          for (const i of both) await e.store.identities.insert(i, audit('identity.linked', u))
          const answers = await Promise.all(both.map((i, n) => (n % 2 ? second : e.store).identities.deleteUnlessLast(i.id, u.id, audit('identity.unlinked', u))))
          expect(answers.sort()).toEqual(['deleted', 'last'])
          expect(await e.store.identities.listByUser(u.id)).toHaveLength(1)
        }
      }))

      it('moves a flow from one stage to the next once: a replay, another stage or an expired flow is refused; expired flows are pruned', withEngine(async (e) => {
        const { t, u } = await seeded(e.store)
        const google = provider(t.id)
        await e.store.providers.insert(google)
        const started = flow(google, { intent: 'link', userId: u.id, returnTo: '/t/acme/account' })
        await e.store.federationFlows.insert(started)
        expect(await e.store.federationFlows.findByState(started.stateHash)).toEqual(started)
        expect(await e.store.federationFlows.findByState('no-such-state')).toBeNull()
        // The callback spends the started flow once, whoever sends it and however often.
        const second = e.second()
        const pending = { pendingSealed: 'v1.profile', userId: u.id }
        const moves = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? second : e.store).federationFlows.advance(started.id, 'started', 'awaiting-proof', now + 1, pending)))
        expect(moves.filter(Boolean)).toHaveLength(1)
        expect(await e.store.federationFlows.findByState(started.stateHash)).toEqual({ ...started, stage: 'awaiting-proof', ...pending })
        expect(await e.store.federationFlows.advance(started.id, 'started', 'done', now + 1)).toBe(false)
        // At its expiry it moves no more; before it, once.
        expect(await e.store.federationFlows.advance(started.id, 'awaiting-proof', 'done', started.expiresAt)).toBe(false)
        expect(await e.store.federationFlows.advance(started.id, 'awaiting-proof', 'done', started.expiresAt - 1)).toBe(true)
        expect(await e.store.federationFlows.advance(started.id, 'awaiting-proof', 'done', now + 2)).toBe(false)
        expect(await e.store.federationFlows.findByState(started.stateHash)).toEqual({ ...started, stage: 'done', ...pending })
        expect(await e.store.federationFlows.advance(Bun.randomUUIDv7(), 'started', 'done', now)).toBe(false)
        // Pruned once expired, done or not.
        const later = flow(google, { expiresAt: started.expiresAt + 60_000 })
        await e.store.federationFlows.insert(later)
        expect(await e.store.prune('federationFlows', started.expiresAt, 10)).toBe(0)
        expect(await e.store.prune('federationFlows', started.expiresAt + 1, 10)).toBe(1)
        expect(await e.store.federationFlows.findByState(started.stateHash)).toBeNull()
        expect(await e.store.federationFlows.findByState(later.stateHash)).toEqual(later)
        // A user's erasure ends the flows that name them.
        const named = flow(google, { intent: 'link', userId: u.id })
        await e.store.federationFlows.insert(named)
        await e.store.users.erase(u)
        expect(await e.store.federationFlows.findByState(named.stateHash)).toBeNull()
        expect(await e.store.federationFlows.findByState(later.stateHash)).toEqual(later)
      }))

      it('writes identity.linked and identity.unlinked with the change, none for an erased user or a deleted provider; session.created names the provider', withEngine(async ({ store }) => {
        const { t, u } = await seeded(store)
        const [google, github] = [provider(t.id), provider(t.id, 'GitHub', { type: 'github' })]
        for (const p of [google, github]) await store.providers.insert(p)
        await newEvents(store)
        const linked = identity(google, u, { subject: 'sub-ada' })
        await store.identities.insert(linked, audit('identity.linked', u))
        const about = { identity: { id: linked.id, providerId: google.id, subject: 'sub-ada', email: u.email }, user: { id: u.id } }
        expect(await newEvents(store)).toEqual([{ type: 'identity.linked', data: about }])
        expect(await store.identities.deleteUnlessLast(linked.id, u.id, audit('identity.unlinked', u))).toBe('deleted')
        expect(await newEvents(store)).toEqual([{ type: 'identity.unlinked', data: about }])
        // Refused or written nothing: no event.
        const only = await passwordless(store, t.id, 'only@example.com')
        const onlyGoogle = identity(google, only, { email: null })
        await store.identities.insert(onlyGoogle, audit('identity.linked', only))
        await store.identities.insert(identity(google, u, { subject: onlyGoogle.subject }), audit('identity.linked', u))
        await store.identities.deleteUnlessLast(onlyGoogle.id, only.id, audit('identity.unlinked', only))
        expect(await newEvents(store)).toEqual([{ type: 'identity.linked', data: { identity: { id: onlyGoogle.id, providerId: google.id, subject: onlyGoogle.subject, email: null }, user: { id: only.id } } }, { type: 'user.created', data: expect.anything() }])
        // An identity that goes with its user (erasure) or its provider (deletion) is no event of its own.
        await store.identities.insert(identity(github, u), audit('identity.linked', u))
        await newEvents(store)
        expect(await store.providers.delete(github.id)).toBe(true)
        expect(await store.users.erase(only)).toBe(true)
        expect((await newEvents(store)).map((event) => event.type)).toEqual(['user.deleted'])
        // A session signed in through a provider names it; another does not.
        const [through, direct] = [family(u), family(u)]
        const login = { limitResets: [], limitRefunds: [], audit: audit('login.succeeded', u) }
        expect(await store.sessions.createFamily(through, token(through.id), 0, { ...login, providerId: google.id })).toBe(true)
        expect(await store.sessions.createFamily(direct, token(direct.id), 0, login)).toBe(true)
        expect(await newEvents(store)).toEqual([
          { type: 'session.created', data: { session: { id: through.id, clientId: null, providerId: google.id }, user: { id: u.id } } },
          { type: 'session.created', data: { session: { id: direct.id, clientId: null, providerId: null }, user: { id: u.id } } },
        ])
      }))
    })

    describe('webhooks', () => {
      const endpoint = (tenantId: string, id = Bun.randomUUIDv7()): WebhookEndpoint => ({ id, tenantId, url: 'https://hooks.example.com/x', eventTypes: ['*'], description: '', sealedSecret: 'v1.x', previousSealedSecret: null, previousSecretUntil: null, disabledAt: null, disabledReason: null, failingSince: null, createdAt: now, updatedAt: now })
      const fanOut = (store: Store, at = now) => store.webhooks.fanOut(100, at, (event, endpoints) => deliveriesOf(event, endpoints, at))

      it('writes an event with the change, none for a change that rolls back, and fans each out once when two instances race', withEngine(async (e) => {
        const { t, u } = await seeded(e.store)
        const [a, b] = [endpoint(t.id), endpoint(t.id)]
        for (const ep of [a, b]) await e.store.webhooks.insertEndpoint(ep)
        expect(await e.store.users.insertMany([user(t.id, 'new@example.com'), user(t.id, u.email)], [])).toBe(false)
        await e.store.users.setDisabledAt(u.id, now, now)
        const second = e.second()
        const fanned = await Promise.all([fanOut(e.store), fanOut(second), fanOut(e.store), fanOut(second)])
        // user.created and user.disabled, each fanned out once, to both endpoints
        expect(fanned.reduce((x, y) => x + y, 0)).toBe(2)
        const deliveries = [...(await e.store.webhooks.listDeliveries(a.id, { limit: 10 })), ...(await e.store.webhooks.listDeliveries(b.id, { limit: 10 }))]
        expect(deliveries.map((d) => d.eventType).sort()).toEqual(['user.created', 'user.created', 'user.disabled', 'user.disabled'])
        expect((await e.store.webhooks.stats()).eventsWaiting).toBe(0)
      }))

      it('hands each due delivery to one claim of many racing, one at a time per endpoint, and again once the lease runs out', withEngine(async (e) => {
        const { t } = await seeded(e.store)
        const [a, b] = [endpoint(t.id), endpoint(t.id)]
        for (const ep of [a, b]) await e.store.webhooks.insertEndpoint(ep)
        await e.store.users.insert(user(t.id, 'two@example.com'))
        await fanOut(e.store)
        const second = e.second()
        const claims = (await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? second : e.store).webhooks.claimNext(now, 15_000, 2)))).filter((c) => c !== null)
        // four deliveries (two events, two endpoints); one in flight per endpoint
        expect(claims.map((c) => c!.endpoint.id).sort()).toEqual([a.id, b.id].sort())
        expect(await e.store.webhooks.claimNext(now + 1, 15_000, 2)).toBeNull()
        const [first] = claims
        await e.store.webhooks.recordFailure(first!.delivery.id, first!.endpoint.id, first!.delivery.leaseUntil!, { at: now, status: 503, error: 'answered 503', response: 'busy' }, now + 5_000)
        const next = await e.store.webhooks.claimNext(now + 1, 15_000, 2)
        expect(next).toMatchObject({ endpoint: { id: first!.endpoint.id } })
        // the other endpoint's worker died: its lease runs out and the delivery is claimed again
        const retaken = await second.webhooks.claimNext(now + 15_000, 15_000, 2)
        expect(retaken).toMatchObject({ endpoint: { id: claims[1]!.endpoint.id } })
        expect(await e.store.webhooks.claimNext(now + 15_000, 15_000, 2)).toBeNull()
        expect((await e.store.webhooks.getEndpoint(first!.endpoint.id))!.failingSince).toBe(now)
      }))

      it('writes an attempt\'s outcome only while its claim holds the delivery: a late one after a takeover is dropped', withEngine(async (e) => {
        const { t } = await seeded(e.store)
        await fanOut(e.store) // (the seeded user's event: no endpoint yet, no delivery)
        const a = endpoint(t.id)
        await e.store.webhooks.insertEndpoint(a)
        await e.store.users.insert(user(t.id, 'late@example.com'))
        await fanOut(e.store)
        const slow = (await e.store.webhooks.claimNext(now, 15_000, 2))!
        expect(slow.delivery.leaseUntil).toBe(now + 15_000)
        // the slow attempt outlasts its lease: another worker takes the delivery over
        const second = e.second()
        const taken = (await second.webhooks.claimNext(now + 15_000, 15_000, 2))!
        expect(taken.delivery.id).toBe(slow.delivery.id)
        // the slow attempt's failure neither puts the delivery back nor marks the endpoint failing
        expect(await e.store.webhooks.recordFailure(slow.delivery.id, a.id, slow.delivery.leaseUntil!, { at: now + 16_000, status: null, error: 'no answer', response: null }, now + 20_000)).toBeNull()
        expect(await e.store.webhooks.getDelivery(slow.delivery.id)).toMatchObject({ status: 'sending', leaseUntil: now + 30_000, lastError: null })
        expect((await e.store.webhooks.getEndpoint(a.id))!.failingSince).toBeNull()
        expect(await second.webhooks.claimNext(now + 16_000, 15_000, 2)).toBeNull()
        // nor its success; nor its shutdown requeue
        expect(await e.store.webhooks.recordSuccess(slow.delivery.id, a.id, slow.delivery.leaseUntil!, { at: now + 16_000, status: 204, error: null, response: null })).toBe(false)
        await e.store.webhooks.requeue(slow.delivery.id, slow.delivery.leaseUntil!, now + 16_000)
        expect(await e.store.webhooks.getDelivery(slow.delivery.id)).toMatchObject({ status: 'sending', attempts: 2 })
        // the attempt that holds the claim records its success, and a late failure cannot undo it
        expect(await second.webhooks.recordSuccess(taken.delivery.id, a.id, taken.delivery.leaseUntil!, { at: now + 17_000, status: 200, error: null, response: 'ok' })).toBe(true)
        expect(await e.store.webhooks.recordFailure(slow.delivery.id, a.id, slow.delivery.leaseUntil!, { at: now + 18_000, status: 500, error: 'answered 500', response: null }, now + 20_000)).toBeNull()
        expect(await e.store.webhooks.getDelivery(slow.delivery.id)).toMatchObject({ status: 'succeeded', lastStatus: 200, deliveredAt: now + 17_000 })
      }))

      it('takes over a crashed worker\'s delivery before deliveries queued after it was first due', withEngine(async (e) => {
        const { t } = await seeded(e.store)
        await fanOut(e.store) // (the seeded user's event: no endpoint yet, no delivery)
        const [a, b] = [endpoint(t.id), endpoint(t.id)]
        for (const ep of [a, b]) await e.store.webhooks.insertEndpoint(ep)
        await e.store.users.insert(user(t.id, 'first@example.com'))
        await fanOut(e.store)
        const crashed = (await e.store.webhooks.claimNext(now, 15_000, 2))!
        const delivered = (await e.store.webhooks.claimNext(now, 15_000, 2))!
        expect(await e.store.webhooks.recordSuccess(delivered.delivery.id, delivered.endpoint.id, delivered.delivery.leaseUntil!, { at: now + 1, status: 204, error: null, response: null })).toBe(true)
        // events queued while the crashed worker's lease runs
        await e.store.users.insert(user(t.id, 'second@example.com'))
        await fanOut(e.store, now + 10_000)
        const taken = (await e.second().webhooks.claimNext(now + 15_000, 15_000, 2))!
        expect(taken.delivery.id).toBe(crashed.delivery.id)
        expect(taken.delivery.attempts).toBe(2)
      }))

      it('gives a tenant at most its share of deliveries in flight, across instances: the next claim goes to another tenant', withEngine(async (e) => {
        const { t } = await seeded(e.store)
        const other = tenant()
        expect(await e.store.tenants.insert(other)).toBe(true)
        const busy = [endpoint(t.id), endpoint(t.id), endpoint(t.id)]
        const calm = endpoint(other.id)
        for (const ep of [...busy, calm]) await e.store.webhooks.insertEndpoint(ep)
        await e.store.users.insert(user(t.id, 'first@example.com'))
        await fanOut(e.store, now - 10) // the busy tenant's three deliveries are due first
        await e.store.users.insert(user(other.id, 'other@example.com'))
        await fanOut(e.store)
        const second = e.second()
        const claims = (await Promise.all([e.store, second, e.store, second].map((s) => s.webhooks.claimNext(now, 15_000, 2)))).filter((c) => c !== null)
        // two of the busy tenant's (its share), then the other tenant's, though the busy one's third is older
        expect(claims.filter((c) => c!.endpoint.tenantId === t.id)).toHaveLength(2)
        expect(claims.filter((c) => c!.endpoint.id === calm.id)).toHaveLength(1)
        expect(claims).toHaveLength(3)
        // once one of its attempts ends, the busy tenant's third is claimed
        const done = claims.find((c) => c!.endpoint.tenantId === t.id)!
        expect(await e.store.webhooks.recordSuccess(done.delivery.id, done.endpoint.id, done.delivery.leaseUntil!, { at: now + 1, status: 204, error: null, response: null })).toBe(true)
        const third = await e.store.webhooks.claimNext(now + 1, 15_000, 2)
        expect(third!.endpoint.tenantId).toBe(t.id)
        expect(claims.map((c) => c!.endpoint.id)).not.toContain(third!.endpoint.id)
      }))

      it('redelivers a dead delivery once, and prunes delivered ones and their events after retention', withEngine(async (e) => {
        const { t } = await seeded(e.store)
        expect(await fanOut(e.store)).toBe(1) // no endpoint yet: no delivery
        const a = endpoint(t.id)
        await e.store.webhooks.insertEndpoint(a)
        await e.store.users.insert(user(t.id, 'three@example.com'))
        await fanOut(e.store)
        const claimed = (await e.store.webhooks.claimNext(now, 15_000, 2))!
        await e.store.webhooks.recordFailure(claimed.delivery.id, a.id, claimed.delivery.leaseUntil!, { at: now, status: null, error: 'timeout', response: null }, null)
        expect((await e.store.webhooks.getDelivery(claimed.delivery.id))!.status).toBe('dead')
        const again = await Promise.all([e.store, e.second()].map((s) => s.webhooks.redeliver(claimed.delivery.id, now + 1, now + 10)))
        expect(again.filter((d) => d !== null)).toHaveLength(1)
        const retried = (await e.store.webhooks.claimNext(now + 1, 15_000, 2))!
        await e.store.webhooks.recordSuccess(retried.delivery.id, a.id, retried.delivery.leaseUntil!, { at: now + 2, status: 204, error: null, response: null })
        expect(await e.store.webhooks.getEndpoint(a.id)).toMatchObject({ failingSince: null })
        // An event with a delivery stays while the delivery does; each kind by its own pick.
        expect(await e.store.prune('deliveredWebhookEvents', now + 1, 10)).toBe(0)
        expect(await e.store.prune('webhookDeliveries', now + 1, 10)).toBe(0)
        expect(await e.store.prune('webhookDeliveries', now + 3, 10)).toBe(1)
        expect(await e.store.prune('webhookEvents', now + 1, 10)).toBe(1)
        expect(await e.store.prune('deliveredWebhookEvents', now + 1, 10)).toBe(1)
        expect(await e.store.webhooks.stats()).toEqual({ byStatus: { pending: 0, sending: 0, succeeded: 0, dead: 0 }, oldestPendingAt: null, eventsWaiting: 0 })
      }))
    })
  })
}
