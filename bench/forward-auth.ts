// Forward authentication (product spec §24): what a check costs, as ratios to things measured
// on the same machine in the same run, on SQLite and (when one is reachable) PostgreSQL.
//
// One server per engine, its public URL http://auth.example.test:<port>, protecting
// example.test, with AUTHD_TRUSTED_PROXIES=127.0.0.1. Its tenant has twelve groups and five
// access rules in seed.ts's shape (a bypass host, a bypass health path, app.example.test for
// the groups staff and admins, a two_factor path, every other host for anyone signed in); 8
// users in three groups each (staff among them) sign in on the login page before the clock
// starts, and each of the 32 clients presents one of their domain cookies
// (`authd_session_<tenant>`). Every check asked about is an allowed one, decided by the third
// rule (a rule with groups): the session's look-up, the user's groups, the Remote-* headers.
//
// In every round (BENCH_ROUNDS, 5 by default, of BENCH_SECONDS each, BENCH_CONCURRENCY clients):
// 1. GET /healthz, then the checks in turn (the order reversed every other round), then GET
//    /healthz again: each check's rate over the mean of the two /healthz rates around it
//    (issue goal: >= 0.5), and the server's own CPU per request (from /proc) beside it. The
//    checks: forward-auth (X-Forwarded-*), auth-request (X-Original-*), and, to tell where a
//    check's time goes, forward-auth on the bypass rule (no store read) without and with the
//    cookie.
// 2. Through Debian's nginx (/usr/sbin/nginx, BENCH_NGINX; a child process with its own
//    config in a temporary directory, one worker, on a free port, keep-alive to authd): a
//    small static page (12 bytes), unprotected, then behind `auth_request` to authd's
//    /t/{tenant}/authz/auth-request, then unprotected again; the clients send
//    `Host: app.example.test` and the cookie. The protected page's rate over the mean of the
//    two unprotected ones, with the CPU per page of nginx, authd and the load generator
//    (and on PostgreSQL, of its backends serving the bench database).
// 3. Two clients time forward-auth checks (and two GET /healthz, for bench/flood.ts's
//    reference) calm, then during a login flood: bench/flood.ts's own flood process (150
//    clients, BENCH_FLOOD, logging in with a password, argon2id, for BENCH_FLOOD_SECONDS).
//    The check's p99 during the flood over its calm p99 in the same round (goal: <= 2).
// Medians over the rounds, with the rounds' range.
//
//   npm run build && bun bench/forward-auth.ts
//   AUTHD_BENCH_POSTGRES_URL=postgres://root@127.0.0.1:5432/test BENCH_ROUNDS=6 bun bench/forward-auth.ts
//
// The domains, groups and rules are made through core/ (the functions `authd tenants update
// --forward-auth-domain` and `authd access-rules add` call), on the database the CLI made,
// before the server starts.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { setForwardAuthDomains } from '../src/core/forward-auth/domains'
import { addAccessRule } from '../src/core/forward-auth/rules'
import { addMembers, createGroup } from '../src/core/groups/groups'
import { openRuntime } from '../src/runtime'
import { cpuSeconds, load, median, ms, NO_LIMITS, onBenchDatabase, PASSWORD, startAuthd, type Result } from './lib'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const FLOOD_SECONDS = Number(process.env.BENCH_FLOOD_SECONDS ?? 5)
const NGINX = process.env.BENCH_NGINX ?? '/usr/sbin/nginx'
const ADMIN_URL = process.env.AUTHD_BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
const USERS = 8
const DOMAIN = 'example.test'
const APP_HOST = `app.${DOMAIN}`
const PAGE_PATH = '/dashboard?tab=1'
const GROUP_NAMES = ['admins', 'staff', 'developers', 'support', 'finance', 'sales', 'ops', 'readers', 'editors', 'grafana-admins', 'git-admins', 'hr']
const MEMBER_OF = ['staff', 'developers', 'readers']
const RULES = [
  { domain: `status.${DOMAIN}`, policy: 'bypass' },
  { domain: APP_HOST, paths: ['/api/health'], methods: ['GET', 'HEAD'], policy: 'bypass' },
  { domain: APP_HOST, policy: 'one_factor', groups: ['staff', 'admins'] },
  { domain: `git.${DOMAIN}`, paths: ['/admin'], policy: 'two_factor', groups: ['git-admins'] },
  { domain: `*.${DOMAIN}`, policy: 'one_factor' },
]

