// Shared test set-up: each test builds its own app over a fresh SQLite file in a temp dir.
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, type Config } from '../src/config'
import { createApiKey } from '../src/core/tenants/api-keys'
import type { Clock } from '../src/core/clock'
import type { Store } from '../src/core/store'
import { createTenant } from '../src/core/tenants/tenants'
import { createUser, type NewUser } from '../src/core/accounts/users'
import { deliverDue } from '../src/core/mail/outbox'
import { silentLogger } from '../src/log'
import { mailTransportFor } from '../src/mail/transports'
import { openRuntime, type Runtime } from '../src/runtime'
import { createApp } from '../src/server/app'
import { peerAddresses } from '../src/server/plugins/client-ip'
import { createTestDatabase } from './pg'

export const PASSWORD = 'correct horse battery staple'

/** Real time, plus whatever a test has skipped ahead. */
export class TestClock implements Clock {
  private offsetMs = 0
  private frozenAt: number | undefined
  now() {
    return (this.frozenAt ?? Date.now()) + this.offsetMs
  }
  /** Stops real time (advance still moves it): for a test whose requests must all fall inside
   *  a block of a second or so, however slow the machine is. */
  freeze() {
    this.frozenAt = Date.now()
  }
  advance(seconds: number) {
    this.offsetMs += seconds * 1000
  }
}

const madeDirs: string[] = []
/** Removes every directory tempDir() made: test/setup.ts (bunfig.toml's preload) runs it once
 *  after the whole run, so a test that fails (or forgets) before its own clean-up leaves none. */
export function removeTempDirs() {
  for (const dir of madeDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/** A new directory under the system's temporary one, removed when the test run ends (if not before). */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'authd-test-'))
  madeDirs.push(dir)
  return dir
}

/** Cheap argon2 parameters: the tests exercise the flow, not the cost. */
export const FAST_HASHING = { argon2MemoryKib: 64, argon2TimeCost: 1 } satisfies Partial<Config>

export interface TestContext {
  runtime: Runtime
  app: ReturnType<typeof createApp>
  clock: TestClock
  tenantId: string
  apiKey: string
  dir: string
  /** Creates a user with PASSWORD in the test tenant. */
  addUser(fields?: Partial<NewUser>): Promise<{ userId: string; email: string }>
  call(method: string, path: string, init?: CallInit): Promise<CallResult>
  /** Runs the outbox once with the configured transport (real SMTP when AUTHD_SMTP_URL is set). */
  deliverMail(): Promise<number>
  close(): Promise<void>
}

export interface CallInit {
  body?: unknown
  rawBody?: string
  headers?: Record<string, string>
  apiKey?: string | null
  cookie?: string
  /** The socket peer this request comes from (default 127.0.0.1), as Bun.serve would record it. */
  peer?: string
}

export interface CallResult {
  status: number
  headers: Headers
  text: string
  json: any
  /** The value of the refreshToken cookie the response set, if any. */
  refreshCookie: string | undefined
  setCookie: string | null
}

/** The engine the HTTP and security scenarios run on: SQLite, or PostgreSQL for the second
 *  pass that `npm test` makes (scripts/test-postgres.ts sets AUTHD_TEST_ENGINE=postgres). */
export const TEST_ENGINE: 'sqlite' | 'postgres' = process.env.AUTHD_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'

