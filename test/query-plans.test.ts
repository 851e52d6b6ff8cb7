// Every query a request path runs finds its rows through an index, on the engine under test
// (SQLite, and PostgreSQL in the second pass): a full scan of a table that grows with the users
// and their history (users, sessions, audit, mail…) would make a login or a refresh slower with
// every month of data (issue 37). The store's SQL is not listed by hand: each request path runs
// once through the HTTP API over a small seeded database (bench/seed.ts), every SQL text the
// store runs meanwhile is recorded (src/db/query-observer.ts) and EXPLAINed.
//
// SQLite: no `SCAN <table>` of a growing table (a full index walk, `SCAN t USING INDEX`, counts
// too); its planner has no statistics (authd never runs ANALYZE), so the plan is the same at
// any size. PostgreSQL: no Seq Scan of one, and no index scan without an index condition (a
// full walk of an index), each statement planned with the values the request bound, over the
// seeded rows' statistics, with enable_seqscan off: on tables this small the planner rightly
// prefers a sequential scan, so the question asked is whether an index serves the query.
//
// A new request path is one line in REQUEST_PATHS; a new small, bounded table is one word in
// SMALL_TABLES.
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createApiKey } from '../src/core/api-keys'
import { totpCode, totpStep } from '../src/core/mfa/totp'
import { pruneExpiredData } from '../src/core/retention'
import { observeQueries } from '../src/db/query-observer'
import { postgresSink, sqliteSink } from '../bench/seed-sinks'
import { seedDatabase } from '../bench/seed'
import { createTestContext, PASSWORD, requestOtp, type TestContext } from './helpers'
import { SoftwareAuthenticator } from './software-authenticator'

/** Tables that stay small whatever the number of users (one row per tenant, key or server secret). */
const SMALL_TABLES = new Set(['tenants', 'api_keys', 'signing_keys', 'server_secrets', '__drizzle_migrations'])

/** Tables the seed generator does not fill yet (the OpenID Provider's and the webhooks', which
 *  landed beside it): empty, they give PostgreSQL's planner nothing to plan with, and it walks a
 *  primary key with enable_seqscan off. SQLite's plans of their queries are still judged. Left
 *  for issue 37: seed them, add their request paths, and drop this set. */
const UNSEEDED_ON_POSTGRES = new Set(['oidc_clients', 'oidc_codes', 'oidc_consents', 'webhook_endpoints', 'webhook_events', 'webhook_deliveries'])

const ORIGIN = 'https://auth.example.com'
const AUTH = '/api/v1/auth'

interface Journey {
  ctx: TestContext
  email: string
  adminKey: string
  authenticator: SoftwareAuthenticator
  /** The refresh cookie of the latest login. */
  cookie?: string
  accessToken?: string
  mfaEmail: string
  totpSecret?: string
}

const bearer = (j: Journey) => ({ authorization: `Bearer ${j.accessToken}` })
const passwordLogin = async (j: Journey, email = j.email) => {
  const res = await j.ctx.call('POST', `${AUTH}/login`, { body: { email, password: PASSWORD } })
  expect(res.status).toBe(201)
  j.cookie = res.refreshCookie
  j.accessToken = res.json.data.response.accessToken
  return res
}
const admin = (j: Journey, path: string) => j.ctx.call('GET', `/api/v1/admin${path}`, { apiKey: j.adminKey })
const ok = async (response: Promise<{ status: number }>, status = 200) => expect((await response).status).toBe(status)

