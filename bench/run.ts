// Load benchmarks against the real server: dist/authd in its own process, driven over
// loopback. Each scenario reports throughput and latency percentiles, and its ratio to the
// baseline (GET /healthz) measured in the same run: these machines are shared and noisy,
// so compare ratios between runs, never a lone absolute number.
//
//   npm run bench                      # all scenarios, 5 s each
//   BENCH_SECONDS=10 npm run bench     # longer runs
import { mkdtempSync, rmSync } from 'node:fs'
import { load, type Result } from './lib'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..')
const BINARY = join(ROOT, 'dist/authd')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const PASSWORD = 'correct horse battery staple'
const dataDir = mkdtempSync(join(tmpdir(), 'authd-bench-'))

function cli(args: string[], stdin?: string) {
  const r = Bun.spawnSync([BINARY, '--data-dir', dataDir, '--json', ...args], { stdin: stdin ? new TextEncoder().encode(stdin) : 'ignore' })
  if (r.exitCode !== 0) throw new Error(`authd ${args.join(' ')}: ${r.stderr}`)
  return JSON.parse(r.stdout.toString())
}

async function main() {
  if (!(await Bun.file(BINARY).exists())) throw new Error('build first: npm run build')
  const { tenantId } = cli(['tenants', 'create', '--name', 'Bench'])
  const { key } = cli(['api-keys', 'create', '--tenant', tenantId])
  const emails = Array.from({ length: 8 }, (_, i) => `bench${i}@example.com`)
  for (const email of emails) cli(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'Bench', '--last-name', 'Mark', '--password-stdin'], PASSWORD)

  const server = Bun.spawn([BINARY, '--data-dir', dataDir, 'serve', '--port', '0'], { stdout: 'pipe', stderr: 'inherit' })
  const reader = server.stdout.getReader()
  let out = ''
  while (!out.includes('"msg":"listening"')) out += new TextDecoder().decode((await reader.read()).value)
  const url = JSON.parse(out.split('\n').find((l) => l.includes('"msg":"listening"'))!).url as string
  const api = `${url}/api/v1/auth`

  const login = (email: string) =>
    fetch(`${api}/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ email, password: PASSWORD }) })
  const cookieOf = (r: Response) => /refreshToken=([^;]+)/.exec(r.headers.get('set-cookie') ?? '')?.[1]
  const refresher = () => {
    let cookie: string | undefined
    return async () => {
      cookie ??= cookieOf(await login(emails[0]!))
      const response = await fetch(`${api}/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } })
      cookie = cookieOf(response) ?? cookie
      return response
    }
  }
  let n = 0
  const loginWorker = () => () => login(emails[n++ % emails.length]!)

  const results: Result[] = []
  results.push(await load('baseline: GET /healthz', SECONDS, CONCURRENCY, () => () => fetch(`${url}/healthz`)))
  results.push(await load('GET /refresh-token (rotation)', SECONDS, CONCURRENCY, refresher))
  results.push(await load('POST /login (argon2id m=19MiB t=2)', SECONDS, CONCURRENCY, loginWorker))
  // Refresh while a login flood saturates the hashing pool: signing must not starve.
  const [duringFlood] = await Promise.all([load('GET /refresh-token during a login flood', SECONDS, 4, refresher), load('(flood)', SECONDS, CONCURRENCY, loginWorker)])
  results.push(duringFlood!)

  server.kill('SIGTERM')
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })

  const base = results[0]!
  const fmt = (ms: number) => ms.toFixed(2).padStart(8)
  console.log(`\n${SECONDS}s per scenario, ${CONCURRENCY} concurrent clients, ${navigator.hardwareConcurrency} cores\n`)
  console.log(`${'scenario'.padEnd(42)} ${'req/s'.padStart(8)} ${'x base'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(6)}`)
  for (const r of results) {
    console.log(`${r.name.padEnd(42)} ${r.perSecond.toFixed(0).padStart(8)} ${(r.perSecond / base.perSecond).toFixed(3).padStart(7)} ${fmt(r.p50)} ${fmt(r.p95)} ${fmt(r.p99)} ${String(r.errors).padStart(6)}`)
  }
}

await main()
await (await import('./timing')).timingBench()
await (await import('./flood')).floodBench()
await (await import('./engines')).enginesBench()
