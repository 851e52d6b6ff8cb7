// Machines (issue 48, product spec §26): what a service client's token and an introspection
// cost, as ratios to authd's own refresh hot path (GET /api/v1/auth/refresh-token, as
// bench/throughput.ts and bench/groups.ts drive it) measured in the same rounds, on SQLite and
// (when one is reachable) PostgreSQL.
//
// One server per engine; its tenant has a service client made through the CLI (`authd clients
// create --service --scopes read --audience https://api.example`) and 8 users, whose 32
// families sign in before the clock starts (one per client, as bench/groups.ts does). In every
// round (BENCH_ROUNDS, 5 by default, of BENCH_SECONDS each, BENCH_CONCURRENCY clients):
// refreshes, then (a) POST /t/{tenant}/token grant_type=client_credentials with
// client_secret_basic and (b) POST /t/{tenant}/introspect of one such token (minted at the
// round's start) by the same client, in turn (the order reversed every other round), then
// refreshes again. Each scenario's rate (2xx only) over the mean of the two refresh rates
// around it; goals: client_credentials / refresh >= 0.5, introspect / client_credentials >= 1.
// Each load also records the server's own CPU per request (from /proc), and on PostgreSQL its
// backends' for the bench database. Medians over the rounds, with the rounds' range.
//
// To tell where the time goes, each round then runs four probes (BENCH_PROBES=0 skips them),
// each the same request cut short at a known point, by its CPU per request: client_credentials
// asking a scope the client lacks (invalid_scope: the form, the tenant, the client's look-up and
// secret check, and no signature, no audit row); introspection of a malformed token (the same
// and the form's token, no verification); of a service token with its signature altered (the
// verification, failing, and no look-up of the token's client); the full introspection adds the
// look-up of the token's client. In this process, an ES256 signature as authd signs (node:crypto,
// synchronously) and a verification as introspection verifies (jose's jwtVerify) are timed one
// at a time, for the share of each.
//
//   npm run build && bun bench/machines.ts
//   AUTHD_BENCH_POSTGRES_URL=postgres://root@127.0.0.1:5432/test BENCH_ROUNDS=6 bun bench/machines.ts
import { generateKeyPairSync, sign, verify } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { jwtVerify } from 'jose'
import { cpuSeconds, load, median, NO_LIMITS, onBenchDatabase, PASSWORD, startAuthd, type Result } from './lib'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const ADMIN_URL = process.env.AUTHD_BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
const USERS = 8
const AUDIENCE = 'https://api.example'
/** BENCH_PROBES=0 skips the probes that tell where a request's time goes (below). */
const PROBES = process.env.BENCH_PROBES !== '0'

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
/** Successful answers (a refresh answers 201, the token and introspection endpoints 200). */
const okPerSecond = (r: Result) => Object.entries(r.statuses).reduce((n, [status, count]) => (Number(status) < 300 ? n + count : n), 0) / SECONDS
const spread = (values: number[], digits = 2) => `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`

/** A load's result with the CPU (µs per answered request) of authd and of PostgreSQL's backends. */
type Measured = Result & { authdUs: number; backendUs: number }
async function measured(name: string, pid: number, backends: () => Promise<number[]>, worker: (index: number) => () => Promise<Response>): Promise<Measured> {
  const pgPids = await backends()
  const cpuOf = (pids: number[]) => pids.reduce((s, p) => { try { return s + cpuSeconds(p) } catch { return s } }, 0)
  const before = { authd: cpuSeconds(pid), pg: cpuOf(pgPids) }
  const result = await load(name, SECONDS, CONCURRENCY, worker)
  const per = (seconds: number) => (seconds * 1e6) / result.answered
  return { ...result, authdUs: per(cpuSeconds(pid) - before.authd), backendUs: per(cpuOf(pgPids) - before.pg) }
}

