// Every query a request path runs finds its rows through an index, on the engine under test
// (SQLite, and PostgreSQL in the second pass): a full scan of a table that grows with the users
// and their history (users, sessions, audit, mail…) would make a login or a refresh slower with
// every month of data (issue 37). The store's SQL is not listed by hand: each request path runs
// once through the HTTP API over a small seeded database (bench/seed.ts), every SQL text the
// store runs meanwhile is recorded (src/db/query-observer.ts) and EXPLAINed.
//
// SQLite: no `SCAN <table>` of a growing table (a full index walk, `SCAN t USING INDEX`, counts
// too, whatever alias the statement gives the table), and retention's picks each driven by a
// time range; its planner has no statistics (authd never runs ANALYZE), so the plan is the
// same at any size. PostgreSQL: no Seq Scan of one, and no index scan without a condition on
// the index's leading column (a full walk of an index) unless a Limit stops it, each statement
// planned with the values the request bound, over the seeded rows' statistics, with sequential
// scans, hash and merge joins off: on tables this small the planner rightly prefers those, so
// the question asked is whether an index serves each table the query reaches.
//
// A new request path is one line in REQUEST_PATHS; a new small, bounded table is one word in
// SMALL_TABLES.
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createApiKey } from '../src/core/tenants/api-keys'
import { createClient } from '../src/core/oidc/clients'
import { createEndpoint } from '../src/core/webhooks/endpoints'
import { setForwardAuthDomains } from '../src/core/forward-auth/domains'
import { addAccessRule } from '../src/core/forward-auth/rules'
import { WebhookWorker } from '../src/core/webhooks/worker'
import { silentLogger } from '../src/log'
import { peerAddresses } from '../src/server/plugins/client-ip'
import { totpCode, totpStep } from '../src/core/mfa/totp'
import { pruneExpiredData } from '../src/core/retention/retention'
import { observeQueries } from '../src/db/query-observer'
import { postgresSink, sqliteSink } from '../bench/seed-sinks'
import { seedDatabase } from '../bench/seed'
import { createTestContext, PASSWORD, requestOtp, TEST_ENGINE, type TestContext } from './helpers'
import { CALLBACK, UserAgent } from './oidc-journey'
import { formOn } from './pages'
import { SoftwareAuthenticator } from './software-authenticator'
import { startReceiver, until } from './webhook-receiver'

/** Tables that stay small whatever the number of users (rows per tenant, key or server secret:
 *  a tenant has at most 20 webhook endpoints and a bounded list of access rules; its OpenID
 *  clients are its applications). */
const SMALL_TABLES = new Set(['tenants', 'api_keys', 'signing_keys', 'server_secrets', 'webhook_endpoints', 'oidc_clients', 'access_rules', '__drizzle_migrations'])

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
  /** A browser on authd's pages (into the app's handler), for the OpenID Provider's flows. */
  browser: UserAgent
  firstParty: { id: string; secret: string }
  thirdParty: { id: string; secret: string }
  /** The OpenID grant's latest refresh and access tokens. */
  grant?: { refreshToken: string; accessToken: string }
  webhooks: { endpointId: string; receiver: ReturnType<typeof startReceiver> }
}

