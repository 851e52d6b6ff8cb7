// Two builds' logins (right and wrong passwords) in alternating rounds of one run, with the
// server's own CPU per login: how a change to the login path is told apart from this machine's
// noise. Made for the guess reservation (a login counts its guess in a write transaction
// before the password is checked, one more commit than before).
//
//   git worktree add /tmp/before <commit> && (cd /tmp/before && npm run build)
//   npm run build && bun bench/login-ab.ts /tmp/before/dist/authd dist/authd
//   BENCH_ROUNDS=6 BENCH_SECONDS=5 bun bench/login-ab.ts A B
import { cpuSeconds, load, median, NO_LIMITS, PASSWORD, startAuthd, type Result } from './lib'

const [before, after] = process.argv.slice(2)
if (!before || !after) throw new Error('usage: bun bench/login-ab.ts BINARY_BEFORE BINARY_AFTER')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const USERS = 8
const emails = Array.from({ length: USERS }, (_, i) => `bench${i}@example.com`)

const start = (binary: string) =>
  startAuthd(NO_LIMITS, {
    binary,
    seed: (cli, tenantId) => emails.forEach((email) => cli(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'B', '--last-name', 'M', '--password-stdin'], PASSWORD)),
  })

const builds = [
  { name: 'before', server: await start(before), right: [] as number[], wrong: [] as number[], cpu: [] as number[] },
  { name: 'after', server: await start(after), right: [] as number[], wrong: [] as number[], cpu: [] as number[] },
]
const login = (server: { api: string; key: string }, password: string) => (i: number) => () =>
  fetch(`${server.api}/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': server.key }, body: JSON.stringify({ email: emails[i % USERS], password }) })
const ok = (r: Result, status: number) => (r.statuses[status] ?? 0) / SECONDS
const fmt = (values: number[]) => `${median(values).toFixed(2)} (rounds ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`

try {
  for (let round = 0; round < ROUNDS; round++) {
    const results = new Map<(typeof builds)[number], { right: Result; wrong: Result; cpuMs: number }>()
    for (const build of round % 2 ? [...builds].reverse() : builds) {
      const cpuBefore = cpuSeconds(build.server.pid)
      const right = await load(`${build.name} right`, SECONDS, CONCURRENCY, login(build.server, PASSWORD))
      const cpuMs = ((cpuSeconds(build.server.pid) - cpuBefore) * 1000) / Math.max(1, right.statuses[201] ?? 0)
      const wrong = await load(`${build.name} wrong`, SECONDS, CONCURRENCY, login(build.server, 'a wrong password here'))
      results.set(build, { right, wrong, cpuMs })
    }
    const [a, b] = builds.map((build) => results.get(build)!)
    builds[0]!.right.push(1)
    builds[1]!.right.push(ok(b!.right, 201) / ok(a!.right, 201))
    builds[1]!.wrong.push(ok(b!.wrong, 401) / ok(a!.wrong, 401))
    builds[1]!.cpu.push(b!.cpuMs / a!.cpuMs)
    console.log(`round ${round + 1}: right logins/s ${ok(a!.right, 201).toFixed(0)} -> ${ok(b!.right, 201).toFixed(0)}, wrong ${ok(a!.wrong, 401).toFixed(0)} -> ${ok(b!.wrong, 401).toFixed(0)}, server CPU ms per right login ${a!.cpuMs.toFixed(1)} -> ${b!.cpuMs.toFixed(1)}`)
  }
  console.log(`\nafter / before, median over ${ROUNDS} alternating rounds (range):`)
  console.log(`  right logins per second   ${fmt(builds[1]!.right)}`)
  console.log(`  wrong logins per second   ${fmt(builds[1]!.wrong)}`)
  console.log(`  server CPU per right login ${fmt(builds[1]!.cpu)}`)
} finally {
  for (const build of builds) await build.server.stop()
}