/** A port nothing listens on now (for a public URL that names authd's port before it starts). */
function freePort(): number {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = server.port!
  server.stop(true)
  return port
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

async function seedForwardAuth(env: Record<string, string>, dataDir: string, tenantId: string, userIds: string[]) {
  const runtime = await openRuntime(loadConfig({ ...process.env, ...env }, { dataDir }))
  try {
    await setForwardAuthDomains(runtime, tenantId, [DOMAIN])
    for (const name of GROUP_NAMES) {
      const group = await createGroup(runtime, { tenantId, name, description: 'A group of the bench' })
      if (MEMBER_OF.includes(name)) await addMembers(runtime, group.id, userIds)
    }
    for (const rule of RULES) await addAccessRule(runtime, tenantId, rule)
  } finally {
    runtime.close()
  }
}

/** Signs in on the login page as a browser does; the domain cookie (`name=value`) it was given. */
async function domainCookie(origin: string, publicUrl: string, tenantId: string, email: string): Promise<string> {
  const loginPath = `/t/${tenantId}/login`
  const cookiesOf = (response: Response) => response.headers.getSetCookie().map((c) => c.split(';')[0]!).filter((c) => !c.endsWith('='))
  const page = await fetch(origin + loginPath)
  const formCookies = cookiesOf(page)
  const token = /name="_form" value="([^"]+)"/.exec(await page.text())?.[1]
  if (!token) throw new Error(`the login page answered ${page.status} with no form`)
  const signedIn = await fetch(origin + loginPath, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: publicUrl, cookie: formCookies.join('; ') },
    body: new URLSearchParams({ _form: token, email, password: PASSWORD }),
    redirect: 'manual',
  })
  const cookie = cookiesOf(signedIn).find((c) => c.startsWith('authd_session_'))
  if (!cookie) throw new Error(`signing in on the page answered ${signedIn.status} with no domain cookie`)
  return cookie
}

