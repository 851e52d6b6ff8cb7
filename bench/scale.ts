// Cost that stays flat as the data grows (issue 37): login, refresh, passkey sign-in, the admin
// user listing and the audit query against a database filled by bench/seed.ts (users over many
// tenants, months of sessions, a year of audit, mail, factors), beside the same requests against
// an empty database, in the same run, on SQLite and on PostgreSQL. Both servers of an engine run
// side by side and take turns, empty first in odd rounds and seeded first in even ones, so the
// machine's drift falls on both; each line is the median of the rounds' seeded / empty ratios.
// Also: start-up time (spawn to listening), idle memory and the database's size, for both.
//
//   npm run build && npm run bench -- scale
//   BENCH_USERS=1000000 BENCH_TOKENS=20000000 npm run bench -- scale
//   AUTHD_BENCH_POSTGRES_URL=postgres://… (default: this machine's, 127.0.0.1:5432); BENCH_ENGINES=sqlite
//   A database seeded earlier (`npm run bench -- seed`, its large tenant named Bench), kept:
//   BENCH_SEEDED_DATA_DIR=/work/big (SQLite), BENCH_SEEDED_DATABASE_URL=postgres://…/big
//   BENCH_CONTROL=1: both servers empty, to see what the ratios read when nothing differs
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { SoftwareAuthenticator } from '../test/software-authenticator'
import { load, median, NO_LIMITS, PASSWORD, startAuthd, type Result } from './lib'
import { postgresSink, sqliteSink } from './seed-sinks'
import { progressBar, seedDatabase } from './seed'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const USERS = Number(process.env.BENCH_USERS ?? 20_000)
const TOKENS = Number(process.env.BENCH_TOKENS ?? USERS * 20)
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',')
const ADMIN_URL = process.env.AUTHD_BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
const SEEDED_DATA_DIR = process.env.BENCH_SEEDED_DATA_DIR
const SEEDED_DATABASE_URL = process.env.BENCH_SEEDED_DATABASE_URL
// BENCH_CONTROL=1: the second server is empty too (an A/A run), so the ratios show the
// yardstick's own spread on this machine, to read a seeded run's against.
const CONTROL = process.env.BENCH_CONTROL === '1'
const ORIGIN = 'https://auth.example.com'
const SCENARIOS = ['POST /login', 'GET /refresh-token', 'passkey sign-in', 'admin GET /users', 'admin GET /audit'] as const
type Scenario = (typeof SCENARIOS)[number]

const cookieOf = (r: Response) => /refreshToken=([^;]+)/.exec(r.headers.get('set-cookie') ?? '')?.[1]
const okPerSecond = (r: Result) => Object.entries(r.statuses).reduce((n, [status, count]) => (Number(status) < 300 ? n + count : n), 0) / SECONDS