/** Each request path and the calls that make it, in order (a path may rely on the ones before). */
const REQUEST_PATHS: Array<[string, (j: Journey) => Promise<unknown>]> = [
  ['login', (j) => passwordLogin(j)],
  // The first such login reads the stored hashes' parameters (the dummy hash is made like theirs).
  ['login with an unknown address', async (j) => ok(j.ctx.call('POST', `${AUTH}/login`, { body: { email: 'nobody@example.com', password: PASSWORD } }), 401)],
  ['refresh', async (j) => ok(j.ctx.call('GET', `${AUTH}/refresh-token`, { cookie: `refreshToken=${j.cookie}`, apiKey: null }), 201)],
  ['signed-in user and its sessions', async (j) => (await ok(j.ctx.call('GET', `${AUTH}/me`, { headers: bearer(j) })), ok(j.ctx.call('GET', `${AUTH}/sessions`, { headers: bearer(j) })))],
  ['logout', async (j) => ok(j.ctx.call('POST', `${AUTH}/logout`, { cookie: `refreshToken=${j.cookie}`, apiKey: null }))],
  ['forgot password and reset', async (j) => ok(j.ctx.call('POST', `${AUTH}/change-password`, { body: { email: j.email, newPassword: PASSWORD, otp: await requestOtp(j.ctx, j.email) } }))],
  [
    'passkey registration',
    async (j) => {
      await passwordLogin(j)
      const { data } = (await j.ctx.call('POST', `${AUTH}/passkeys/register/options`, { headers: bearer(j) })).json
      await ok(j.ctx.call('POST', `${AUTH}/passkeys/register`, { headers: bearer(j), body: { challengeId: data.challengeId, response: j.authenticator.register(data.options) } }), 201)
    },
  ],
  [
    'passkey sign-in',
    async (j) => {
      const { data } = (await j.ctx.call('POST', `${AUTH}/passkeys/login/options`, { body: {} })).json
      await ok(j.ctx.call('POST', `${AUTH}/passkeys/login`, { body: { challengeId: data.challengeId, response: j.authenticator.assert(data.options) } }), 201)
    },
  ],
  [
    'TOTP enrolment',
    async (j) => {
      await passwordLogin(j, j.mfaEmail)
      j.totpSecret = (await j.ctx.call('POST', `${AUTH}/mfa/totp`, { headers: bearer(j) })).json.data.secret
      await ok(j.ctx.call('POST', `${AUTH}/mfa/totp/confirm`, { headers: bearer(j), body: { code: totpCode(j.totpSecret!, totpStep(j.ctx.clock.now())) } }))
    },
  ],
  [
    'login with a second factor',
    async (j) => {
      j.ctx.clock.advance(30) // the next step's code: the confirmation spent this one's
      const challenged = await j.ctx.call('POST', `${AUTH}/login`, { body: { email: j.mfaEmail, password: PASSWORD } })
      const challengeToken = challenged.json.data.response.challengeToken
      await ok(j.ctx.call('POST', `${AUTH}/mfa/verify`, { body: { challengeToken, code: totpCode(j.totpSecret!, totpStep(j.ctx.clock.now())) } }), 201)
    },
  ],
  ['admin user listing', async (j) => {
    const first = (await admin(j, '/users?limit=20')).json.data
    await ok(admin(j, `/users?limit=20&cursor=${first.nextCursor}`))
    await ok(admin(j, `/users?email=${encodeURIComponent(j.email)}`))
  }],
  ['audit query', async (j) => {
    const userId = (await admin(j, `/users?email=${encodeURIComponent(j.email)}`)).json.data.items[0].id
    for (const query of ['', `?userId=${userId}`, '?type=login.*', `?type=login.succeeded&since=${new Date(j.ctx.clock.now() - 86_400_000).toISOString()}`]) await ok(admin(j, `/audit${query}`))
  }],
]

/** Statements worth planning: reads and writes of rows (not the migrations' DDL, not BEGIN). */
const isRowQuery = (sql: string) => /^\s*(select|insert|update|delete|with)\b/i.test(sql) && !sql.includes('__drizzle_migrations')

/** The scans of growing tables in one statement's plan, as readable lines. */
type Explain = (sql: string, params?: readonly unknown[]) => Promise<string[]>

