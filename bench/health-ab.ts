// Two builds' GET /healthz against the bare Elysia route, in alternating rounds of one run:
// how a change to the request pipeline is told apart from this machine's noise (a single
// bench/throughput.ts run moves more between rounds than most such changes).
//
//   cp dist/authd /tmp/authd-before   # ... make the change ...   npm run build
//   bun bench/health-ab.ts /tmp/authd-before dist/authd
//   BENCH_ROUNDS=10 BENCH_SECONDS=3 bun bench/health-ab.ts A B
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadWithCpu, median, spawnListening, type Result } from './lib'

const [before, after] = process.argv.slice(2)
if (!before || !after) throw new Error('usage: bun bench/health-ab.ts BINARY_BEFORE BINARY_AFTER')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)

const dirs = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), 'authd-bench-ab-')))
const bare = await spawnListening([process.execPath, join(import.meta.dir, 'baseline-server.ts'), dirs[0]!])
const builds = [
  { name: 'before', ...(await spawnListening([before, '--data-dir', dirs[1]!, 'serve', '--port', '0'])), throughput: [] as number[], cpu: [] as number[] },
  { name: 'after', ...(await spawnListening([after, '--data-dir', dirs[2]!, 'serve', '--port', '0'])), throughput: [] as number[], cpu: [] as number[] },
]
const probe = (server: { proc: { pid: number }; url: string }) =>
  loadWithCpu(server.proc.pid, 'GET /healthz', SECONDS, CONCURRENCY, () => () => fetch(`${server.url}/healthz`))
const fmt = (values: number[]) => `${median(values).toFixed(2)} (rounds ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`

try {
  for (let round = 0; round < ROUNDS; round++) {
    // The bare route before and after both builds, which take turns going first.
    const bareBefore = await probe(bare)
    const results = new Map<(typeof builds)[number], Result>()
    for (const build of round % 2 ? [...builds].reverse() : builds) results.set(build, await probe(build))
    const bareAfter = await probe(bare)
    const bareRate = (bareBefore.perSecond + bareAfter.perSecond) / 2
    const bareCpu = (bareBefore.cpuUsPerRequest! + bareAfter.cpuUsPerRequest!) / 2
    const line = builds.map((build) => {
      const result = results.get(build)!
      build.throughput.push(result.perSecond / bareRate)
      build.cpu.push(bareCpu / result.cpuUsPerRequest!)
      return `${build.name} ${build.throughput.at(-1)!.toFixed(2)} (CPU ${build.cpu.at(-1)!.toFixed(2)}, ${result.cpuUsPerRequest!.toFixed(1)} µs)`
    })
    console.log(`round ${round + 1}: bare route ${bareCpu.toFixed(1)} µs/request; ${line.join('; ')}`)
  }
  console.log(`\n/healthz / bare route, median over ${ROUNDS} rounds of ${SECONDS} s (by throughput; by the server's CPU per request):`)
  for (const build of builds) console.log(`  ${build.name.padEnd(7)} ${fmt(build.throughput)}; CPU ${fmt(build.cpu)}`)
} finally {
  for (const server of [bare, ...builds]) server.proc.kill('SIGTERM')
  await Promise.all([bare, ...builds].map((server) => server.proc.exited))
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
}