/** One server over an empty or a seeded database, with its clients' users, passkeys and keys. */
async function benchServer(label: string, seeded: boolean, postgresUrl?: string) {
  const emails = Array.from({ length: CONCURRENCY }, (_, i) => `bench${i}@example.com`)
  let seedSeconds = 0
  let seedRows = 0
  const reused = seeded && (postgresUrl ? postgresUrl === SEEDED_DATABASE_URL : SEEDED_DATA_DIR !== undefined)
  const authd = await startAuthd(
    { ...NO_LIMITS, AUTHD_PUBLIC_URL: ORIGIN, ...(postgresUrl ? { AUTHD_DATABASE_URL: postgresUrl } : {}) },
    {
      existingDataDir: reused && !postgresUrl ? SEEDED_DATA_DIR : undefined,
      seed: async (cli, tenantId, dataDir) => {
        const known = (email: string) => reused && (cli(['users', 'list', '--tenant', tenantId, '--email', email]) as { items: unknown[] }).items.length > 0
        for (const email of emails) if (!known(email)) cli(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'B', '--last-name', 'M', '--password-stdin'], PASSWORD)
        if (!seeded || reused) return
        const sink = postgresUrl ? await postgresSink(postgresUrl) : sqliteSink(join(dataDir, 'authd.db'))
        const bar = progressBar(`seed ${label}`)
        try {
          const result = await seedDatabase(sink, { users: USERS, tokens: TOKENS, largeTenantId: tenantId }, bar)
          seedSeconds = result.seconds
          seedRows = Object.values(result.counts).reduce((a, b) => a + b, 0)
        } finally {
          bar.finish()
          await sink.close()
        }
      },
    },
  )
  await Bun.sleep(2000) // past the start-up work (key ring, dummy hashes)
  const idle = authd.memory()
  const { key: adminKey } = authd.cli(['api-keys', 'create', '--tenant', authd.tenantId, '--scope', 'admin'])
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${authd.api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': authd.key, ...headers }, body: JSON.stringify(body) })
  const login = (i: number) => post('/login', { email: emails[i % emails.length], password: PASSWORD })
  // Each client's user gets a passkey of its own authenticator, one at a time (not timed).
  const authenticators: SoftwareAuthenticator[] = []
  for (let i = 0; i < CONCURRENCY; i++) {
    const authenticator = new SoftwareAuthenticator('auth.example.com', ORIGIN)
    const bearer = { authorization: `Bearer ${((await (await login(i)).json()) as any).data.response.accessToken}` }
    const { data } = (await (await post('/passkeys/register/options', {}, bearer)).json()) as any
    const added = await post('/passkeys/register', { challengeId: data.challengeId, response: authenticator.register(data.options) }, bearer)
    if (added.status !== 201) throw new Error(`registering a bench passkey: ${added.status}`)
    authenticators.push(authenticator)
  }
  const admin = (path: string) => fetch(`${authd.url}/api/v1/admin${path}`, { headers: { 'x-api-key': adminKey } })

  const workers: Record<Scenario, () => Promise<(i: number) => () => Promise<Response>>> = {
    'POST /login': async () => (i) => {
      let n = i
      return () => login(n++)
    },
    // The clients log in before the clock starts, one at a time (see bench/throughput.ts).
    'GET /refresh-token': async () => {
      const cookies: string[] = []
      for (let i = 0; i < CONCURRENCY; i++) cookies.push(cookieOf(await login(i))!)
      return (i) => {
        let cookie = cookies[i]!
        return async () => {
          const response = await fetch(`${authd.api}/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } })
          cookie = cookieOf(response) ?? cookie
          return response
        }
      }
    },
    'passkey sign-in': async () => (i) => async () => {
      const { data } = (await (await post('/passkeys/login/options', {})).json()) as any
      return post('/passkeys/login', { challengeId: data.challengeId, response: authenticators[i]!.assert(data.options) })
    },
    // A page of 10: both databases hold at least that many users in the bench tenant, so both
    // answers are the same size and the ratio is the look-up's, not the JSON's.
    'admin GET /users': async () => () => () => admin('/users?limit=10'),
    'admin GET /audit': async () => () => () => admin('/audit?limit=100'),
  }
  const databaseBytes = async () => {
    if (!postgresUrl) return ['', '-wal'].reduce((n, suffix) => n + (statSync(join(authd.dataDir, `authd.db${suffix}`), { throwIfNoEntry: false })?.size ?? 0), 0)
    const sql = new SQL(postgresUrl, { max: 1 })
    try {
      return Number(((await sql`SELECT pg_database_size(current_database()) AS n`) as Array<{ n: string }>)[0]!.n)
    } finally {
      await sql.close()
    }
  }
  const userCount = async () => {
    if (!postgresUrl) {
      const db = new Database(join(authd.dataDir, 'authd.db'), { readonly: true })
      try {
        return (db.query('SELECT count(*) AS n FROM users').get() as { n: number }).n
      } finally {
        db.close()
      }
    }
    const sql = new SQL(postgresUrl, { max: 1 })
    try {
      return Number(((await sql`SELECT count(*) AS n FROM users`) as Array<{ n: string }>)[0]!.n)
    } finally {
      await sql.close()
    }
  }
  return { authd, label, startupMs: authd.startupMs, idle, seedSeconds, seedRows, workers, databaseBytes, userCount }
}

async function measureEngine(engine: string): Promise<string[]> {
  let databases: string[] = []
  let admin: SQL | undefined
  const urlOf = (name: string) => {
    const url = new URL(ADMIN_URL)
    url.pathname = `/${name}`
    return url.toString()
  }
  if (engine === 'postgres') {
    admin = new SQL(ADMIN_URL, { max: 1, connectionTimeout: 3 })
    try {
      await admin`SELECT 1`
    } catch (error) {
      return [`PostgreSQL: skipped, no server at ${ADMIN_URL.replace(/\/\/[^@]*@/, '//…@')} (${(error as Error).message})`]
    }
    const base = `authd_scale_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    databases = SEEDED_DATABASE_URL && !CONTROL ? [`${base}_empty`] : [`${base}_empty`, `${base}_seeded`]
    for (const name of databases) await admin.unsafe(`CREATE DATABASE ${name}`)
  }
  const servers: Array<Awaited<ReturnType<typeof benchServer>>> = []
  try {
    servers.push(await benchServer(`${engine} empty`, false, databases[0] && urlOf(databases[0])))
    if (CONTROL) servers.push(await benchServer(`${engine} empty (control)`, false, databases[1] && urlOf(databases[1])))
    else servers.push(await benchServer(`${engine} seeded`, true, engine === 'postgres' ? (SEEDED_DATABASE_URL ?? urlOf(databases[1]!)) : undefined))
    const [empty, seeded] = servers as [(typeof servers)[0], (typeof servers)[0]]
    const ratios: Record<Scenario, number[]> = Object.fromEntries(SCENARIOS.map((s) => [s, []])) as never
    const last: Record<Scenario, [Result, Result]> = {} as never
    for (let round = 0; round < ROUNDS; round++) {
      for (const scenario of SCENARIOS) {
        // Logins by as many clients as cores: argon2 is the cost, and more clients only queue
        // hashes until the server sheds some (503), which reads as a slower login (see the flood).
        const clients = scenario === 'POST /login' ? navigator.hardwareConcurrency : CONCURRENCY
        const run = async (server: typeof empty) => load(`${server.label} ${scenario}`, SECONDS, clients, await server.workers[scenario]())
        let e: Result, s: Result
        if (round % 2 === 0) [e, s] = [await run(empty), await run(seeded)]
        else [s, e] = [await run(seeded), await run(empty)]
        ratios[scenario].push(okPerSecond(s) / okPerSecond(e))
        last[scenario] = [e, s]
      }
    }
    const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`
    const lines = [
      CONTROL
        ? `\n${engine}: control, two empty databases (the second in the seeded column), ${SECONDS}s per scenario, ${CONCURRENCY} clients, ${ROUNDS} rounds, ${navigator.hardwareConcurrency} cores`
        : seeded.seedRows > 0
        ? `\n${engine}: ${USERS.toLocaleString('en')} users and ${TOKENS.toLocaleString('en')} refresh tokens seeded (${seeded.seedRows.toLocaleString('en')} rows in ${seeded.seedSeconds.toFixed(0)} s), ${SECONDS}s per scenario, ${CONCURRENCY} clients, ${ROUNDS} rounds, ${navigator.hardwareConcurrency} cores`
        : `\n${engine}: a database seeded earlier (${(await seeded.userCount()).toLocaleString('en')} users), ${SECONDS}s per scenario, ${CONCURRENCY} clients, ${ROUNDS} rounds, ${navigator.hardwareConcurrency} cores`,
      `${'scenario (last round)'.padEnd(22)} ${'empty ok/s'.padStart(11)} ${'seeded ok/s'.padStart(12)} ${'seeded/empty'.padStart(13)}  rounds      (target >= 0.9)`,
    ]
    for (const scenario of SCENARIOS) {
      const [e, s] = last[scenario]
      const values = ratios[scenario]
      lines.push(`${scenario.padEnd(22)} ${okPerSecond(e).toFixed(0).padStart(11)} ${okPerSecond(s).toFixed(0).padStart(12)} ${median(values).toFixed(2).padStart(13)}  ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`)
    }
    lines.push(`start-up (spawn to listening): empty ${empty.startupMs.toFixed(0)} ms, seeded ${seeded.startupMs.toFixed(0)} ms`)
    lines.push(`idle memory (RSS 2 s after start): empty ${empty.idle.rssMiB.toFixed(0)} MiB, seeded ${seeded.idle.rssMiB.toFixed(0)} MiB`)
    lines.push(`database size: empty ${mib(await empty.databaseBytes())}, seeded ${mib(await seeded.databaseBytes())}`)
    return lines
  } finally {
    for (const server of servers) await server.authd.stop()
    for (const name of databases) await admin!.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {})
    await admin?.close()
  }
}

export async function scaleBench() {
  const report: string[] = []
  for (const engine of ENGINES) report.push(...(await measureEngine(engine)))
  console.log(report.join('\n'))
}

if (import.meta.main) await scaleBench()
