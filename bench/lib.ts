// Shared by the benchmarks: start dist/authd in its own process, drive its CLI, summarise.
import { SQL } from 'bun'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** BENCH_BINARY runs another build (an older one, to compare, or a profiling wrapper). */
export const BINARY = process.env.BENCH_BINARY ?? join(import.meta.dir, '..', 'dist/authd')
export const PASSWORD = 'correct horse battery staple'

/** Limits out of the way: the benchmarks measure work, not throttling. */
export const NO_LIMITS = {
  AUTHD_LOGIN_BACKOFF_AFTER: '1000',
  AUTHD_LOGIN_ACCOUNT_BACKOFF_AFTER: '100000',
  AUTHD_LOGIN_IP_FAILURES: '1000000',
  AUTHD_FORGOT_IP_PER_HOUR: '1000000',
  AUTHD_PASSKEY_OPTIONS_IP_PER_10MIN: '1000000',
  AUTHD_FORGOT_ADDRESS_INTERVAL: '1s',
  AUTHD_FORGOT_ADDRESS_PER_HOUR: '1000',
  AUTHD_SIGNUP_IP_PER_HOUR: '1000000',
  AUTHD_PASSWORD_IP_PER_10MIN: '1000000',
}

type Cli = (args: string[], stdin?: string) => any

/**
 * @param env settings for the CLI and the server
 * @param options.seed runs before the server starts (with the CLI, its settings being `env` only,
 *   and the data directory), and may be async (bench/scale.ts fills the database)
 * @param options.serveEnv settings for the server only, over `env`
 * @param options.binary another build than BINARY (an A/B of two builds in one run)
 * @param options.port the first server's port (default any free one): for a public URL that
 *   names it, set before the server starts (bench/forward-auth.ts)
 */
export async function startAuthd(
  env: Record<string, string> = {},
  options: { seed?: (cli: Cli, tenantId: string, dataDir: string) => void | Promise<void>; serveEnv?: Record<string, string>; binary?: string; existingDataDir?: string; port?: number } = {},
) {
  const binary = options.binary ?? BINARY
  if (!(await Bun.file(binary).exists())) throw new Error('build first: npm run build')
  // existingDataDir: a database made earlier (a seeded one, bench/scale.ts), kept after stop();
  // its tenant named Bench is the bench's (made if absent).
  const dataDir = options.existingDataDir ?? mkdtempSync(join(tmpdir(), 'authd-bench-'))
  const cli: Cli = (args: string[], stdin?: string) => {
    const r = Bun.spawnSync([binary, '--data-dir', dataDir, '--json', ...args], { stdin: stdin ? new TextEncoder().encode(stdin) : 'ignore', env: { ...process.env, ...env } })
    if (r.exitCode !== 0) throw new Error(`authd ${args.join(' ')}: ${r.stderr}`)
    return JSON.parse(r.stdout.toString())
  }
  const existing = options.existingDataDir || env.AUTHD_DATABASE_URL ? (cli(['tenants', 'list']) as Array<{ tenantId: string; name: string }>).find((t) => t.name === 'Bench') : undefined
  const { tenantId } = existing ?? cli(['tenants', 'create', '--name', 'Bench'])
  const { key } = cli(['api-keys', 'create', '--tenant', tenantId])
  await options.seed?.(cli, tenantId, dataDir)
  const serverEnv = { ...process.env, ...env, ...options.serveEnv }
  const spawnedAt = performance.now()
  const first = await spawnServer(dataDir, serverEnv, binary, options.port)
  /** From the spawn to the "listening" log line. */
  const startupMs = performance.now() - spawnedAt
  const extra: Array<Awaited<ReturnType<typeof spawnServer>>> = []
  return {
    url: first.url,
    api: `${first.url}/api/v1/auth`,
    key: key as string,
    tenantId: tenantId as string,
    pid: first.proc.pid,
    startupMs,
    dataDir,
    cli,
    /** Resident memory of the server now, and its peak so far (MiB), from /proc. */
    memory() {
      const status = readFileSync(`/proc/${first.proc.pid}/status`, 'utf8')
      const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN)
      return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 }
    },
    /** Another `authd serve` on the same database (PostgreSQL); returns its API base URL. */
    async addInstance(): Promise<string> {
      const server = await spawnServer(dataDir, serverEnv, binary)
      extra.push(server)
      return `${server.url}/api/v1/auth`
    },
    async stop() {
      for (const { proc } of [first, ...extra]) proc.kill('SIGTERM')
      await Promise.all([first, ...extra].map(({ proc }) => proc.exited))
      if (!options.existingDataDir) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

const spawnServer = (dataDir: string, env: Record<string, string | undefined>, binary = BINARY, port = 0) => spawnListening([binary, '--data-dir', dataDir, 'serve', '--port', String(port)], env)

/** Starts a server (authd, or a yardstick of baseline-server.ts) and waits for the log line
 *  that says where it listens; its log is drained from then on. */
export async function spawnListening(command: string[], env: Record<string, string | undefined> = process.env) {
  const proc = Bun.spawn(command, { stdout: 'pipe', stderr: 'inherit', env })
  const reader = proc.stdout.getReader()
  let out = ''
  while (!out.includes('"msg":"listening"')) out += new TextDecoder().decode((await reader.read()).value)
  reader.releaseLock()
  void proc.stdout.pipeTo(new WritableStream()) // keep draining the log
  const url = JSON.parse(out.split('\n').find((l) => l.includes('"msg":"listening"'))!).url as string
  return { proc, url }
}

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
export const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50)
export const ms = (value: number) => value.toFixed(2).padStart(8)