function sqliteExplainer(path: string): { explain: Explain; close(): void } {
  const db = new Database(path, { readonly: true })
  const tables = new Set((db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name))
  return {
    async explain(sql) {
      const plan = db.query(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>
      return plan
        .map((row) => row.detail)
        .filter((detail) => {
          const table = /^SCAN (\w+)/.exec(detail)?.[1]
          return table !== undefined && tables.has(table) && !SMALL_TABLES.has(table)
        })
    },
    close: () => db.close(),
  }
}

async function postgresExplainer(url: string): Promise<{ explain: Explain; close(): Promise<void> }> {
  const sql = new SQL(url, { max: 1 })
  await sql.unsafe('SET enable_seqscan = off')
  return {
    // With the values the request bound: planned as PostgreSQL planned it then (a custom plan).
    async explain(text, params = []) {
      const [row] = (await sql.unsafe(`EXPLAIN (FORMAT JSON) ${text}`, params as unknown[])) as Array<{ 'QUERY PLAN': unknown }>
      const found: string[] = []
      // An index walked in order under a Limit stops after the rows it needs (the newest events
      // of a tenant that holds half the log are found fastest that way): not a full scan.
      const walk = (node: Record<string, unknown>, limited: boolean) => {
        const table = node['Relation Name'] as string | undefined
        const type = node['Node Type'] as string
        if (table && !SMALL_TABLES.has(table) && !UNSEEDED_ON_POSTGRES.has(table)) {
          if (type === 'Seq Scan') found.push(`Seq Scan on ${table}`)
          if ((type === 'Index Scan' || type === 'Index Only Scan') && !node['Index Cond'] && !limited) found.push(`${type} using ${node['Index Name']} on ${table} without an index condition`)
        }
        for (const child of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child, limited || type === 'Limit')
      }
      const plans = (typeof row!['QUERY PLAN'] === 'string' ? JSON.parse(row!['QUERY PLAN']) : row!['QUERY PLAN']) as Array<{ Plan: Record<string, unknown> }>
      walk(plans[0]!.Plan, false)
      return found
    },
    close: () => sql.close(),
  }
}

describe('request-path queries use an index', () => {
  /** Per request path, each SQL text it ran with the values of its first run. */
  const recorded = new Map<string, Map<string, readonly unknown[] | undefined>>()
  let ctx: TestContext
  let explainer: { explain: Explain; close(): unknown }

  beforeAll(async () => {
    let current = new Map<string, readonly unknown[] | undefined>()
    recorded.set('start-up (the store prepares its statements)', current)
    observeQueries((sql, params) => {
      if (isRowQuery(sql) && !current.has(sql)) current.set(sql, params)
    })
    ctx = await createTestContext({ AUTHD_PUBLIC_URL: ORIGIN, AUTHD_REFUSAL_HOLD_MS: '0' })
    const email = (await ctx.addUser({ email: 'ada@example.com' })).email
    const mfaEmail = (await ctx.addUser({ email: 'grace@example.com' })).email
    const { key: adminKey } = await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'admin', scope: 'admin' })
    // A small history beside them, in the test's tenant and others: enough rows for the plans
    // to be those of a used database (PostgreSQL's come from its statistics).
    const { postgresUrl, databasePath } = ctx.runtime.config
    const sink = postgresUrl ? await postgresSink(postgresUrl) : sqliteSink(databasePath)
    await seedDatabase(sink, { users: 2000, largeTenantId: ctx.tenantId, argon2: { memoryCost: 64, timeCost: 1 } })
    await sink.close()
    const journey: Journey = { ctx, email, mfaEmail, adminKey, authenticator: new SoftwareAuthenticator('auth.example.com', ORIGIN) }
    for (const [name, run] of REQUEST_PATHS) {
      recorded.set(name, (current = new Map()))
      await run(journey)
    }
    recorded.set('retention', (current = new Map()))
    await pruneExpiredData(ctx.runtime, { pauseMs: 0 })
    observeQueries(null)
    explainer = postgresUrl ? await postgresExplainer(postgresUrl) : sqliteExplainer(databasePath)
  })
  afterAll(async () => {
    observeQueries(null)
    await explainer?.close()
    await ctx?.close()
  })

  it('records the SQL of every request path', () => {
    for (const [name] of REQUEST_PATHS) expect({ name, queries: recorded.get(name)!.size > 0 }).toEqual({ name, queries: true })
  })

  for (const name of ['start-up (the store prepares its statements)', ...REQUEST_PATHS.map(([name]) => name), 'retention']) {
    it(name, async () => {
      const scans: Array<{ sql: string; scans: string[] }> = []
      for (const [sql, params] of recorded.get(name) ?? []) {
        const found = await explainer.explain(sql, params)
        if (found.length > 0) scans.push({ sql: sql.replace(/\s+/g, ' ').trim(), scans: found })
      }
      expect(scans).toEqual([])
    })
  }
})
