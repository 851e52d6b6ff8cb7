// Does a registered address take measurably longer than an unknown one? Paired timing:
// requests alternate registered / unknown (order flipped every pair, so drift and warm-up
// cancel out), and we report the median of the per-pair differences with a bootstrap 95%
// confidence interval. An interval that straddles 0 means no difference we can detect.
import { writeFileSync } from 'node:fs'
import { totpCode, totpStep } from '../src/core/mfa/totp'
import { bootstrapMedianCI, median, NO_LIMITS, PASSWORD, startAuthd, timed } from './lib'

const PAIRS = Number(process.env.BENCH_PAIRS ?? 200)
const registered = Array.from({ length: PAIRS }, (_, i) => `member${i}@example.com`)
const strangers = Array.from({ length: PAIRS }, (_, i) => `stranger${i}@example.com`)
/** Registered addresses that turn TOTP on once the server runs. */
const enrolled = Array.from({ length: PAIRS }, (_, i) => `enrolled${i}@example.com`)
/** Addresses of a domain the tenant's sign-up policy does not list. */
const outsiders = Array.from({ length: PAIRS }, (_, i) => `outsider${i}@elsewhere.example`)

/** Imports the registered addresses with PASSWORD, hashed by the CLI's own argon2 settings. */
function importMembers(cli: (args: string[]) => unknown, tenantId: string) {
  const file = '/tmp/authd-bench-users.json'
  writeFileSync(file, JSON.stringify([...registered, ...enrolled].map((email) => ({ email, firstName: 'Bench', lastName: 'Member', password: PASSWORD }))))
  cli(['users', 'import', '--tenant', tenantId, file])
  cli(['tenants', 'update', tenantId, '--signup', 'domains:example.com'])
}

async function pairedRow(name: string, make: (email: string) => () => Promise<Response>, sides: [string[], string[], string] = [registered, strangers, 'registered - unknown'], expected?: number): Promise<string> {
  const differences: number[] = []
  const known: number[] = []
  const [left, right, label] = sides
  for (let i = 0; i < PAIRS; i++) {
    const [a, b] = [make(left[i]!), make(right[i]!)]
    const first = i % 2 === 0
    const x = await timed(first ? a : b)
    const y = await timed(first ? b : a)
    const [reg, unk] = first ? [x, y] : [y, x]
    if (reg.status !== unk.status) throw new Error(`${name}: statuses differ (${reg.status} vs ${unk.status})`)
    if (reg.status >= 500 || (expected !== undefined && reg.status !== expected)) throw new Error(`${name}: answered ${reg.status}, not ${expected}`)
    differences.push(reg.ms - unk.ms)
    known.push(reg.ms)
  }
  const [lo, hi] = bootstrapMedianCI(differences)
  return `${name.padEnd(58)} median ${median(known).toFixed(2).padStart(7)} ms   ${label}: median ${median(differences).toFixed(3).padStart(7)} ms, 95% CI [${lo.toFixed(3)}, ${hi.toFixed(3)}] ms (${((median(differences) / median(known)) * 100).toFixed(1)}% of a request)`
}

/** Turns TOTP on for each address, over HTTP as a user would. */
async function enrolTotp(api: string, key: string, addresses: string[]) {
  const headers = { 'content-type': 'application/json', 'x-api-key': key }
  for (const email of addresses) {
    const login = (await (await fetch(`${api}/login`, { method: 'POST', headers, body: JSON.stringify({ email, password: PASSWORD }) })).json()) as any
    const bearer = { ...headers, authorization: `Bearer ${login.data.response.accessToken}` }
    const { secret } = ((await (await fetch(`${api}/mfa/totp`, { method: 'POST', headers: bearer })).json()) as any).data
    const confirmed = await fetch(`${api}/mfa/totp/confirm`, { method: 'POST', headers: bearer, body: JSON.stringify({ code: totpCode(secret, totpStep(Date.now())) }) })
    if (confirmed.status !== 200) throw new Error(`enrolling ${email}: ${confirmed.status}`)
  }
}

export async function timingBench() {
  const rows: string[] = []
  const authd = await startAuthd(NO_LIMITS, { seed: importMembers })
  const headers = { 'content-type': 'application/json', 'x-api-key': authd.key }
  const login = (api: string) => (email: string) => () => fetch(`${api}/login`, { method: 'POST', headers, body: JSON.stringify({ email, password: 'a wrong password, paired' }) })
  rows.push(await pairedRow('POST /login (wrong password vs unknown e-mail)', login(authd.api), undefined, 401))
  // The second factor is asked for only after the right password: a wrong one must cost the
  // same whether the user has TOTP on or not.
  await enrolTotp(authd.api, authd.key, enrolled)
  rows.push(await pairedRow('POST /login (wrong password: TOTP on vs off)', login(authd.api), [enrolled, registered, 'TOTP on - off'], 401))
  rows.push(await pairedRow('GET /forgot-password (registered vs unknown)', (email) => () => fetch(`${authd.api}/forgot-password/${email}`, { headers }), undefined, 200))
  // Every address asked for a code just above: a wrong code for a registered address with a
  // live OTP against one for an unknown address.
  const wrongCode = (email: string) => () =>
    fetch(`${authd.api}/change-password`, { method: 'POST', headers, body: JSON.stringify({ email, otp: '000000', newPassword: 'a new passphrase, paired' }) })
  rows.push(await pairedRow('POST /change-password (wrong code: live OTP vs unknown)', wrongCode, undefined, 400))
  // Sign-up (the tenant is open to example.com): a registered address (its owner is told)
  // against a new one (a code is mailed), and a refused domain against a new one.
  const signup = (email: string) => () =>
    fetch(`${authd.api}/signup`, { method: 'POST', headers, body: JSON.stringify({ email, password: 'a sign-up passphrase for timing', firstName: 'Bench', lastName: 'Newcomer' }) })
  rows.push(await pairedRow('POST /signup (registered vs new)', signup, undefined, 202))
  const newcomers = strangers.map((e) => e.replace('stranger', 'newcomer'))
  rows.push(await pairedRow('POST /signup (refused domain vs new)', signup, [outsiders, newcomers, 'refused - new'], 202))
  await authd.stop()

  // The days after AUTHD_ARGON2_* are raised: every stored hash still has the old parameters
  // (m=19 MiB, t=2), the server hashes new ones with OWASP's m=46 MiB, t=1.
  const raised = await startAuthd(NO_LIMITS, { seed: importMembers, serveEnv: { AUTHD_ARGON2_MEMORY_KIB: '47104', AUTHD_ARGON2_TIME_COST: '1' } })
  const raisedHeaders = { ...headers, 'x-api-key': raised.key }
  rows.push(
    await pairedRow('POST /login after raising argon2 (old hash vs unknown)', (email) => () =>
      fetch(`${raised.api}/login`, { method: 'POST', headers: raisedHeaders, body: JSON.stringify({ email, password: 'a wrong password, paired' }) }),
    undefined,
    401,
    ),
  )
  await raised.stop()
  console.log(`\npaired timing, ${PAIRS} pairs each (production argon2id parameters)\n`)
  for (const row of rows) console.log(row)
}

if (import.meta.main) await timingBench()
