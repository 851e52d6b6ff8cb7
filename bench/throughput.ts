// Load benchmarks against the real server: dist/authd in its own process, driven over
// loopback, beside yardsticks measured in the same run (bench/baseline-server.ts: a bare
// Elysia route, and the refresh hot path on plain bun:sqlite). These machines are shared and
// noisy, so every result is a ratio to something measured seconds before and after on the
// same machine: in each round a yardstick runs before and after authd's scenario, and the
// median ratio over the rounds is reported.
//
//   npm run build && bun bench/throughput.ts
//   BENCH_SECONDS=10 BENCH_ROUNDS=3 bun bench/throughput.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { load, loadWithCpu, median, ms, NO_LIMITS, PASSWORD, spawnListening, startAuthd, type Result } from './lib'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
// Five rounds: with two, one build's /healthz ratio read anywhere from 0.62 to 1.08 (bench/README.md, session 8).
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const ARGON2 = { memoryCost: Number(process.env.AUTHD_ARGON2_MEMORY_KIB ?? 19456), timeCost: Number(process.env.AUTHD_ARGON2_TIME_COST ?? 2) }
const USERS = 8

async function startBaseline(dir: string, synchronous: 'NORMAL' | 'FULL') {
  const { proc, url } = await spawnListening([process.execPath, join(import.meta.dir, 'baseline-server.ts'), dir], { ...process.env, BASELINE_SYNCHRONOUS: synchronous, BASELINE_ARGON2: JSON.stringify(ARGON2) })
  return { url, pid: proc.pid, stop: () => proc.kill('SIGTERM') }
}

const cookieOf = (r: Response) => /refreshToken=([^;]+)/.exec(r.headers.get('set-cookie') ?? '')?.[1]

/** A client that rotates its own cookie in a closed loop; `first` gets it its first cookie. */
const rotator = (first: () => Promise<string | undefined>, rotate: (cookie: string) => Promise<Response>) => () => {
  let cookie: string | undefined
  return async () => {
    cookie ??= await first()
    const response = await rotate(cookie!)
    cookie = cookieOf(response) ?? cookie
    return response
  }
}

/** The median time of one argon2id verify at the server's parameters, here, one at a time. */
async function verifyMs(): Promise<number> {
  const hash = await Bun.password.hash(PASSWORD, { algorithm: 'argon2id', ...ARGON2 })
  const times: number[] = []
  for (let i = 0; i < 20; i++) {
    const start = performance.now()
    await Bun.password.verify(PASSWORD, hash)
    times.push(performance.now() - start)
  }
  return median(times)
}