const issuerOf = (j: Journey) => `/t/${j.ctx.tenantId}`
/** An authorization request of `client` with PKCE; the code authd answers with, after the browser's sign-in or consent. */
async function authorize(j: Journey, client: { id: string }, signIn: boolean) {
  const verifier = 'v'.repeat(43)
  const challenge = new Bun.CryptoHasher('sha256').update(verifier).digest('base64url')
  const query = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: CALLBACK, scope: 'openid profile email offline_access', code_challenge: challenge, code_challenge_method: 'S256', state: 's', nonce: 'n' })
  let answer = await j.browser.follow(`${issuerOf(j)}/authorize?${query}`)
  if (signIn) answer = await j.browser.signIn(answer, j.email)
  if (answer.html.includes('/authorize/consent')) {
    const form = formOn(answer.html, '/authorize/consent')
    answer = await j.browser.follow(form.action, { form: { ...form.hidden, decision: 'allow' } })
  }
  expect(answer.location ?? answer.html.slice(0, 300)).toStartWith(CALLBACK)
  return { code: new URL(answer.location!).searchParams.get('code')!, verifier }
}
/** A token endpoint request of `client` (client_secret_basic). */
async function tokenRequest(j: Journey, client: { id: string; secret: string }, form: Record<string, string>) {
  const res = await j.ctx.call('POST', `${issuerOf(j)}/token`, {
    apiKey: null,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${client.id}:${client.secret}`)}` },
    rawBody: new URLSearchParams(form).toString(),
  })
  expect(res.status).toBe(200)
  j.grant = { refreshToken: res.json.refresh_token, accessToken: res.json.access_token }
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
  [
    'OpenID sign-in and code exchange',
    async (j) => {
      const { code, verifier } = await authorize(j, j.firstParty, true)
      await tokenRequest(j, j.firstParty, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier })
    },
  ],
  [
    'OpenID refresh, userinfo and revocation',
    async (j) => {
      await tokenRequest(j, j.firstParty, { grant_type: 'refresh_token', refresh_token: j.grant!.refreshToken })
      await ok(j.ctx.call('GET', `${issuerOf(j)}/userinfo`, { apiKey: null, headers: { authorization: `Bearer ${j.grant!.accessToken}` } }))
      const revoked = await j.ctx.call('POST', `${issuerOf(j)}/revoke`, {
        apiKey: null,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${j.firstParty.id}:${j.firstParty.secret}`)}` },
        rawBody: new URLSearchParams({ token: j.grant!.refreshToken }).toString(),
      })
      expect(revoked.status).toBe(200)
    },
  ],
  [
    "a third-party client's consent and the account's apps page",
    async (j) => {
      const { code, verifier } = await authorize(j, j.thirdParty, false)
      await tokenRequest(j, j.thirdParty, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier })
      const apps = await j.browser.follow(`${issuerOf(j)}/account/apps`)
      expect(apps.html).toContain('Calendar')
    },
  ],
  [
    'forward-auth check',
    async (j) => {
      await setForwardAuthDomains(j.ctx.runtime, j.ctx.tenantId, ['example.com'])
      await addAccessRule(j.ctx.runtime, j.ctx.tenantId, { domain: 'app.example.com', policy: 'one_factor' })
      await j.browser.signIn(await j.browser.follow(`/t/${j.ctx.tenantId}/login?prompt=login`), j.email)
      const cookie = `authd_session_${j.ctx.tenantId}=${j.browser.cookies.get(`authd_session_${j.ctx.tenantId}`)}`
      const original = { 'x-forwarded-method': 'GET', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example.com', 'x-forwarded-uri': '/' }
      const checked = await j.ctx.call('GET', `/t/${j.ctx.tenantId}/authz/forward-auth`, { apiKey: null, cookie, headers: original })
      expect({ status: checked.status, user: checked.headers.get('remote-user') }).toEqual({ status: 200, user: j.email })
    },
  ],
  [
    'webhook fan-out, delivery and the deliveries listing',
    async (j) => {
      const worker = new WebhookWorker(j.ctx.runtime, silentLogger, { pollMs: 25 })
      worker.start()
      try {
        await until('a delivery received', () => j.webhooks.receiver.received.length > 0)
      } finally {
        await worker.stop()
      }
      await ok(admin(j, `/webhooks/${j.webhooks.endpointId}/deliveries?limit=20`))
    },
  ],
]

/** Statements worth planning: reads and writes of rows (not the migrations' DDL, not BEGIN). */
const isRowQuery = (sql: string) => /^\s*(select|insert|update|delete|with)\b/i.test(sql) && !sql.includes('__drizzle_migrations')

/** The scans of growing tables in one statement's plan, as readable lines. */
type Explain = (sql: string, params?: readonly unknown[]) => Promise<string[]>

