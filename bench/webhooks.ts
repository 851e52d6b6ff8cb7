// What webhooks cost a login: two servers of one build in one run, one with three endpoints
// subscribed to every event (each login writes its session.created event in the login's
// transaction, and the worker sends it three times, to a receiver in this process), one with
// none (the event row is written all the same), in alternating rounds, with the server's own
// CPU per login.
//
//   npm run build && bun bench/webhooks.ts
//   BENCH_ROUNDS=6 BENCH_SECONDS=5 bun bench/webhooks.ts
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

const start = (endpoints: number) =>
  startAuthd(
    { ...NO_LIMITS, AUTHD_WEBHOOKS_ALLOW_INSECURE: '1' },
    {
      seed: (cli, tenantId) => {
        for (const email of emails) cli(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'B', '--last-name', 'M', '--password-stdin'], PASSWORD)
        for (let i = 0; i < endpoints; i++) cli(['webhooks', 'create', '--tenant', tenantId, '--url', `${receiver.url.origin}/hook${i}`, '--events', '*'])
      },
    },
  )

const servers = [
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
    for (const entry of round % 2 ? [...servers].reverse() : servers) {
      const cpuBefore = cpuSeconds(entry.server.pid)
      const result = await load(`${entry.name}`, SECONDS, CONCURRENCY, login(entry.server))
      const cpuMs = ((cpuSeconds(entry.server.pid) - cpuBefore) * 1000) / Math.max(1, result.statuses[201] ?? 0)
      results.set(entry, { rate: perSecond(result), cpuMs })
    }
    const [none, three] = servers.map((entry) => results.get(entry)!)
    servers[1]!.logins.push(three!.rate / none!.rate)
    servers[1]!.cpu.push(three!.cpuMs / none!.cpuMs)
    console.log(`round ${round + 1}: logins/s ${none!.rate.toFixed(0)} (no endpoint) vs ${three!.rate.toFixed(0)} (three), server CPU ms per login ${none!.cpuMs.toFixed(1)} vs ${three!.cpuMs.toFixed(1)}; deliveries so far ${delivered}`)
  }
  console.log(`\nthree endpoints / no endpoint, median over ${ROUNDS} alternating rounds (range):`)
  console.log(`  logins per second        ${fmt(servers[1]!.logins)}`)
  console.log(`  server CPU per login     ${fmt(servers[1]!.cpu)} (includes sending three deliveries per login)`)
} finally {
  for (const entry of servers) await entry.server.stop()
  receiver.stop(true)
}
