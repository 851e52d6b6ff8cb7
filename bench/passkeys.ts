// Passwordless sign-ins per second beside password logins and refreshes, in the same run, on
// the compiled binary. A passkey sign-in verifies one ECDSA signature, no argon2: it should run
// near the refresh rate (it also writes a session and a challenge), not the login rate. Each
// client is a user of its own with its own software authenticator (one credential, so its
// signature counter only moves forward); a sign-in is its two requests, options and login.
//
//   npm run build && bun bench/passkeys.ts
//   BENCH_SECONDS=10 BENCH_ROUNDS=3 bun bench/passkeys.ts
import { SoftwareAuthenticator } from '../test/software-authenticator'
import { load, median, ms, NO_LIMITS, PASSWORD, startAuthd, type Result } from './lib'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const ORIGIN = 'https://auth.example.com'

const cookieOf = (r: Response) => /refreshToken=([^;]+)/.exec(r.headers.get('set-cookie') ?? '')?.[1]

export async function passkeysBench() {
  const emails = Array.from({ length: CONCURRENCY }, (_, i) => `passkey${i}@example.com`)
  const authd = await startAuthd(
    { ...NO_LIMITS, AUTHD_PUBLIC_URL: ORIGIN },
    { seed: (cli, tenantId) => emails.forEach((email) => cli(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'P', '--last-name', 'K', '--password-stdin'], PASSWORD)) },
  )
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${authd.api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': authd.key, ...headers }, body: JSON.stringify(body) })
  const login = (i: number) => post('/login', { email: emails[i % emails.length], password: PASSWORD })
  try {
    // Each client's user gets a passkey, one at a time (the logins' hashing is not measured).
    const authenticators: SoftwareAuthenticator[] = []
    for (let i = 0; i < CONCURRENCY; i++) {
      const authenticator = new SoftwareAuthenticator('auth.example.com', ORIGIN)
      const token = ((await (await login(i)).json()) as any).data.response.accessToken
      const bearer = { authorization: `Bearer ${token}` }
      const { data } = (await (await post('/passkeys/register/options', {}, bearer)).json()) as any
      const added = await post('/passkeys/register', { challengeId: data.challengeId, response: authenticator.register(data.options) }, bearer)
      if (added.status !== 201) throw new Error(`registering a bench passkey: ${added.status}`)
      authenticators.push(authenticator)
    }
    const signIn = (i: number) => async () => {
      const { data } = (await (await post('/passkeys/login/options', {})).json()) as any
      return post('/passkeys/login', { challengeId: data.challengeId, response: authenticators[i]!.assert(data.options) })
    }
    const refresher = (cookies: string[]) => (i: number) => {
      let cookie = cookies[i]!
      return async () => {
        const response = await fetch(`${authd.api}/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } })
        cookie = cookieOf(response) ?? cookie
        return response
      }
    }
    const okPerSecond = (r: Result, status: number) => (r.statuses[status] ?? 0) / SECONDS
    const rounds: Array<{ passkey: Result; login: Result; refresh: Result }> = []
    for (let r = 0; r < ROUNDS; r++) {
      const cookies: string[] = []
      for (let i = 0; i < CONCURRENCY; i++) cookies.push(cookieOf(await login(i))!)
      const refresh = await load('authd GET /refresh-token', SECONDS, CONCURRENCY, refresher(cookies))
      const passkey = await load('authd passkey sign-in (options + login)', SECONDS, CONCURRENCY, signIn)
      const password = await load('authd POST /login (argon2id)', SECONDS, CONCURRENCY, (i) => () => login(i))
      rounds.push({ passkey, login: password, refresh })
    }
    const last = rounds.at(-1)!
    console.log(`\n${SECONDS}s per scenario, ${CONCURRENCY} clients, ${ROUNDS} rounds, ${navigator.hardwareConcurrency} cores\n`)
    console.log(`${'scenario (last round)'.padEnd(42)} ${'ok/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(6)}`)
    for (const [r, status] of [[last.refresh, 201], [last.passkey, 201], [last.login, 201]] as const) {
      console.log(`${r.name.padEnd(42)} ${okPerSecond(r, status).toFixed(0).padStart(8)} ${ms(r.p50)} ${ms(r.p99)} ${String(r.errors).padStart(6)}`)
    }
    const ratio = (a: 'passkey' | 'login', b: 'passkey' | 'login' | 'refresh') => rounds.map((round) => okPerSecond(round[a], 201) / okPerSecond(round[b], 201))
    const line = (label: string, values: number[]) => console.log(`  ${label.padEnd(52)} ${median(values).toFixed(2).padStart(6)}  rounds ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`)
    console.log('\nratios (median over the rounds, and their range)')
    line('passkey sign-ins per s / logins per s', ratio('passkey', 'login'))
    line('passkey sign-ins per s / refreshes per s', ratio('passkey', 'refresh'))
  } finally {
    await authd.stop()
  }
}

if (import.meta.main) await passkeysBench()