/** 95% bootstrap confidence interval of the median. */
export function bootstrapMedianCI(values: number[], resamples = 2000): [number, number] {
  const medians: number[] = []
  for (let r = 0; r < resamples; r++) {
    const sample = Array.from({ length: values.length }, () => values[Math.floor(Math.random() * values.length)]!)
    medians.push(median(sample))
  }
  medians.sort((a, b) => a - b)
  return [percentile(medians, 2.5), percentile(medians, 97.5)]
}

export async function timed(request: () => Promise<Response>): Promise<{ ms: number; status: number }> {
  const start = performance.now()
  const response = await request()
  await response.arrayBuffer()
  return { ms: performance.now() - start, status: response.status }
}

export interface Result {
  name: string
  /** Responses completed inside the window. */
  requests: number
  /** Every response, those completed after the window included (CPU is measured over all). */
  answered: number
  errors: number
  /** How many answered each status inside the window. */
  statuses: Record<number, number>
  perSecond: number
  p50: number
  p95: number
  p99: number
  /** The server process's own CPU time per request (user + system), when measured. */
  cpuUsPerRequest?: number
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux; ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** `load`, with the CPU the server process `pid` spent per request meanwhile. */
export async function loadWithCpu(pid: number, ...args: Parameters<typeof load>): Promise<Result> {
  const before = cpuSeconds(pid)
  const result = await load(...args)
  return { ...result, cpuUsPerRequest: ((cpuSeconds(pid) - before) * 1e6) / result.answered }
}

/**
 * Runs `concurrency` closed loops for `seconds`; each loop's worker keeps its own state.
 * Throughput (`requests`, `perSecond`, `statuses`) counts the responses completed inside the
 * window. A request still in flight at the deadline is awaited and its latency recorded, but
 * it is not counted: each client would otherwise add a completion the window did not pay for,
 * which for logins (32 in flight, ~60 answered a second) read ~6% high.
 */
export async function load(name: string, seconds: number, concurrency: number, makeWorker: (index: number) => () => Promise<Response>): Promise<Result> {
  const latencies: number[] = []
  let errors = 0
  let requests = 0
  const statuses: Record<number, number> = {}
  const deadline = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: concurrency }, async (_, index) => {
      const request = makeWorker(index)
      while (performance.now() < deadline) {
        const start = performance.now()
        const response = await request()
        await response.arrayBuffer()
        const end = performance.now()
        latencies.push(end - start)
        if (response.status >= 500 || response.status === 401) errors++
        if (end > deadline) continue
        requests++
        statuses[response.status] = (statuses[response.status] ?? 0) + 1
      }
    }),
  )
  latencies.sort((a, b) => a - b)
  return { name, requests, answered: latencies.length, errors, statuses, perSecond: requests / seconds, p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) }
}

/**
 * Runs `measure` on a PostgreSQL database made for it on the server of `adminUrl` and dropped
 * afterwards, given its URL and a way to list the backends serving it; says so and returns
 * null when no server answers there.
 */
export async function onBenchDatabase<T>(adminUrl: string, measure: (url: string, backends: () => Promise<number[]>) => Promise<T>): Promise<T | null> {
  const admin = new SQL(adminUrl, { max: 1, connectionTimeout: 3 })
  try {
    try {
      await admin`SELECT 1`
    } catch (error) {
      console.log(`PostgreSQL skipped: none at ${adminUrl.replace(/\/\/[^@]*@/, '//…@')} (${(error as Error).message}); set AUTHD_BENCH_POSTGRES_URL`)
      return null
    }
    const database = `authd_bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    const url = new URL(adminUrl)
    url.pathname = `/${database}`
    try {
      await admin.unsafe(`CREATE DATABASE ${database}`)
      const backends = async () => (await admin`SELECT pid FROM pg_stat_activity WHERE datname = ${database}`).map((row: { pid: number }) => row.pid)
      return await measure(url.toString(), backends)
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {})
    }
  } finally {
    await admin.close()
  }
}