async function measure(name: string, env: Record<string, string>, backends: () => Promise<number[]> = async () => []) {
  const service = { clientId: '', secret: '' }
  const emails = Array.from({ length: USERS }, (_, i) => `user${i}@example.com`)
  const authd = await startAuthd(
    { ...NO_LIMITS, ...env },
    {
      seed: (cli, tenantId) => {
        for (const email of emails) cli(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'B', '--last-name', 'M', '--password-stdin'], PASSWORD)
        const created = cli(['clients', 'create', '--tenant', tenantId, '--name', 'Bench service', '--service', '--scopes', 'read', '--audience', AUDIENCE])
        service.clientId = created.client.clientId
        service.secret = created.clientSecret
      },
    },
  )
  try {
    const issuer = `${authd.url}/t/${authd.tenantId}`
    const basic = `Basic ${btoa(`${service.clientId}:${service.secret}`)}`
    const form = (path: string, fields: Record<string, string>) =>
      fetch(`${issuer}${path}`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) })
    const clientCredentials = () => form('/token', { grant_type: 'client_credentials' })
    const serviceToken = async () => {
      const answer = await clientCredentials()
      const body = (await answer.json()) as { access_token?: string }
      if (!body.access_token) throw new Error(`client_credentials answered ${answer.status}: ${JSON.stringify(body)}`)
      return body.access_token
    }

    const login = (email: string) =>
      fetch(`${authd.api}/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': authd.key }, body: JSON.stringify({ email, password: PASSWORD }) })
    const cookieOf = (r: Response) => /refreshToken=([^;]+)/.exec(r.headers.get('set-cookie') ?? '')?.[1]
    // One family per client, signed in one at a time before the clock starts.
    const cookies: string[] = []
    for (let i = 0; i < CONCURRENCY; i++) {
      const cookie = cookieOf(await login(emails[i % USERS]!))
      if (!cookie) throw new Error('a bench login failed')
      cookies.push(cookie)
    }
    const refreshWorker = (index: number) => async () => {
      const response = await fetch(`${authd.api}/refresh-token`, { headers: { cookie: `refreshToken=${cookies[index]}` } })
      cookies[index] = cookieOf(response) ?? cookies[index]!
      return response
    }

    // Sanity: the token introspects as active, to this client, with the asked audience's default.
    const sample = await serviceToken()
    const told = (await (await form('/introspect', { token: sample })).json()) as { active?: boolean; client_id?: string; scope?: string }
    if (told.active !== true || told.client_id !== service.clientId) throw new Error(`introspection of a fresh service token: ${JSON.stringify(told)}`)
    const claims = JSON.parse(Buffer.from(sample.split('.')[1]!, 'base64url').toString())
    console.log(`${name}: service token ${sample.length} bytes, aud ${JSON.stringify(claims.aud)}, scope ${claims.scope}; introspection says ${JSON.stringify(told)}`)

    // A 2 s warm-up of each, uncounted (the JIT's first windows cost more).
    for (const worker of [refreshWorker, () => clientCredentials, () => () => form('/introspect', { token: sample })]) await load('warm-up', 2, CONCURRENCY, worker)

    const rounds: Array<{ refresh: number; cc: Measured; introspect: Measured; refreshes: [Measured, Measured]; probes: Record<string, Measured> }> = []
    for (let round = 0; round < ROUNDS; round++) {
      const token = await serviceToken()
      const scenarios = {
        cc: () => measured(`${name} POST /token (client_credentials)`, authd.pid, backends, () => clientCredentials),
        introspect: () => measured(`${name} POST /introspect`, authd.pid, backends, () => () => form('/introspect', { token })),
      }
      const before = await measured(`${name} GET /refresh-token`, authd.pid, backends, refreshWorker)
      const order = round % 2 ? (['introspect', 'cc'] as const) : (['cc', 'introspect'] as const)
      const got = {} as Record<'cc' | 'introspect', Measured>
      for (const kind of order) got[kind] = await scenarios[kind]()
      const after = await measured(`${name} GET /refresh-token`, authd.pid, backends, refreshWorker)
      const refresh = (okPerSecond(before) + okPerSecond(after)) / 2
      const probes: Record<string, Measured> = {}
      if (PROBES) {
        const [head, payload, signature] = token.split('.') as [string, string, string]
        const altered = `${head}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`
        const cuts: Record<string, () => Promise<Response>> = {
          'cc, invalid_scope': () => form('/token', { grant_type: 'client_credentials', scope: 'write' }),
          'introspect, malformed token': () => form('/introspect', { token: 'x.y.z' }),
          'introspect, altered signature': () => form('/introspect', { token: altered }),
        }
        for (const [label, request] of Object.entries(cuts)) probes[label] = await measured(`${name} ${label}`, authd.pid, backends, () => request)
      }
      rounds.push({ refresh, cc: got.cc, introspect: got.introspect, refreshes: [before, after], probes })
      const line = (r: Measured) => `${okPerSecond(r).toFixed(0)}/s p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms, ${r.authdUs.toFixed(0)}${name === 'PostgreSQL' ? `+${r.backendUs.toFixed(0)}` : ''} µs CPU${Object.keys(r.statuses).some((s) => Number(s) >= 300) ? ` statuses ${JSON.stringify(r.statuses)}` : ''}`
      console.log(`${name} round ${round + 1} (load ${loadAverage()}): refresh ${line(before)} | ${order[0]} ${line(got[order[0]])} | ${order[1]} ${line(got[order[1]])} | refresh ${line(after)}`)
      for (const [label, r] of Object.entries(probes)) console.log(`  probe ${label}: ${(r.requests / SECONDS).toFixed(0)}/s ${r.authdUs.toFixed(0)}${name === 'PostgreSQL' ? `+${r.backendUs.toFixed(0)}` : ''} µs CPU statuses ${JSON.stringify(r.statuses)}`)
    }
    return { name, rounds }
  } finally {
    await authd.stop()
  }
}

export async function machinesBench() {
  console.log(`Machines: ${ROUNDS} rounds of ${SECONDS}s per scenario, ${CONCURRENCY} clients, ${navigator.hardwareConcurrency} cores, load average ${loadAverage()}\n`)
  const results = [await measure('SQLite', {})]
  const onPostgres = await onBenchDatabase(ADMIN_URL, (url, backends) => measure('PostgreSQL', { AUTHD_DATABASE_URL: url }, backends))
  if (onPostgres) results.push(onPostgres)
  console.log(`\nMedians over ${ROUNDS} rounds (the rounds' range in brackets); refresh is the mean of the refreshes before and after in each round\n`)
  for (const { name, rounds } of results) {
    const all = (pick: (r: (typeof rounds)[number]) => Measured[]) => rounds.flatMap(pick)
    const row = (label: string, rs: Measured[]) => {
      const pg = name === 'PostgreSQL' ? ` + backends ${spread(rs.map((r) => r.backendUs), 0)}` : ''
      console.log(`  ${label.padEnd(30)} ${spread(rs.map(okPerSecond), 0).padStart(22)} req/s   p50 ${spread(rs.map((r) => r.p50))} ms   p99 ${spread(rs.map((r) => r.p99))} ms   authd CPU ${spread(rs.map((r) => r.authdUs), 0)} µs${pg}`)
    }
    console.log(`${name}`)
    row('GET /refresh-token', all((r) => r.refreshes))
    row('POST /token client_credentials', all((r) => [r.cc]))
    row('POST /introspect', all((r) => [r.introspect]))
    const ccOverRefresh = rounds.map((r) => okPerSecond(r.cc) / r.refresh)
    const inOverRefresh = rounds.map((r) => okPerSecond(r.introspect) / r.refresh)
    const inOverCc = rounds.map((r) => okPerSecond(r.introspect) / okPerSecond(r.cc))
    const cpu = (r: Measured) => r.authdUs + r.backendUs
    const refreshCpu = (r: (typeof rounds)[number]) => (cpu(r.refreshes[0]) + cpu(r.refreshes[1])) / 2
    console.log(`  client_credentials / refresh   ${spread(ccOverRefresh)}   rounds ${ccOverRefresh.map((x) => x.toFixed(2)).join(' ')}   (goal >= 0.5: ${median(ccOverRefresh) >= 0.5 ? 'met' : 'NOT met'})`)
    console.log(`  introspect / refresh           ${spread(inOverRefresh)}   rounds ${inOverRefresh.map((x) => x.toFixed(2)).join(' ')}`)
    console.log(`  introspect / client_credentials ${spread(inOverCc)}   rounds ${inOverCc.map((x) => x.toFixed(2)).join(' ')}   (goal >= 1: ${median(inOverCc) >= 1 ? 'met' : 'NOT met'})`)
    console.log(`  by CPU per request, refresh / client_credentials ${spread(rounds.map((r) => refreshCpu(r) / cpu(r.cc)))}, refresh / introspect ${spread(rounds.map((r) => refreshCpu(r) / cpu(r.introspect)))}`)
    if (PROBES) {
      const labels = Object.keys(rounds[0]!.probes)
      const authdUs = (pick: (r: (typeof rounds)[number]) => Measured) => median(rounds.map((r) => pick(r).authdUs))
      const backendUs = (pick: (r: (typeof rounds)[number]) => Measured) => median(rounds.map((r) => pick(r).backendUs))
      const cell = (pick: (r: (typeof rounds)[number]) => Measured) => `${authdUs(pick).toFixed(0)}${name === 'PostgreSQL' ? ` + ${backendUs(pick).toFixed(0)}` : ''} µs`
      console.log(`  where the time goes, CPU per request (median over the rounds; authd${name === 'PostgreSQL' ? ' + its backends' : ''}):`)
      console.log(`    refresh ${cell((r) => r.refreshes[0])}; client_credentials ${cell((r) => r.cc)}; introspect ${cell((r) => r.introspect)}`)
      for (const label of labels) console.log(`    ${label}: ${cell((r) => r.probes[label]!)}`)
    }
    console.log('')
  }
  const micro = await signatureTimes()
  console.log(`In this process, one at a time: an ES256 signature (node:crypto) ${micro.signUs.toFixed(0)} µs, an ES256 verification with node:crypto ${micro.verifyUs.toFixed(0)} µs, with jose's jwtVerify ${micro.joseUs.toFixed(0)} µs`)
}

/** µs per ES256 signature and verification, as authd signs (node:crypto) and as introspection verifies (jose). */
async function signatureTimes() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const input = `${b64({ alg: 'ES256', typ: 'at+jwt', kid: 'k' })}.${b64({ iss: 'https://auth.example/t/x', sub: 'c', client_id: 'c', aud: 'urn:x', scope: 'read', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 900, jti: Bun.randomUUIDv7() })}`
  const signature = () => sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' })
  const jwt = `${input}.${signature().toString('base64url')}`
  const timeOf = async (once: () => unknown) => {
    let n = 0
    const start = performance.now()
    while (performance.now() - start < 1000) {
      await once()
      n++
    }
    return ((performance.now() - start) * 1000) / n
  }
  const sig = signature()
  return {
    signUs: await timeOf(signature),
    verifyUs: await timeOf(() => verify('sha256', Buffer.from(input), { key: publicKey, dsaEncoding: 'ieee-p1363' }, sig)),
    joseUs: await timeOf(() => jwtVerify(jwt, publicKey, { algorithms: ['ES256'], typ: 'at+jwt' })),
  }
}

if (import.meta.main) await machinesBench()
