// The engines side by side: refresh rotation and login on embedded SQLite (the yardstick), on
// PostgreSQL with one instance, and on PostgreSQL with two instances sharing one database,
// all in the same run. Each line's ratio is to SQLite's throughput for the same scenario.
//
//   npm run build && bun bench/engines.ts
//   AUTHD_BENCH_POSTGRES_URL=postgres://root@127.0.0.1:5432/test bun bench/engines.ts
//
// The load generator shares the machine's cores with the servers (and, for PostgreSQL, with
// the database server): read the ratios, not the absolute numbers.
import { SQL } from 'bun'
import { load, ms, NO_LIMITS, PASSWORD, startAuthd, type Result } from './lib'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const ADMIN_URL = process.env.AUTHD_BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
const USERS = 8

interface Setup {
  name: string
  env: Record<string, string>
  instances: number
}

async function measure(setup: Setup): Promise<Result[]> {
  const emails = Array.from({ length: USERS }, (_, i) => `bench${i}@example.com`)
  const authd = await startAuthd(
    { ...NO_LIMITS, ...setup.env },
    { seed: (cli, tenantId) => emails.forEach((email) => cli(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'B', '--last-name', 'M', '--password-stdin'], PASSWORD)) },
  )
  try {
    const apis = [authd.api]
    while (apis.length < setup.instances) apis.push(await authd.addInstance())
    // Client i talks to instance i mod n, as a load balancer spreading connections would.
    const apiFor = (index: number) => apis[index % apis.length]!
    const login = (api: string, email: string) =>
      fetch(`${api}/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': authd.key }, body: JSON.stringify({ email, password: PASSWORD }) })
    const cookieOf = (r: Response) => /refreshToken=([^;]+)/.exec(r.headers.get('set-cookie') ?? '')?.[1]
    const refresher = (index: number) => {
      const api = apiFor(index)
      let cookie: string | undefined
      return async () => {
        cookie ??= cookieOf(await login(api, emails[index % USERS]!))
        const response = await fetch(`${api}/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } })
        cookie = cookieOf(response) ?? cookie
        return response
      }
    }
    const loginWorker = (index: number) => {
      let n = index
      return () => login(apiFor(index), emails[n++ % USERS]!)
    }
    return [
      await load(`${setup.name}: GET /refresh-token`, SECONDS, CONCURRENCY, refresher),
      await load(`${setup.name}: POST /login`, SECONDS, CONCURRENCY, loginWorker),
    ]
  } finally {
    await authd.stop()
  }
}

export async function enginesBench() {
  const admin = new SQL(ADMIN_URL, { max: 1, connectionTimeout: 3 })
  try {
    await admin`SELECT 1`
  } catch (error) {
    console.log(`\nEngines: skipped, no PostgreSQL at ${ADMIN_URL.replace(/\/\/[^@]*@/, '//…@')} (${(error as Error).message}); set AUTHD_BENCH_POSTGRES_URL`)
    return
  }
  const database = `authd_bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  const urlOf = (name: string) => {
    const url = new URL(ADMIN_URL)
    url.pathname = `/${name}`
    return url.toString()
  }
  const setups: Setup[] = [
    { name: 'SQLite, 1 instance', env: {}, instances: 1 },
    { name: 'PostgreSQL, 1 instance', env: { AUTHD_DATABASE_URL: urlOf(`${database}_1`) }, instances: 1 },
    { name: 'PostgreSQL, 2 instances', env: { AUTHD_DATABASE_URL: urlOf(`${database}_2`) }, instances: 2 },
  ]
  const results: Result[][] = []
  try {
    for (const suffix of ['_1', '_2']) await admin.unsafe(`CREATE DATABASE ${database}${suffix}`)
    for (const setup of setups) results.push(await measure(setup))
  } finally {
    for (const suffix of ['_1', '_2']) await admin.unsafe(`DROP DATABASE IF EXISTS ${database}${suffix} WITH (FORCE)`).catch(() => {})
    await admin.close()
  }

  // Throughput counts answered requests that succeeded: a login shed with 503 under overload
  // is fast and would flatter the engine that sheds more.
  const okPerSecond = (r: Result) => Object.entries(r.statuses).reduce((n, [status, count]) => (Number(status) < 300 ? n + count : n), 0) / SECONDS
  const yardstick = results[0]!
  console.log(`\nEngines: ${SECONDS}s per scenario, ${CONCURRENCY} clients, ${navigator.hardwareConcurrency} cores (ratios to SQLite, same run)\n`)
  console.log(`${'scenario'.padEnd(44)} ${'ok/s'.padStart(8)} ${'x SQLite'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'shed'.padStart(6)} ${'errors'.padStart(6)}`)
  for (const group of results) {
    group.forEach((r, i) => {
      const shed = r.statuses[503] ?? 0
      const ratio = okPerSecond(r) / okPerSecond(yardstick[i]!)
      console.log(`${r.name.padEnd(44)} ${okPerSecond(r).toFixed(0).padStart(8)} ${ratio.toFixed(2).padStart(9)} ${ms(r.p50)} ${ms(r.p99)} ${String(shed).padStart(6)} ${String(r.errors - shed).padStart(6)}`)
    })
  }
}

if (import.meta.main) await enginesBench()
