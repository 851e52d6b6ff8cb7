// What groups cost a sign-in (issue 45): logins and refreshes of users in 20 groups against
// users in none, on the same server, in alternating rounds of one run, on SQLite and on
// PostgreSQL. Every token of a user carries the names of their groups (one indexed read), so
// the ratio says what that read costs where it is paid. Goal: >= 0.95 for both.
//
//   npm run build && bun bench/groups.ts
//   AUTHD_BENCH_POSTGRES_URL=postgres://root@127.0.0.1:5432/test BENCH_ROUNDS=6 bun bench/groups.ts
//
// The groups are made through core/groups (the CLI of this build need not have the commands),
// on the database the CLI made, before the server starts.
import { loadConfig } from '../src/config'
import { addMembers, createGroup } from '../src/core/groups/groups'
import { openRuntime } from '../src/runtime'
import { loadWithCpu, median, NO_LIMITS, onBenchDatabase, PASSWORD, startAuthd, type Result } from './lib'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const ADMIN_URL = process.env.AUTHD_BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
const USERS = 8
const GROUPS = 20

const kinds = ['none', 'grouped'] as const
type Kind = (typeof kinds)[number]
const emailsOf = (kind: Kind) => Array.from({ length: USERS }, (_, i) => `${kind}${i}@example.com`)

async function seedGroups(env: Record<string, string>, dataDir: string, tenantId: string, userIds: string[]) {
  const runtime = await openRuntime(loadConfig({ ...process.env, ...env }, { dataDir }))
  try {
    for (let g = 0; g < GROUPS; g++) {
      const group = await createGroup(runtime, { tenantId, name: `group-${String(g).padStart(2, '0')}`, description: 'A group of the bench' })
      await addMembers(runtime, group.id, userIds)
    }
  } finally {
    runtime.close()
  }
}

const okPerSecond = (r: Result) => Object.entries(r.statuses).reduce((n, [status, count]) => (Number(status) < 300 ? n + count : n), 0) / SECONDS
const spread = (values: number[]) => `${median(values).toFixed(3)} (rounds ${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)})`

async function measure(name: string, env: Record<string, string>) {
  const authd = await startAuthd(
    { ...NO_LIMITS, ...env },
    {
      seed: async (cli, tenantId, dataDir) => {
        const grouped: string[] = []
        for (const kind of kinds) {
          for (const email of emailsOf(kind)) {
            const { userId } = cli(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'B', '--last-name', 'M', '--password-stdin'], PASSWORD)
            if (kind === 'grouped') grouped.push(userId)
          }
        }
        await seedGroups(env, dataDir, tenantId, grouped)
      },
    },
  )
  try {
    const login = (email: string) =>
      fetch(`${authd.api}/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': authd.key }, body: JSON.stringify({ email, password: PASSWORD }) })
    const cookieOf = (r: Response) => /refreshToken=([^;]+)/.exec(r.headers.get('set-cookie') ?? '')?.[1]
    // One family per client, signed in before the clock starts (a login inside the window would count its hash).
    const families = new Map<Kind, string[]>()
    for (const kind of kinds) {
      const cookies: string[] = []
      for (let i = 0; i < CONCURRENCY; i++) cookies.push(cookieOf(await login(emailsOf(kind)[i % USERS]!))!)
      families.set(kind, cookies)
    }
    const loginWorker = (kind: Kind) => (index: number) => {
      let n = index
      return () => login(emailsOf(kind)[n++ % USERS]!)
    }
    const refreshWorker = (kind: Kind) => (index: number) => async () => {
      const cookies = families.get(kind)!
      const response = await fetch(`${authd.api}/refresh-token`, { headers: { cookie: `refreshToken=${cookies[index]}` } })
      cookies[index] = cookieOf(response) ?? cookies[index]!
      return response
    }
    // Sanity: a grouped user's access token carries the groups (when this build puts them there).
    const sample = await (await login(emailsOf('grouped')[0]!)).json() as any
    const payload = JSON.parse(Buffer.from(String(sample?.data?.response?.accessToken ?? '..').split('.')[1] ?? '', 'base64url').toString() || '{}')
    const carried = Array.isArray(payload.groups) ? payload.groups.length : 0

    // Each ratio is 20 groups over none in throughput, and none over 20 groups in the server's
    // own CPU per request (from /proc: steadier than throughput on a shared machine).
    const ratios = { login: [] as number[], refresh: [] as number[], loginCpu: [] as number[], refreshCpu: [] as number[] }
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [...kinds].reverse() : [...kinds]
      const per = { login: {} as Record<Kind, Result>, refresh: {} as Record<Kind, Result> }
      for (const kind of order) per.refresh[kind] = await loadWithCpu(authd.pid, `${name} refresh ${kind}`, SECONDS, CONCURRENCY, refreshWorker(kind))
      for (const kind of order) per.login[kind] = await loadWithCpu(authd.pid, `${name} login ${kind}`, SECONDS, CONCURRENCY, loginWorker(kind))
      ratios.login.push(okPerSecond(per.login.grouped) / okPerSecond(per.login.none))
      ratios.refresh.push(okPerSecond(per.refresh.grouped) / okPerSecond(per.refresh.none))
      ratios.loginCpu.push(per.login.none.cpuUsPerRequest! / per.login.grouped.cpuUsPerRequest!)
      ratios.refreshCpu.push(per.refresh.none.cpuUsPerRequest! / per.refresh.grouped.cpuUsPerRequest!)
      const line = (r: Result) => `${okPerSecond(r).toFixed(0)}/s ${r.cpuUsPerRequest!.toFixed(0)} µs CPU`
      console.log(`${name} round ${round + 1}: refresh none ${line(per.refresh.none)}, 20 groups ${line(per.refresh.grouped)}; login none ${line(per.login.none)}, 20 groups ${line(per.login.grouped)}`)
    }
    return { name, carried, login: spread(ratios.login), refresh: spread(ratios.refresh), loginCpu: spread(ratios.loginCpu), refreshCpu: spread(ratios.refreshCpu) }
  } finally {
    await authd.stop()
  }
}

export async function groupsBench() {
  const results = [await measure('SQLite', {})]
  const onPostgres = await onBenchDatabase(ADMIN_URL, (url) => measure('PostgreSQL', { AUTHD_DATABASE_URL: url }))
  if (onPostgres) results.push(onPostgres)
  console.log(`\nGroups: a user in ${GROUPS} groups / a user in none, same server, median over ${ROUNDS} alternating rounds of ${SECONDS}s, ${CONCURRENCY} clients (goal >= 0.95)\n`)
  for (const r of results) {
    console.log(`${r.name.padEnd(11)} throughput: login ${r.login}, refresh ${r.refresh}`)
    console.log(`${''.padEnd(11)} CPU per request (none / 20 groups): login ${r.loginCpu}, refresh ${r.refreshCpu}   (groups in the grouped user's access token: ${r.carried})`)
  }
}

if (import.meta.main) await groupsBench()
