// The signed-in user's and the admin API's read paths, as ratios to authd's own GET /healthz
// in the same run: GET /me (an ES256 verification and a session look-up per request) and the
// admin list of a tenant with 10,000 users, each client walking the pages with the cursor
// (keyset: a page deep in the list costs what the first one costs).
//
//   npm run build && bun bench/signed-in.ts
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { load, median, ms, NO_LIMITS, PASSWORD, startAuthd, type Result } from './lib'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const USERS = Number(process.env.BENCH_USERS ?? 10_000)
const PAGE = 100

export async function signedInBench() {
  let adminKey = ''
  const file = join(tmpdir(), `authd-bench-users-${process.pid}.json`)
  writeFileSync(file, JSON.stringify(Array.from({ length: USERS }, (_, i) => ({ email: `user${i}@example.com`, firstName: 'Bench', lastName: `User ${i}` }))))
  const authd = await startAuthd(NO_LIMITS, {
    seed: (cli, tenantId) => {
      cli(['users', 'create', '--tenant', tenantId, '--email', 'me@example.com', '--first-name', 'B', '--last-name', 'M', '--password-stdin'], PASSWORD)
      cli(['users', 'import', '--tenant', tenantId, file])
      adminKey = cli(['api-keys', 'create', '--tenant', tenantId, '--scope', 'admin']).key
    },
  })
  try {
    const login = await fetch(`${authd.api}/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': authd.key }, body: JSON.stringify({ email: 'me@example.com', password: PASSWORD }) })
    const accessToken = ((await login.json()) as { data: { response: { accessToken: string } } }).data.response.accessToken
    const adminUrl = authd.url + '/api/v1/admin/users'
    const pager = () => {
      let cursor: string | null = null
      return async () => {
        const response = await fetch(`${adminUrl}?limit=${PAGE}${cursor ? `&cursor=${cursor}` : ''}`, { headers: { 'x-api-key': adminKey } })
        const body = (await response.clone().json()) as { data: { nextCursor: string | null } }
        cursor = body.data.nextCursor
        return response
      }
    }
    const rounds: Array<Record<string, Result>> = []
    for (let r = 0; r < ROUNDS; r++) {
      rounds.push({
        health: await load('authd GET /healthz', SECONDS, CONCURRENCY, () => () => fetch(`${authd.url}/healthz`)),
        me: await load('authd GET /me', SECONDS, CONCURRENCY, () => () => fetch(`${authd.api}/me`, { headers: { authorization: `Bearer ${accessToken}` } })),
        list: await load(`admin GET /users (${USERS} users, pages of ${PAGE})`, SECONDS, CONCURRENCY, pager),
      })
    }
    const ratio = (a: string) => median(rounds.map((round) => round[a]!.perSecond / round.health!.perSecond))
    console.log(`\nSigned-in user and admin API: ${SECONDS}s per scenario, ${CONCURRENCY} clients, ${ROUNDS} rounds, ${navigator.hardwareConcurrency} cores\n`)
    console.log(`${'scenario (last round)'.padEnd(48)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(6)}`)
    for (const r of Object.values(rounds.at(-1)!)) console.log(`${r.name.padEnd(48)} ${r.perSecond.toFixed(0).padStart(8)} ${ms(r.p50)} ${ms(r.p99)} ${String(r.errors).padStart(6)}`)
    console.log(`\nratios to GET /healthz (median over the rounds)`)
    console.log(`  GET /me                       ${ratio('me').toFixed(2)}`)
    console.log(`  admin GET /users, 100 a page  ${ratio('list').toFixed(2)}`)
  } finally {
    await authd.stop()
  }
}

if (import.meta.main) await signedInBench()