/** nginx as a child process, its config, page and logs in a temporary directory. */
async function startNginx(authdPort: number, tenantId: string) {
  const dir = mkdtempSync(join(tmpdir(), 'authd-bench-nginx-'))
  // (nginx's worker runs as nobody when started as root: it must read the page)
  chmodSync(dir, 0o755)
  mkdirSync(join(dir, 'www'))
  writeFileSync(join(dir, 'www', 'hello.txt'), 'hello world\n')
  const port = freePort()
  const conf = join(dir, 'nginx.conf')
  writeFileSync(
    conf,
    `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  default_type text/plain;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream authd {
    server 127.0.0.1:${authdPort};
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    server_name ${APP_HOST};
    root ${dir}/www;
    # authd's check: a subrequest with no body, the original request in X-Original-*.
    location = /authd-check {
      internal;
      proxy_pass http://authd/t/${tenantId}/authz/auth-request;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host auth.${DOMAIN}:${authdPort};
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-URL $scheme://$server_name:$server_port$request_uri;
      proxy_set_header X-Original-Method $request_method;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }
    location /open/ {
      try_files /hello.txt =404;
    }
    location /app/ {
      auth_request /authd-check;
      auth_request_set $authd_user $upstream_http_remote_user;
      auth_request_set $authd_groups $upstream_http_remote_groups;
      add_header Remote-User $authd_user;
      add_header Remote-Groups $authd_groups;
      try_files /hello.txt =404;
    }
  }
}
`,
  )
  const proc = Bun.spawn([NGINX, '-p', dir, '-c', conf, '-e', join(dir, 'error.log'), '-g', 'daemon off;'], { stdout: 'inherit', stderr: 'inherit' })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`nginx exited (${proc.exitCode}): ${readFileSync(join(dir, 'error.log'), 'utf8').slice(-500)}`)
    if (await fetch(`${url}/open/`).then(() => true, () => false)) break
    if (i > 100) throw new Error('nginx did not start listening')
    await Bun.sleep(50)
  }
  const master = proc.pid
  const workers = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).map(Number)
  return {
    url,
    pids: [master, ...workers],
    async stop() {
      proc.kill('SIGQUIT')
      await proc.exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A load's result with the CPU each named set of processes spent per answered request (µs);
 *  `generator` is this process (the load generator). (A process gone meanwhile counts 0.) */
type Measured = Result & { cpu: Record<string, number> }
async function measured(name: string, pids: Record<string, number[]>, worker: (index: number) => () => Promise<Response>, seconds = SECONDS, concurrency = CONCURRENCY): Promise<Measured> {
  const cpuOf = () => Object.fromEntries(Object.entries(pids).map(([k, list]) => [k, list.reduce((s, pid) => s + (existsSync(`/proc/${pid}`) ? cpuSeconds(pid) : 0), 0)]))
  const generator = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6 }
  const before = cpuOf()
  const generatorBefore = generator()
  const result = await load(name, seconds, concurrency, worker)
  const after = cpuOf()
  const cpu: Record<string, number> = { generator: ((generator() - generatorBefore) * 1e6) / result.answered }
  for (const k of Object.keys(pids)) cpu[k] = ((after[k]! - before[k]!) * 1e6) / result.answered
  return { ...result, cpu }
}

const ok = (r: Result) => (r.statuses[200] ?? 0) / SECONDS
const others = (r: Result) => Object.entries(r.statuses).filter(([status]) => status !== '200').map(([s, n]) => `${n}x${s}`).join(' ')
const spread = (values: number[], digits = 2) => `${median(values).toFixed(digits)} (rounds ${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`

/** @param backends PostgreSQL's server processes serving authd's database (their CPU is part of a check's) */
async function measure(name: string, env: Record<string, string>, backends?: () => Promise<number[]>) {
  const authdPort = freePort()
  const publicUrl = `http://auth.${DOMAIN}:${authdPort}`
  const serverEnv = { ...NO_LIMITS, AUTHD_PUBLIC_URL: publicUrl, AUTHD_TRUSTED_PROXIES: '127.0.0.1', ...env }
  const emails = Array.from({ length: USERS }, (_, i) => `member${i}@example.com`)
  const authd = await startAuthd(serverEnv, {
    port: authdPort,
    seed: async (cli, tenantId, dataDir) => {
      const ids = emails.map((email) => cli(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'Bench', '--last-name', 'Member', '--password-stdin'], PASSWORD).userId as string)
      // (bench/flood.ts's flood process logs in as this user)
      cli(['users', 'create', '--tenant', tenantId, '--email', 'flood@example.com', '--first-name', 'F', '--last-name', 'L', '--password-stdin'], PASSWORD)
      await seedForwardAuth(serverEnv, dataDir, tenantId, ids)
    },
  })
  let nginx: Awaited<ReturnType<typeof startNginx>> | undefined
  try {
    const cookies: string[] = []
    for (const email of emails) cookies.push(await domainCookie(authd.url, publicUrl, authd.tenantId, email))
    const cookieOf = (index: number) => cookies[index % cookies.length]!
    const base = `${authd.url}/t/${authd.tenantId}/authz`
    const forwardAuth = (cookie: string) =>
      fetch(`${base}/forward-auth`, {
        headers: { 'x-forwarded-method': 'GET', 'x-forwarded-proto': 'http', 'x-forwarded-host': APP_HOST, 'x-forwarded-uri': PAGE_PATH, accept: 'text/html,application/xhtml+xml', cookie },
        redirect: 'manual',
      })
    const authRequest = (cookie: string) => fetch(`${base}/auth-request`, { headers: { 'x-original-url': `http://${APP_HOST}${PAGE_PATH}`, 'x-original-method': 'GET', cookie }, redirect: 'manual' })
    const health = () => fetch(`${authd.url}/healthz`)

    // Sanity: each way in admits a member of staff, by name and groups, and nobody without the cookie.
    for (const [what, ask] of [['forward-auth', forwardAuth], ['auth-request', authRequest]] as const) {
      const yes = await ask(cookies[0]!)
      if (yes.status !== 200 || yes.headers.get('remote-user') !== emails[0] || !yes.headers.get('remote-groups')?.includes('staff')) throw new Error(`${what} did not admit the member: ${yes.status} ${await yes.text()}`)
      const no = await ask('')
      if (no.status === 200) throw new Error(`${what} admitted a request without the cookie`)
    }
    if (existsSync(NGINX)) {
      nginx = await startNginx(authdPort, authd.tenantId)
      const page = await fetch(`${nginx.url}/app/home`, { headers: { host: APP_HOST, cookie: cookies[0]! } })
      if (page.status !== 200 || (await page.text()) !== 'hello world\n' || page.headers.get('remote-user') !== emails[0]) throw new Error(`nginx's protected page answered ${page.status} (${page.headers.get('remote-user')})`)
      const refused = await fetch(`${nginx.url}/app/home`, { headers: { host: APP_HOST } })
      if (refused.status !== 401) throw new Error(`nginx's protected page without the cookie answered ${refused.status}`)
    } else {
      console.log(`nginx skipped: no ${NGINX} (apt-get install nginx, or set BENCH_NGINX)`)
    }
    const nginxPage = (path: string) => (index: number) => () => fetch(`${nginx!.url}${path}`, { headers: { host: APP_HOST, cookie: cookieOf(index) } })
    const floodProcess = async () => {
      const child = Bun.spawn([process.execPath, join(import.meta.dir, 'flood.ts'), '--flood', authd.api, authd.key, String(FLOOD_SECONDS)], { stdout: 'pipe', stderr: 'inherit' })
      const out = await new Response(child.stdout).text()
      if ((await child.exited) !== 0) throw new Error('the flood process failed')
      return JSON.parse(out) as { ok: number; refused: number; p50: number; p99: number }
    }

    const pids: Record<string, number[]> = { authd: [authd.pid], nginx: nginx?.pids ?? [] }
    // The two checks, and (to tell where a check's time goes) the forward-auth endpoint on the
    // first rule, a bypass, which reads nothing from the store: without a cookie (the endpoint
    // itself), and with the member's cookie (which it parses and unseals all the same).
    const bypass = (cookie?: string) =>
      fetch(`${base}/forward-auth`, {
        headers: { 'x-forwarded-method': 'GET', 'x-forwarded-proto': 'http', 'x-forwarded-host': `status.${DOMAIN}`, 'x-forwarded-uri': PAGE_PATH, accept: 'text/html,application/xhtml+xml', ...(cookie && { cookie }) },
        redirect: 'manual',
      })
    const scenarios: Record<string, (index: number) => () => Promise<Response>> = {
      'forward-auth': (i) => () => forwardAuth(cookieOf(i)),
      'auth-request': (i) => () => authRequest(cookieOf(i)),
      'bypass rule, no cookie': () => () => bypass(),
      'bypass rule, cookie': (i) => () => bypass(cookieOf(i)),
    }
    // Uncounted: the JIT compiles a check's code in its first seconds (in a first 6 s window of
    // checks, its threads took 38-53 µs of CPU per check; 0-11 in later windows).
    await load('warm-up', 2, CONCURRENCY, () => health)
    for (const worker of Object.values(scenarios)) await load('warm-up', 2, CONCURRENCY, worker)
    if (nginx) for (const path of ['/open/', '/app/']) await load('warm-up', 2, CONCURRENCY, nginxPage(path))

    const ratios = { forwardAuth: [] as number[], authRequest: [] as number[], forwardAuthCpu: [] as number[], authRequestCpu: [] as number[], nginx: [] as number[], nginxCpu: [] as number[] }
    const flood = { calm: [] as number[], loaded: [] as number[], ratio: [] as number[], healthCalm: [] as number[], healthLoaded: [] as number[], logins: [] as number[] }
    const table: Record<string, Measured[]> = {}
    const keep = (r: Measured) => {
      ;(table[r.name] ??= []).push(r)
      if (others(r)) console.log(`  (${r.name}: ${others(r)} besides the 200s)`)
      return r
    }
    for (let round = 0; round < ROUNDS; round++) {
      if (backends) pids.postgres = await backends()
      // 1. The checks, between two /healthz loads, in turn (the order reversed every other round).
      const before = keep(await measured('GET /healthz', pids, () => health))
      const checks: Record<string, Measured> = {}
      const kinds = Object.keys(scenarios)
      for (const kind of round % 2 ? kinds.reverse() : kinds) checks[kind] = keep(await measured(kind, pids, scenarios[kind]!))
      const after = keep(await measured('GET /healthz', pids, () => health))
      const healthRate = (ok(before) + ok(after)) / 2
      const healthCpu = (before.cpu.authd! + after.cpu.authd!) / 2
      ratios.forwardAuth.push(ok(checks['forward-auth']!) / healthRate)
      ratios.authRequest.push(ok(checks['auth-request']!) / healthRate)
      ratios.forwardAuthCpu.push(healthCpu / checks['forward-auth']!.cpu.authd!)
      ratios.authRequestCpu.push(healthCpu / checks['auth-request']!.cpu.authd!)
      let nginxLine = ''
      // 2. The page through nginx: unprotected before and after, protected between.
      if (nginx) {
        const open1 = keep(await measured('nginx, page unprotected', pids, nginxPage('/open/')))
        const guarded = keep(await measured('nginx, page behind auth_request', pids, nginxPage('/app/')))
        const open2 = keep(await measured('nginx, page unprotected', pids, nginxPage('/open/')))
        const openRate = (ok(open1) + ok(open2)) / 2
        const openCpu = (open1.cpu.nginx! + open2.cpu.nginx! + open1.cpu.authd! + open2.cpu.authd!) / 2
        ratios.nginx.push(ok(guarded) / openRate)
        ratios.nginxCpu.push(openCpu / (guarded.cpu.nginx! + guarded.cpu.authd!))
        nginxLine = `; nginx open ${openRate.toFixed(0)}/s, protected ${ok(guarded).toFixed(0)}/s (${ratios.nginx.at(-1)!.toFixed(2)})`
      }
      // 3. The check's latency calm, then during a login flood (two clients each).
      const [calmCheck, calmHealth] = await Promise.all([
        load('forward-auth, calm', FLOOD_SECONDS, 2, (i) => () => forwardAuth(cookieOf(i))),
        load('GET /healthz, calm', FLOOD_SECONDS, 2, () => health),
      ])
      const [logins, floodCheck, floodHealth] = await Promise.all([
        floodProcess(),
        load('forward-auth, flood', FLOOD_SECONDS, 2, (i) => () => forwardAuth(cookieOf(i))),
        load('GET /healthz, flood', FLOOD_SECONDS, 2, () => health),
      ])
      for (const r of [calmCheck, calmHealth, floodCheck, floodHealth]) if (others(r)) throw new Error(`${r.name}: ${others(r)}`)
      flood.calm.push(calmCheck.p99)
      flood.loaded.push(floodCheck.p99)
      flood.ratio.push(floodCheck.p99 / calmCheck.p99)
      flood.healthCalm.push(calmHealth.p99)
      flood.healthLoaded.push(floodHealth.p99)
      flood.logins.push(logins.ok / FLOOD_SECONDS)
      console.log(
        `${name} round ${round + 1} (load ${loadAverage()}): /healthz ${healthRate.toFixed(0)}/s ${healthCpu.toFixed(0)} µs; forward-auth ${ok(checks['forward-auth']!).toFixed(0)}/s ${checks['forward-auth']!.cpu.authd!.toFixed(0)} µs (${ratios.forwardAuth.at(-1)!.toFixed(2)}); ` +
          `auth-request ${ok(checks['auth-request']!).toFixed(0)}/s ${checks['auth-request']!.cpu.authd!.toFixed(0)} µs (${ratios.authRequest.at(-1)!.toFixed(2)}); bypass ${checks['bypass rule, no cookie']!.cpu.authd!.toFixed(0)} µs, with the cookie ${checks['bypass rule, cookie']!.cpu.authd!.toFixed(0)} µs${nginxLine}; ` +
          `check p99 calm ${calmCheck.p99.toFixed(2)} ms, flood ${floodCheck.p99.toFixed(2)} ms (${flood.ratio.at(-1)!.toFixed(2)}x; ${logins.ok} logins, ${logins.refused} refused)`,
      )
      // (the logins still queued at the server finish before the next round)
      await Bun.sleep(2000)
    }
    return { name, ratios, flood, table }
  } finally {
    await nginx?.stop()
    await authd.stop()
  }
}

