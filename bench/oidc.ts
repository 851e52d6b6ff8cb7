// The OpenID Provider's token endpoint (product spec §21), as ratios to authd's own GET
// /healthz in the same run: code exchanges (POST /t/{tenant}/token with a code minted just
// before the window, so the window measures the exchange alone: the code's conditional spend,
// the grant's family and first token in one transaction, an access token signed with
// node:crypto and an ID token signed with jose), the whole authorize → token round trip (the
// page session's look-up, a code written, then the exchange), and refresh_token grants
// (rotation as authd's own sessions do it, plus both tokens signed).
//
//   npm run build && bun bench/oidc.ts
import { createHash, randomBytes } from 'node:crypto'
import { load, median, ms, NO_LIMITS, PASSWORD, startAuthd, type Result } from './lib'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const REDIRECT = 'http://127.0.0.1:9/callback'

/** Signs in on the login page as a browser does; the page session's cookies. */
async function pageSession(origin: string, loginPath: string): Promise<string> {
  const cookiesOf = (response: Response) => response.headers.getSetCookie().map((c) => c.split(';')[0]!).filter((c) => !c.endsWith('='))
  const page = await fetch(origin + loginPath)
  const formCookies = cookiesOf(page)
  const token = /name="_form" value="([^"]+)"/.exec(await page.text())![1]!
  const signedIn = await fetch(origin + loginPath, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin, cookie: formCookies.join('; ') },
    body: new URLSearchParams({ _form: token, email: 'me@example.com', password: PASSWORD }),
    redirect: 'manual',
  })
  return [...formCookies, ...cookiesOf(signedIn)].join('; ')
}

export async function oidcBench() {
  let client = { clientId: '', secret: '' }
  const authd = await startAuthd(NO_LIMITS, {
    seed: (cli, tenantId) => {
      cli(['users', 'create', '--tenant', tenantId, '--email', 'me@example.com', '--first-name', 'B', '--last-name', 'M', '--password-stdin'], PASSWORD)
      const created = cli(['clients', 'create', '--tenant', tenantId, '--name', 'Bench', '--redirect-uri', REDIRECT, '--first-party'])
      client = { clientId: created.client.clientId, secret: created.clientSecret }
    },
  })
  try {
    const issuer = `${authd.url}/t/${authd.tenantId}`
    const basic = `Basic ${btoa(`${client.clientId}:${client.secret}`)}`
    const cookie = await pageSession(authd.url, `/t/${authd.tenantId}/login`)
    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    const authorizeUrl = `${issuer}/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT, scope: 'openid offline_access', code_challenge: challenge, code_challenge_method: 'S256', state: 's' })}`
    const authorize = async () => {
      const answer = await fetch(authorizeUrl, { headers: { cookie }, redirect: 'manual' })
      const code = new URL(answer.headers.get('location')!).searchParams.get('code')
      if (!code) throw new Error(`authorize answered ${answer.status}`)
      return code
    }
    const token = (form: Record<string, string>) => fetch(`${issuer}/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) })
    const exchange = (code: string) => token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier })

    const rounds: Array<Record<string, Result>> = []
    for (let r = 0; r < ROUNDS; r++) {
      const health = await load('authd GET /healthz', SECONDS, CONCURRENCY, () => () => fetch(`${authd.url}/healthz`))
      // Codes live 60 s: minted just before the window, for twice its length (minting is an
      // authorize, which costs no less than an exchange: the window cannot run out of codes).
      const minted: string[] = []
      const mintUntil = performance.now() + 2 * SECONDS * 1000
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < mintUntil) minted.push(await authorize())
      }))
      const exchanges = await load('POST /token (authorization_code)', SECONDS, CONCURRENCY, () => () => exchange(minted.pop() ?? 'exhausted'))
      const roundTrip = await load('GET /authorize → POST /token', SECONDS, CONCURRENCY, () => async () => exchange(await authorize()))
      const grants = await Promise.all(Array.from({ length: CONCURRENCY }, async () => ((await (await exchange(await authorize())).json()) as { refresh_token: string }).refresh_token))
      const refresh = await load('POST /token (refresh_token)', SECONDS, CONCURRENCY, (i) => async () => {
        const answer = await token({ grant_type: 'refresh_token', refresh_token: grants[i]! })
        const body = (await answer.clone().json()) as { refresh_token?: string }
        if (body.refresh_token) grants[i] = body.refresh_token
        return answer
      })
      rounds.push({ health, exchanges, roundTrip, refresh })
    }
    const ratio = (a: string) => median(rounds.map((round) => round[a]!.perSecond / round.health!.perSecond))
    console.log(`\nOpenID Provider: ${SECONDS}s per scenario, ${CONCURRENCY} clients, ${ROUNDS} rounds, ${navigator.hardwareConcurrency} cores\n`)
    console.log(`${'scenario (last round)'.padEnd(40)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-200'.padStart(8)}`)
    for (const r of Object.values(rounds.at(-1)!)) {
      const other = Object.entries(r.statuses).filter(([status]) => status !== '200').reduce((n, [, count]) => n + count, 0)
      console.log(`${r.name.padEnd(40)} ${r.perSecond.toFixed(0).padStart(8)} ${ms(r.p50)} ${ms(r.p99)} ${String(other).padStart(8)}`)
    }
    console.log(`\nratios to GET /healthz (median over the rounds)`)
    console.log(`  code exchanges              ${ratio('exchanges').toFixed(2)}`)
    console.log(`  authorize → token           ${ratio('roundTrip').toFixed(2)}`)
    console.log(`  refresh_token grants        ${ratio('refresh').toFixed(2)}`)
  } finally {
    await authd.stop()
  }
}

if (import.meta.main) await oidcBench()