export async function createTestContext(env: Record<string, string> = {}, configOverrides: Partial<Config> = {}): Promise<TestContext> {
  const dir = tempDir()
  const database = TEST_ENGINE === 'postgres' ? await createTestDatabase() : undefined
  const engine: Partial<Config> = database ? { postgresUrl: database.url, databasePath: '' } : {}
  const config = { ...loadConfig(env, { dataDir: dir }), ...FAST_HASHING, ...engine, ...configOverrides }
  const clock = new TestClock()
  const runtime = await openRuntime(config, { clock })
  const app = createApp(runtime, silentLogger)
  const tenant = await createTenant(runtime, { name: 'Acme' })
  const { key } = await createApiKey(runtime, { tenantId: tenant.id })
  let userCount = 0

  return {
    runtime,
    app,
    clock,
    tenantId: tenant.id,
    apiKey: key,
    dir,
    async addUser(fields = {}) {
      userCount++
      const { user } = await createUser(runtime, {
        tenantId: tenant.id,
        email: `user${userCount}@example.com`,
        firstName: 'Ada',
        lastName: 'Lovelace',
        password: PASSWORD,
        ...fields,
      })
      return { userId: user.id, email: user.email }
    },
    async call(method, path, init = {}) {
      const headers: Record<string, string> = { ...init.headers }
      if (init.apiKey !== null) headers['x-api-key'] ??= init.apiKey ?? key
      if (init.cookie) headers.cookie = init.cookie
      let body: string | undefined = init.rawBody
      if (init.body !== undefined) {
        body = JSON.stringify(init.body)
        headers['content-type'] ??= 'application/json'
      }
      const request = new Request(`http://localhost${path}`, { method, headers, body })
      peerAddresses.set(request, init.peer ?? '127.0.0.1')
      return toResult(await app.handle(request))
    },
    deliverMail() {
      return deliverDue(runtime, mailTransportFor(runtime.config, silentLogger), silentLogger)
    },
    async close() {
      runtime.close()
      rmSync(dir, { recursive: true, force: true })
      await database?.drop()
    },
  }
}

export async function toResult(response: Response): Promise<CallResult> {
  const text = await response.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  const setCookie = response.headers.get('set-cookie')
  const match = setCookie ? /(?:^|,\s*)refreshToken=([^;]*)/.exec(setCookie) : null
  return { status: response.status, headers: response.headers, text, json, refreshCookie: match?.[1], setCookie }
}

/** Requests a password-reset OTP for `email` (a minute later, past the per-address limit) and
 *  reads the code from the queued mail, as stored in the outbox before delivery. */
export async function requestOtp(ctx: TestContext, email: string): Promise<string> {
  ctx.clock.advance(61)
  await ctx.call('GET', `/api/v1/auth/forgot-password/${encodeURIComponent(email)}`)
  const [row] = await queryDatabase<{ text_body: string }>(
    ctx,
    "SELECT text_body FROM mail_outbox WHERE kind = 'password-reset-otp' AND recipient = $1 ORDER BY created_at DESC LIMIT 1",
    [email],
  )
  if (!row) throw new Error(`no OTP mail queued for ${email}`)
  return /\b(\d{6})\b/.exec(row.text_body)![1]!
}

/** The environment that points a CLI process at the test's database, on either engine. */
export function databaseEnv(ctx: TestContext): Record<string, string> {
  return ctx.runtime.config.postgresUrl ? { AUTHD_DATABASE_URL: ctx.runtime.config.postgresUrl } : {}
}

/** Reads the test's database directly (what the Store never shows, like a queued body), on either engine. */
export async function queryDatabase<T>(ctx: TestContext, query: string, params: unknown[] = []): Promise<T[]> {
  const { postgresUrl, databasePath } = ctx.runtime.config
  if (postgresUrl) {
    const sql = new SQL(postgresUrl, { max: 1 })
    try {
      return (await sql.unsafe(query, params)) as T[]
    } finally {
      await sql.close()
    }
  }
  const db = new Database(databasePath, { readonly: true })
  try {
    return db.query(query.replace(/\$(\d+)/g, '?$1')).all(...(params as never[])) as T[]
  } finally {
    db.close()
  }
}

/** Wraps every store method to record its calls (name and arguments), in order. */
export function recordStoreCalls(store: Store) {
  const calls: Array<{ name: string; args: unknown[] }> = []
  for (const [group, methods] of Object.entries(store)) {
    if (typeof methods !== 'object' || methods === null) continue
    for (const [name, fn] of Object.entries(methods)) {
      if (typeof fn !== 'function') continue
      ;(methods as Record<string, unknown>)[name] = (...args: unknown[]) => {
        calls.push({ name: `${group}.${name}`, args })
        return (fn as (...a: unknown[]) => unknown)(...args)
      }
    }
  }
  return calls
}

/** Logs the user in and returns the refresh cookie value. */
export async function loginFor(ctx: TestContext, email: string, rememberMe = false): Promise<CallResult> {
  return ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD, rememberMe } })
}

/** Calls the auth API of a server over a real socket, with the tenant's API key (the journeys
 *  through the compiled binary). */
export function apiCaller(url: string, apiKey: string) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}/api/v1/auth${path}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(toResult)
}