function report(r: Awaited<ReturnType<typeof measure>>) {
  const { ratios, flood, table } = r
  const pg = 'postgres' in Object.values(table)[0]!.at(-1)!.cpu
  console.log(`\n${r.name}: last round, per scenario (CPU per request in µs: authd's, nginx's, ${pg ? "PostgreSQL's backends', " : ''}the load generator's)`)
  console.log(`  ${'scenario'.padEnd(34)} ${'ok/s'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'authd'.padStart(6)} ${'nginx'.padStart(6)}${pg ? ' postgres' : ''} ${'gen'.padStart(6)}`)
  for (const [name, results] of Object.entries(table)) {
    const x = results.at(-1)!
    console.log(`  ${name.padEnd(34)} ${ok(x).toFixed(0).padStart(7)} ${ms(x.p50)} ${ms(x.p99)} ${x.cpu.authd!.toFixed(0).padStart(6)} ${(x.cpu.nginx ?? 0).toFixed(0).padStart(6)}${pg ? (x.cpu.postgres ?? 0).toFixed(0).padStart(9) : ''} ${x.cpu.generator!.toFixed(0).padStart(6)}`)
  }
  const medianOf = (name: string, k: string) => median(table[name]!.map((x) => x.cpu[k]!))
  const µs = (name: string, k = 'authd') => `${medianOf(name, k).toFixed(0)} µs`
  console.log(`  authd's CPU per request, medians over the rounds: /healthz ${µs('GET /healthz')}; forward-auth on the bypass rule without a cookie ${µs('bypass rule, no cookie')}, with the cookie ${µs('bypass rule, cookie')}; ` +
    `the allowed check (session, groups) forward-auth ${µs('forward-auth')}, auth-request ${µs('auth-request')}`)
  if (pg) console.log(`  PostgreSQL's backends', the same way: /healthz ${µs('GET /healthz', 'postgres')}, forward-auth ${µs('forward-auth', 'postgres')}, auth-request ${µs('auth-request', 'postgres')}`)
  console.log(`  the load generator's, the same way: /healthz ${µs('GET /healthz', 'generator')}, forward-auth ${µs('forward-auth', 'generator')}, auth-request ${µs('auth-request', 'generator')}`)
  if (table['nginx, page behind auth_request']) {
    const [open, guarded] = ['nginx, page unprotected', 'nginx, page behind auth_request']
    console.log(`  median CPU per page over the rounds: unprotected nginx ${µs(open, 'nginx')}; protected nginx ${µs(guarded, 'nginx')} + authd ${µs(guarded)}${pg ? ` + PostgreSQL ${µs(guarded, 'postgres')}` : ''}; the load generator ${µs(open, 'generator')} and ${µs(guarded, 'generator')}`)
  }
  const target = (what: string, value: string, met: boolean, goal: string) => console.log(`  ${what.padEnd(58)} ${value}  (goal ${goal})${met ? '' : '  NOT MET'}`)
  console.log(`\n${r.name}: medians over ${ROUNDS} rounds (the rounds' range)`)
  target('forward-auth checks/s / GET /healthz/s', spread(ratios.forwardAuth), median(ratios.forwardAuth) >= 0.5, '>= 0.5')
  target('auth-request checks/s / GET /healthz/s', spread(ratios.authRequest), median(ratios.authRequest) >= 0.5, '>= 0.5')
  console.log(`  ${'by CPU, /healthz µs / forward-auth µs'.padEnd(58)} ${spread(ratios.forwardAuthCpu)}`)
  console.log(`  ${'by CPU, /healthz µs / auth-request µs'.padEnd(58)} ${spread(ratios.authRequestCpu)}`)
  if (ratios.nginx.length > 0) {
    console.log(`  ${'nginx: pages/s behind auth_request / unprotected'.padEnd(58)} ${spread(ratios.nginx)}`)
    console.log(`  ${'  by CPU (nginx + authd), unprotected / protected'.padEnd(58)} ${spread(ratios.nginxCpu)}`)
  }
  console.log(`  ${'forward-auth p99 calm, ms'.padEnd(58)} ${spread(flood.calm)}`)
  console.log(`  ${'forward-auth p99 during the login flood, ms'.padEnd(58)} ${spread(flood.loaded)}`)
  target('  flood p99 / calm p99 (each round its own)', spread(flood.ratio), median(flood.ratio) <= 2, '<= 2')
  console.log(`  ${'GET /healthz p99 calm, during the flood, ms'.padEnd(58)} ${spread(flood.healthCalm)}, ${spread(flood.healthLoaded)}`)
  console.log(`  ${'successful logins/s during the flood'.padEnd(58)} ${spread(flood.logins, 1)}`)
}

export async function forwardAuthBench() {
  console.log(`forward auth: ${ROUNDS} rounds of ${SECONDS} s, ${CONCURRENCY} clients, floods of ${FLOOD_SECONDS} s, ${navigator.hardwareConcurrency} cores; load average at the start ${loadAverage()}`)
  const results = [await measure('SQLite', {})]
  const onPostgres = await onBenchDatabase(ADMIN_URL, (url, backends) => measure('PostgreSQL', { AUTHD_DATABASE_URL: url }, backends))
  if (onPostgres) results.push(onPostgres)
  for (const r of results) report(r)
  console.log(`\nload average at the end ${loadAverage()}`)
}

if (import.meta.main) await forwardAuthBench()