function sqliteExplainer(path: string): { explain: Explain; plan(sql: string): string[]; close(): void } {
  const db = new Database(path, { readonly: true })
  const tables = new Set((db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name))
  return {
    async explain(sql) {
      const plan = db.query(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>
      // The plan names a table by its alias in the statement (`FROM webhook_deliveries d`).
      const aliases = new Map<string, string>()
      for (const [, table, alias] of sql.matchAll(/\b(?:from|join)\s+[`"]?(\w+)[`"]?(?:\s+(?:as\s+)?[`"]?(\w+)[`"]?)?/gi)) {
        if (alias && !/^(where|on|join|inner|left|cross|using|group|order|limit|set|natural)$/i.test(alias)) aliases.set(alias, table!)
      }
      return plan
        .map((row) => row.detail)
        .filter((detail) => {
          const named = /^SCAN (\w+)/.exec(detail)?.[1]
          const table = named && (aliases.get(named) ?? named)
          return table !== undefined && tables.has(table) && !SMALL_TABLES.has(table)
        })
    },
    plan: (sql) => (db.query(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((row) => row.detail),
    close: () => db.close(),
  }
}

async function postgresExplainer(url: string): Promise<{ explain: Explain; close(): Promise<void> }> {
  const sql = new SQL(url, { max: 1 })
  // Nor hash or merge joins: a join served by an index is a look-up per outer row, and the
  // question is whether that is possible (on the small test data a hash join of a whole index
  // is cheaper, and the planner rightly prefers it; at a million rows it does not).
  await sql.unsafe('SET enable_seqscan = off')
  await sql.unsafe('SET enable_hashjoin = off')
  await sql.unsafe('SET enable_mergejoin = off')
  // Each index's leading column: a condition on a later column alone is an Index Cond to
  // PostgreSQL, checked against every entry of the index (a full walk).
  const leading = new Map(
    ((await sql`SELECT i.relname AS index, a.attname AS column FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
        JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0] WHERE i.relnamespace = current_schema()::regnamespace`) as Array<{ index: string; column: string }>).map((r) => [r.index, r.column]),
  )
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
        if (table && !SMALL_TABLES.has(table)) {
          if (type === 'Seq Scan') found.push(`Seq Scan on ${table}`)
          if ((type === 'Index Scan' || type === 'Index Only Scan') && !limited) {
            const condition = node['Index Cond'] as string | undefined
            const first = leading.get(node['Index Name'] as string)
            if (!condition) found.push(`${type} using ${node['Index Name']} on ${table} without an index condition`)
            else if (first && !new RegExp(`\\b${first}\\b`).test(condition)) found.push(`${type} using ${node['Index Name']} on ${table} without its leading column ${first} (${condition})`)
          }
        }
        // A Limit stops only the rows that stream up to it: its outer input, not the inner side
        // of a nested loop (run again for each outer row) or a subplan, nor what lies under a
        // node that reads all its input before it answers (a hash, a sort, an aggregate).
        const readsAll = type === 'Hash' || type === 'Sort' || type === 'Aggregate' || type === 'Materialize'
        for (const child of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) {
          walk(child, !readsAll && child['Parent Relationship'] === 'Outer' && (limited || type === 'Limit'))
        }
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
    ctx = await createTestContext({ AUTHD_PUBLIC_URL: ORIGIN, AUTHD_REFUSAL_HOLD_MS: '0', AUTHD_WEBHOOKS_ALLOW_INSECURE: '1', AUTHD_TRUSTED_PROXIES: '127.0.0.1' })
    const email = (await ctx.addUser({ email: 'ada@example.com' })).email
    const mfaEmail = (await ctx.addUser({ email: 'grace@example.com' })).email
    const { key: adminKey } = await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'admin', scope: 'admin' })
    // A small history beside them, in the test's tenant and others: enough rows for the plans
    // to be those of a used database (PostgreSQL's come from its statistics).
    const { postgresUrl, databasePath } = ctx.runtime.config
    const sink = postgresUrl ? await postgresSink(postgresUrl) : sqliteSink(databasePath)
    await seedDatabase(sink, { users: 2000, largeTenantId: ctx.tenantId, argon2: { memoryCost: 64, timeCost: 1 } })
    await sink.close()
    const client = async (name: string, firstParty: boolean) => {
      const { client, clientSecret } = await createClient(ctx.runtime, ctx.tenantId, { name, redirectUris: [CALLBACK], postLogoutRedirectUris: [], public: false, firstParty })
      return { id: client.id, secret: clientSecret! }
    }
    const receiver = startReceiver()
    const { endpoint, secret } = await createEndpoint(ctx.runtime, { tenantId: ctx.tenantId, url: receiver.url, events: '*' })
    receiver.state.secrets.push(secret)
    const app = ctx.app
    const browser = new UserAgent(ORIGIN, ORIGIN, async (request) => {
      peerAddresses.set(request, '127.0.0.1')
      return app.handle(request)
    })
    const journey: Journey = {
      ctx, email, mfaEmail, adminKey, browser,
      authenticator: new SoftwareAuthenticator('auth.example.com', ORIGIN),
      firstParty: await client('Wiki', true),
      thirdParty: await client('Calendar', false),
      webhooks: { endpointId: endpoint.id, receiver },
    }
    for (const [name, run] of REQUEST_PATHS) {
      recorded.set(name, (current = new Map()))
      await run(journey)
    }
    recorded.set('retention', (current = new Map()))
    await pruneExpiredData(ctx.runtime, { pauseMs: 0 })
    observeQueries(null)
    receiver.stop()
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

  // An index used only for a status (`status IN ('sent', 'expired')`) is no scan by the rule
  // above, yet retention's last batch of a round, which finds nothing, would walk every row of
  // the status under SQLite's write lock. So each pick goes by a time range: the SEARCH that
  // drives it (each one of a MULTI-INDEX OR) bounds a column by `<`. SQLite's plans need no
  // statistics, so they are the same at a million users.
  it.skipIf(TEST_ENGINE !== 'sqlite')("retention picks its rows by a range of their time (SQLite's plans)", () => {
    const explainer = sqliteExplainer(ctx.runtime.config.databasePath)
    try {
      const unbounded: Array<{ sql: string; drivers: string[] }> = []
      for (const [sql] of recorded.get('retention')!) {
        if (!/^\s*delete/i.test(sql)) continue
        const plan = explainer.plan(sql)
        const pick = plan.slice(plan.findIndex((line) => line.startsWith('LIST SUBQUERY')) + 1)
        const drivers = pick[0] === 'MULTI-INDEX OR' ? pick.filter((line, i) => pick[i - 1]?.startsWith('INDEX ')) : pick.slice(0, 1)
        if (drivers.length === 0 || drivers.some((line) => !/^SEARCH .*<\?/.test(line))) unbounded.push({ sql: sql.replace(/\s+/g, ' ').trim(), drivers })
      }
      expect(unbounded).toEqual([])
    } finally {
      explainer.close()
    }
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
