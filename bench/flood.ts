// A login flood: 150 concurrent clients logging in for BENCH_SECONDS, while a few clients
// measure GET /healthz and GET /refresh-token. Reports login throughput and how many were
// refused fast (503), the cheap endpoints' latency during the flood against the same
// endpoints measured just before it, and the server's peak memory.
import { ms, NO_LIMITS, PASSWORD, percentile, startAuthd, timed } from './lib'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const FLOOD = Number(process.env.BENCH_FLOOD ?? 150)

async function sample(seconds: number, make: () => () => Promise<Response>, clients: number) {
  const latencies: number[] = []
  const statuses = new Map<number, number>()
  const deadline = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: clients }, async () => {
      const request = make()
      while (performance.now() < deadline) {
        const { ms, status } = await timed(request)
        latencies.push(ms)
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
      }
    }),
  )
  latencies.sort((a, b) => a - b)
  return { perSecond: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), statuses }
}

export async function floodBench() {
  const authd = await startAuthd(NO_LIMITS)
  authd.cli(['users', 'create', '--tenant', authd.tenantId, '--email', 'flood@example.com', '--first-name', 'F', '--last-name', 'L', '--password-stdin'], PASSWORD)
  const headers = { 'content-type': 'application/json', 'x-api-key': authd.key }
  const login = () => fetch(`${authd.api}/login`, { method: 'POST', headers, body: JSON.stringify({ email: 'flood@example.com', password: PASSWORD }) })
  const cookieOf = (r: Response) => /refreshToken=([^;]+)/.exec(r.headers.get('set-cookie') ?? '')?.[1]
  // Each refresher logs in once, before any flood, then only rotates its cookie.
  const cookies = [cookieOf(await login())!, cookieOf(await login())!, cookieOf(await login())!, cookieOf(await login())!]
  const refresher = () => {
    let cookie = cookies.pop()!
    return async () => {
      const response = await fetch(`${authd.api}/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } })
      cookie = cookieOf(response) ?? cookie
      return response
    }
  }
  const health = () => () => fetch(`${authd.url}/healthz`)

  const idle = authd.memory()
  const calmHealth = await sample(2, health, 2)
  const calmRefresh = await sample(2, refresher, 2)
  const [flood, floodHealth, floodRefresh] = await Promise.all([sample(SECONDS, () => login, FLOOD), sample(SECONDS, health, 2), sample(SECONDS, refresher, 2)])
  const after = authd.memory()
  await authd.stop()

  const count = (s: Map<number, number>, status: number) => s.get(status) ?? 0
  console.log(`\nlogin flood: ${FLOOD} concurrent clients for ${SECONDS}s, ${navigator.hardwareConcurrency} cores, argon2id m=19MiB t=2\n`)
  console.log(`logins: ${flood.perSecond.toFixed(0)}/s answered (${count(flood.statuses, 201)} ok, ${count(flood.statuses, 503)} refused fast with 503), p50 ${flood.p50.toFixed(0)} ms, p99 ${flood.p99.toFixed(0)} ms`)
  console.log(`${'endpoint'.padEnd(24)} ${'calm p50'.padStart(8)} ${'flood p50'.padStart(9)} ${'calm p99'.padStart(8)} ${'flood p99'.padStart(9)}  flood/calm p99`)
  for (const [name, calm, loaded] of [['GET /healthz', calmHealth, floodHealth], ['GET /refresh-token', calmRefresh, floodRefresh]] as const) {
    console.log(`${name.padEnd(24)} ${ms(calm.p50)} ${ms(loaded.p50)} ${ms(calm.p99)} ${ms(loaded.p99)}  ${(loaded.p99 / calm.p99).toFixed(1)}x`)
  }
  console.log(`memory: ${idle.rssMiB.toFixed(0)} MiB idle, peak ${after.peakMiB.toFixed(0)} MiB during the flood`)
}

if (import.meta.main) await floodBench()
