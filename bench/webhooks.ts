// What webhooks cost a login: three servers of one build in one run, in rotating order each
// round, with the server's own CPU per login: one with three endpoints subscribed to every
// event (each login writes its session.created event in the login's transaction, and the
// worker sends it three times, to a receiver in this process); one with none (the event row
// is written all the same); and one whose database has the webhook triggers dropped (no event
// written: what a login cost before webhooks, so the write's own cost shows).
//
//   npm run build && bun bench/webhooks.ts
//   BENCH_ROUNDS=6 BENCH_SECONDS=5 bun bench/webhooks.ts
import { Database } from 'bun:sqlite'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cpuSeconds, load, median, NO_LIMITS, PASSWORD, startAuthd, type Result } from './lib'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const USERS = 8
const emails = Array.from({ length: USERS }, (_, i) => `bench${i}@example.com`)

let delivered = 0
const receiver = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    await request.arrayBuffer()
    delivered++
    return new Response(null, { status: 204 })
  },
})

const start = (endpoints: number, triggers = true) => {
  const database = join(mkdtempSync(join(tmpdir(), 'authd-bench-db-')), 'authd.db')
  return startAuthd(
    { ...NO_LIMITS, AUTHD_WEBHOOKS_ALLOW_INSECURE: '1', AUTHD_DATABASE_URL: database },
    {
      seed: (cli, tenantId) => {
        for (const email of emails) cli(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'B', '--last-name', 'M', '--password-stdin'], PASSWORD)
        for (let i = 0; i < endpoints; i++) cli(['webhooks', 'create', '--tenant', tenantId, '--url', `${receiver.url.origin}/hook${i}`, '--events', '*'])
        if (triggers) return
        const db = new Database(database)
        for (const { name } of db.query("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'webhook_%'").all() as Array<{ name: string }>) db.run(`DROP TRIGGER ${name}`)
        db.close()
      },
    },
  )
}

const servers = [
  { name: 'no event written', server: await start(0, false), logins: [] as number[], cpu: [] as number[] },
  { name: 'no endpoint', server: await start(0), logins: [] as number[], cpu: [] as number[] },
  { name: 'three endpoints', server: await start(3), logins: [] as number[], cpu: [] as number[] },
]
const login = (server: { api: string; key: string }) => (i: number) => () =>
  fetch(`${server.api}/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': server.key }, body: JSON.stringify({ email: emails[i % USERS], password: PASSWORD }) })
const perSecond = (r: Result) => (r.statuses[201] ?? 0) / SECONDS
const fmt = (values: number[]) => `${median(values).toFixed(3)} (rounds ${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)})`

try {
  for (let round = 0; round < ROUNDS; round++) {
    const results = new Map<(typeof servers)[number], { rate: number; cpuMs: number }>()
    for (const entry of [...servers.slice(round % 3), ...servers.slice(0, round % 3)]) {
      const cpuBefore = cpuSeconds(entry.server.pid)
      const result = await load(`${entry.name}`, SECONDS, CONCURRENCY, login(entry.server))
      const cpuMs = ((cpuSeconds(entry.server.pid) - cpuBefore) * 1000) / Math.max(1, result.statuses[201] ?? 0)
      results.set(entry, { rate: perSecond(result), cpuMs })
    }
    const [bare, none, three] = servers.map((entry) => results.get(entry)!)
    servers[1]!.logins.push(none!.rate / bare!.rate)
    servers[1]!.cpu.push(none!.cpuMs / bare!.cpuMs)
    servers[2]!.logins.push(three!.rate / none!.rate)
    servers[2]!.cpu.push(three!.cpuMs / none!.cpuMs)
    console.log(
      `round ${round + 1}: logins/s ${bare!.rate.toFixed(0)} (no event) / ${none!.rate.toFixed(0)} (no endpoint) / ${three!.rate.toFixed(0)} (three), server CPU ms per login ${bare!.cpuMs.toFixed(1)} / ${none!.cpuMs.toFixed(1)} / ${three!.cpuMs.toFixed(1)}; deliveries so far ${delivered}`,
    )
  }
  console.log(`\nmedian over ${ROUNDS} rounds (range):`)
  console.log(`  the event's write: no endpoint / no event written:  logins/s ${fmt(servers[1]!.logins)}, server CPU per login ${fmt(servers[1]!.cpu)}`)
  console.log(`  three endpoints / no endpoint:                     logins/s ${fmt(servers[2]!.logins)}, server CPU per login ${fmt(servers[2]!.cpu)} (sending three deliveries per login included)`)
} finally {
  for (const entry of servers) await entry.server.stop()
  receiver.stop(true)
}