export async function throughputBench() {
  const dir = mkdtempSync(join(tmpdir(), 'authd-bench-baseline-'))
  const normal = await startBaseline(dir, 'NORMAL')
  const full = await startBaseline(dir, 'FULL')
  const emails = Array.from({ length: USERS }, (_, i) => `bench${i}@example.com`)
  const authd = await startAuthd(NO_LIMITS, {
    seed: (cli, tenantId) => emails.forEach((email) => cli(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'B', '--last-name', 'M', '--password-stdin'], PASSWORD)),
  })
  const login = (index: number) =>
    fetch(`${authd.api}/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': authd.key }, body: JSON.stringify({ email: emails[index % USERS], password: PASSWORD }) })
  const scenarios = {
    bareHealth: (_: number) => () => fetch(`${normal.url}/healthz`),
    bareLogin: (_: number) => () => fetch(`${normal.url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) }),
    health: (_: number) => () => fetch(`${authd.url}/healthz`),
    rotateNormal: rotator(async () => cookieOf(await fetch(`${normal.url}/issue`)), (c) => fetch(`${normal.url}/rotate`, { headers: { cookie: `refreshToken=${c}` } })),
    rotateFull: rotator(async () => cookieOf(await fetch(`${full.url}/issue`)), (c) => fetch(`${full.url}/rotate`, { headers: { cookie: `refreshToken=${c}` } })),
  }
  // Each round's clients log in before the clock starts, one at a time: 32 logins at once
  // would be partly shed (503, by design), leaving clients to time refreshes without a cookie,
  // and the logins' argon2 time would count as refresh time.
  const loggedIn = async () => {
    const cookies: string[] = []
    for (let i = 0; i < CONCURRENCY; i++) {
      const cookie = cookieOf(await login(i))
      if (!cookie) throw new Error('a bench login failed')
      cookies.push(cookie)
    }
    return cookies
  }
  const refresher = (cookies: string[]) => (index: number) => rotator(async () => cookies[index], (c) => fetch(`${authd.api}/refresh-token`, { headers: { cookie: `refreshToken=${c}` } }))()

  // The machine's speed drifts within a round, so each target's yardstick runs both before
  // and after authd's scenario, and the ratio is taken to the mean of the two.
  const sandwiched = async (yardstick: () => Promise<Result>, ours: () => Promise<Result>): Promise<[Result, Result]> => {
    const before = await yardstick()
    const result = await ours()
    const after = await yardstick()
    return [{ ...before, perSecond: (before.perSecond + after.perSecond) / 2, cpuUsPerRequest: (before.cpuUsPerRequest! + after.cpuUsPerRequest!) / 2 }, result]
  }
  const rounds: Array<Record<string, Result>> = []
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const round: Record<string, Result> = {}
      ;[round.bareHealth, round.health] = await sandwiched(
        () => loadWithCpu(normal.pid, 'bare Elysia GET /healthz', SECONDS, CONCURRENCY, scenarios.bareHealth),
        () => loadWithCpu(authd.pid, 'authd GET /healthz', SECONDS, CONCURRENCY, scenarios.health),
      )
      round.rotateFull = await loadWithCpu(full.pid, 'baseline rotation, synchronous=FULL', SECONDS, CONCURRENCY, scenarios.rotateFull)
      const cookies = await loggedIn()
      ;[round.rotateNormal, round.refresh] = await sandwiched(
        () => loadWithCpu(normal.pid, 'baseline rotation, synchronous=NORMAL', SECONDS, CONCURRENCY, scenarios.rotateNormal),
        () => loadWithCpu(authd.pid, 'authd GET /refresh-token (FULL)', SECONDS, CONCURRENCY, refresher(cookies)),
      )
      rounds.push(round)
    }
    // Login in rounds too, each against the verify time measured on both sides of it, like the
    // other yardsticks: on these shared machines the verify time moved 32-48 ms between runs,
    // and 10-20% within a minute; one login reading moved 0.79-0.88 within an hour. Each round
    // also runs the bare verify route (bench/baseline-server.ts), before authd in the first,
    // third and fifth round and after it in the others: what a server that only verifies
    // reaches here, bench client and all, is the most the target's ratio can read on this machine.
    const logins: Array<{ result: Result; bare: Result; verifyBefore: number; verifyAfter: number; ratio: number; bareRatio: number }> = []
    const okPerSecond = (result: Result) => (result.statuses[201] ?? 0) / (SECONDS * 2)
    const bareLogins = () => load('bare verify route POST /login', SECONDS * 2, CONCURRENCY, scenarios.bareLogin)
    const authdLogins = () => load(`authd POST /login`, SECONDS * 2, CONCURRENCY, (i) => () => login(i))
    for (let r = 0; r < ROUNDS; r++) {
      const verifyBefore = await verifyMs()
      let bare: Result, result: Result
      if (r % 2 === 0) [bare, result] = [await bareLogins(), await authdLogins()]
      else [result, bare] = [await authdLogins(), await bareLogins()]
      const verifyAfter = await verifyMs()
      const ceiling = (navigator.hardwareConcurrency * 1000) / ((verifyBefore + verifyAfter) / 2)
      logins.push({ result, bare, verifyBefore, verifyAfter, ratio: okPerSecond(result) / ceiling, bareRatio: okPerSecond(bare) / ceiling })
    }
    const { result: loginResult, verifyBefore, verifyAfter } = logins.at(-1)!
    const verify = (verifyBefore + verifyAfter) / 2
    const ceiling = (navigator.hardwareConcurrency * 1000) / verify

    const ratios = (a: string, b: string) => rounds.map((round) => round[a]!.perSecond / round[b]!.perSecond)
    const last = rounds.at(-1)!
    console.log(`\n${SECONDS}s per scenario, ${CONCURRENCY} clients, ${ROUNDS} rounds, ${navigator.hardwareConcurrency} cores\n`)
    console.log(`${'scenario (last round)'.padEnd(42)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(6)} ${'server CPU µs/req'.padStart(18)}`)
    for (const r of [...Object.values(last), logins.at(-1)!.bare, loginResult]) {
      const cpu = r.cpuUsPerRequest === undefined ? '' : r.cpuUsPerRequest.toFixed(0)
      console.log(`${r.name.padEnd(42)} ${r.perSecond.toFixed(0).padStart(8)} ${ms(r.p50)} ${ms(r.p99)} ${String(r.errors).padStart(6)} ${cpu.padStart(18)}`)
    }
    console.log(`\ntargets (median ratio over the rounds, and the rounds' range: the noise it sits in)`)
    const spread = (values: number[]) => (values.length > 1 ? `  rounds ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}` : '')
    /** One line per target; a line for reference only has no goal. */
    const target = (label: string, values: number[], goal?: number) =>
      console.log(`  ${label.padEnd(60)} ${median(values).toFixed(2).padStart(6)}  ${goal === undefined ? '' : `(target >= ${goal})`}${spread(values)}`)
    target('refresh (FULL) / baseline rotation (NORMAL)', ratios('refresh', 'rotateNormal'), 1.0)
    target('  for reference: refresh (FULL) / baseline rotation (FULL)', ratios('refresh', 'rotateFull'))
    target('GET /healthz / bare Elysia route', ratios('health', 'bareHealth'), 0.8)
    target('logins ok per s / (cores / verify time)', logins.map((l) => l.ratio), 0.95)
    target('  for reference: bare verify route / (cores / verify time)', logins.map((l) => l.bareRatio))
    target('  for reference: logins ok per s / bare verify route', logins.map((l) => l.ratio / l.bareRatio))
    console.log(`    (last round: verify ${verifyBefore.toFixed(1)} ms before its login load, ${verifyAfter.toFixed(1)} ms after: ${ceiling.toFixed(0)} logins/s the ceiling)`)
    // Throughput on two cores shared with the load generator moves 0.7–1.0 between rounds of
    // one run; the server's own CPU per request moves less, so it is printed beside.
    const cpuRatio = (yardstick: string, ours: string) => {
      const values = rounds.map((round) => round[yardstick]!.cpuUsPerRequest! / round[ours]!.cpuUsPerRequest!)
      return `${median(values).toFixed(2).padStart(6)}${spread(values)}`
    }
    console.log(`\nfor reference, server CPU per request, yardstick / authd (median over the rounds; 1.0 = as cheap)`)
    console.log(`  ${'refresh (FULL) against the baseline rotation (NORMAL)'.padEnd(60)} ${cpuRatio('rotateNormal', 'refresh')}`)
    console.log(`  ${'GET /healthz against the bare Elysia route'.padEnd(60)} ${cpuRatio('bareHealth', 'health')}`)
  } finally {
    normal.stop()
    full.stop()
    await authd.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) await throughputBench()
