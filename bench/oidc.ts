// The OpenID Provider's token endpoint (product spec §21), as ratios to authd's own GET
// /healthz in the same run: code exchanges (POST /t/{tenant}/token with a code minted just
// before the window, so the window measures the exchange alone: the code's conditional spend,
// the grant's family and first token in one transaction, an access token (ES256) and an ID
// token signed with node:crypto), the whole authorize → token round trip (the page session's
// look-up, a code written, then the exchange), and refresh_token grants (rotation as authd's
// own sessions do it, plus both tokens signed). The client is registered without an ID-token
// algorithm, so RS256; code exchanges are measured again for a client registered with
// --id-token-alg ES256, in the same round (the two in turn, first one then the other), for the
// ratio of what RS256 signing costs an exchange, with its spread over the rounds.
//
//   npm run build && bun bench/oidc.ts
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { load, median, ms, NO_LIMITS, PASSWORD, startAuthd, type Result } from './lib'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const REDIRECT = 'http://127.0.0.1:9/callback'

/** What a signature costs by itself, on this machine now: RS256 signatures/s over ES256's
 *  (one second each, synchronously with node:crypto, as authd signs). */
function signingRatio(): number {
  const rate = (sign1: () => void) => {
    let n = 0
    const until = performance.now() + 1000
    while (performance.now() < until) {
      sign1()
      n++
    }
    return n
  }
  const input = Buffer.from('x'.repeat(600))
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  const es = rate(() => sign('sha256', input, { key: ec, dsaEncoding: 'ieee-p1363' }))
  return rate(() => sign('sha256', input, rsa)) / es
}

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
  const clients = { rs256: { clientId: '', secret: '' }, es256: { clientId: '', secret: '' } }
  const authd = await startAuthd(NO_LIMITS, {
    seed: (cli, tenantId) => {
      cli(['users', 'create', '--tenant', tenantId, '--email', 'me@example.com', '--first-name', 'B', '--last-name', 'M', '--password-stdin'], PASSWORD)
      for (const alg of ['RS256', 'ES256'] as const) {
        const created = cli(['clients', 'create', '--tenant', tenantId, '--name', `Bench ${alg}`, '--redirect-uri', REDIRECT, '--first-party', '--id-token-alg', alg])
        clients[alg === 'RS256' ? 'rs256' : 'es256'] = { clientId: created.client.clientId, secret: created.clientSecret }
      }
    },
  })
  try {
    const issuer = `${authd.url}/t/${authd.tenantId}`
    const cookie = await pageSession(authd.url, `/t/${authd.tenantId}/login`)
    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    const flowOf = (client: { clientId: string; secret: string }) => {
      const basic = `Basic ${btoa(`${client.clientId}:${client.secret}`)}`
      const authorizeUrl = `${issuer}/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT, scope: 'openid offline_access', code_challenge: challenge, code_challenge_method: 'S256', state: 's' })}`
      const authorize = async () => {
        const answer = await fetch(authorizeUrl, { headers: { cookie }, redirect: 'manual' })
        const code = new URL(answer.headers.get('location')!).searchParams.get('code')
        if (!code) throw new Error(`authorize answered ${answer.status}`)
        return code
      }
      const token = (form: Record<string, string>) => fetch(`${issuer}/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) })
      const exchange = (code: string) => token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier })
      /** Code exchanges alone: codes live 60 s, so they are minted just before the window, for
       *  twice its length (minting is an authorize, which costs no less than an exchange: the
       *  window cannot run out of codes). */
      const exchanges = async (name: string) => {
        const minted: string[] = []
        const mintUntil = performance.now() + 2 * SECONDS * 1000
        await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
          while (performance.now() < mintUntil) minted.push(await authorize())
        }))
        return load(name, SECONDS, CONCURRENCY, () => () => exchange(minted.pop() ?? 'exhausted'))
      }
      return { authorize, token, exchange, exchanges }
    }
    const { authorize, token, exchange, exchanges: rsExchanges } = flowOf(clients.rs256)
    const esExchanges = flowOf(clients.es256).exchanges

    const rounds: Array<Record<string, Result>> = []
    for (let r = 0; r < ROUNDS; r++) {
      const health = await load('authd GET /healthz', SECONDS, CONCURRENCY, () => () => fetch(`${authd.url}/healthz`))
      // (in turn, so neither always runs on the warmer or the more loaded side of the round)
      const rsFirst = r % 2 === 0
      const first = await (rsFirst ? rsExchanges : esExchanges)(`POST /token (code, ${rsFirst ? 'RS256' : 'ES256'} client)`)
      const second = await (rsFirst ? esExchanges : rsExchanges)(`POST /token (code, ${rsFirst ? 'ES256' : 'RS256'} client)`)
      const [exchanges, esExchangesResult] = rsFirst ? [first, second] : [second, first]
      const roundTrip = await load('GET /authorize → POST /token', SECONDS, CONCURRENCY, () => async () => exchange(await authorize()))
      const grants = await Promise.all(Array.from({ length: CONCURRENCY }, async () => ((await (await exchange(await authorize())).json()) as { refresh_token: string }).refresh_token))
      const refresh = await load('POST /token (refresh_token)', SECONDS, CONCURRENCY, (i) => async () => {
        const answer = await token({ grant_type: 'refresh_token', refresh_token: grants[i]! })
        const body = (await answer.clone().json()) as { refresh_token?: string }
        if (body.refresh_token) grants[i] = body.refresh_token
        return answer
      })
      rounds.push({ health, exchanges: exchanges!, esExchanges: esExchangesResult!, roundTrip, refresh })
    }
    const ratio = (a: string) => median(rounds.map((round) => round[a]!.perSecond / round.health!.perSecond))
    console.log(`\nOpenID Provider: ${SECONDS}s per scenario, ${CONCURRENCY} clients, ${ROUNDS} rounds, ${navigator.hardwareConcurrency} cores\n`)
    console.log(`${'scenario (last round)'.padEnd(40)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-200'.padStart(8)}`)
    for (const r of Object.values(rounds.at(-1)!)) {
      const other = Object.entries(r.statuses).filter(([status]) => status !== '200').reduce((n, [, count]) => n + count, 0)
      console.log(`${r.name.padEnd(40)} ${r.perSecond.toFixed(0).padStart(8)} ${ms(r.p50)} ${ms(r.p99)} ${String(other).padStart(8)}`)
    }
    console.log(`\nratios to GET /healthz (median over the rounds)`)
    console.log(`  code exchanges (RS256)      ${ratio('exchanges').toFixed(2)}`)
    console.log(`  code exchanges (ES256)      ${ratio('esExchanges').toFixed(2)}`)
    console.log(`  authorize → token           ${ratio('roundTrip').toFixed(2)}`)
    console.log(`  refresh_token grants        ${ratio('refresh').toFixed(2)}`)
    const rsOverEs = rounds.map((round) => round.exchanges!.perSecond / round.esExchanges!.perSecond)
    console.log(`\ncode exchanges/s, RS256 client / ES256 client: median ${median(rsOverEs).toFixed(2)}, rounds ${rsOverEs.map((x) => x.toFixed(2)).join(' ')}`)
    console.log(`  (in this process, ${signingRatio().toFixed(3)}: RS256 signatures/s over ES256 signatures/s)`)
  } finally {
    await authd.stop()
  }
}

if (import.meta.main) await oidcBench()
