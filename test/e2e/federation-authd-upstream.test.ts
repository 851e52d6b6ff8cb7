// A second authd as the upstream identity provider of the first (product spec §25: "tested
// against … a second authd as the upstream"). Two authd servers on real sockets, each with its
// own database and keys: the second is an OpenID Provider (§21) with a first-party client whose
// redirect URI is the first's callback; the first has a provider of type `oidc` whose issuer is
// the second's tenant issuer (docs/oidc.md: {AUTHD_PUBLIC_URL}/t/{tenant}). So authd's federation
// client (openid-client: discovery, PKCE, state, nonce, RFC 9207 iss, the ID token's checks) meets
// authd's own OpenID Provider, where the HTTP tests meet oidc-provider.
//
// Driven over HTTP by a browser without JavaScript (cookie jars per origin, redirects followed
// one by one, forms sent back with their hidden fields and their Origin), because nothing here
// depends on a browser's own behaviour (test/e2e/federation-browser.test.ts has Chromium and the
// CSP) and it keeps the test fast. One jar per origin is what a browser keeps for two hosts;
// both authds use the same cookie names, and on one host a real browser would share them across
// the two ports.
//
// What it proves:
//   - the address the second authd vouches for (email_verified: true, which it says only for a
//     user whose emailVerifiedAt is set) makes a verified user in the first (rule 3), with the
//     second's names, and the second's user id as the identity's subject;
//   - the answer is bound to the browser that started the sign-in: delivered to another browser
//     (login CSRF) it is refused, and the code stays the starter's;
//   - the second authd's ID token says amr ['pwd'] for a password, which is no second factor,
//     even with --trust-upstream-mfa: a first-authd user with TOTP still gets the first's
//     challenge; ['pwd', 'otp'] (the second's own TOTP) is what that option trusts.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createProvider } from '../../src/core/federation/providers'
import { createClient, updateClient } from '../../src/core/oidc/clients'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { PASSWORD, queryDatabase, type TestContext } from '../helpers'
import { startOidcWorld, type OidcWorld } from '../oidc-journey'
import { formOn } from '../pages'

/** The upstreams here are on this machine: loopback, which authd reaches only when allowed (AUTHD_PROVIDERS_ALLOW_PRIVATE). */
const UPSTREAMS_HERE = { federation: { allowPrivate: 'all' as const } }

/** The authd people sign in to. */
let first: OidcWorld
/** The authd that is the first's upstream. */
let second: OidcWorld
let providerId: string

interface Answer {
  url: URL
  status: number
  location: string | null
  html: string
}

/**
 * A browser without JavaScript: cookies per origin (name=value only; all of authd's are Path=/),
 * redirects followed hop by hop across origins, every hop kept in `hops` to assert the route.
 */
class Browser {
  private readonly jars = new Map<string, Map<string, string>>()
  readonly hops: string[] = []

  cookie(origin: string, name: string): string | undefined {
    return this.jars.get(new URL(origin).origin)?.get(name)
  }

  async send(url: URL, form?: { fields: Record<string, string>; origin: string }): Promise<Answer> {
    const jar = this.jars.get(url.origin) ?? new Map<string, string>()
    this.jars.set(url.origin, jar)
    const headers: Record<string, string> = {}
    if (jar.size > 0) headers.cookie = [...jar].map(([n, v]) => `${n}=${v}`).join('; ')
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      headers.origin = form.origin
    }
    const response = await fetch(url, { method: form ? 'POST' : 'GET', headers, body: form && new URLSearchParams(form.fields).toString(), redirect: 'manual' })
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq).trim()
      const value = pair.slice(eq + 1).trim()
      if (value === '' || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))) jar.delete(name)
      else jar.set(name, value)
    }
    const location = response.headers.get('location')
    this.hops.push(`${response.status} ${form ? 'POST' : 'GET'} ${url.href}`)
    return { url, status: response.status, location, html: await response.text() }
  }

  /**
   * Sends the request and follows redirects until an answer that is a page, or until the next
   * hop is one `stopBefore` names (returned as `next`, not requested).
   */
  async follow(url: URL, form?: { fields: Record<string, string>; origin: string }, stopBefore?: (next: URL) => boolean): Promise<Answer & { next?: URL }> {
    let answer = await this.send(url, form)
    for (let hop = 0; answer.status >= 300 && answer.status < 400 && answer.location; hop++) {
      if (hop === 10) throw new Error(`more than 10 redirects:\n${this.hops.join('\n')}`)
      const next = new URL(answer.location, answer.url)
      if (stopBefore?.(next)) return { ...answer, next }
      answer = await this.send(next)
    }
    return answer
  }

  open(url: string, stopBefore?: (next: URL) => boolean) {
    return this.follow(new URL(url), undefined, stopBefore)
  }

  /** Sends the page's form that posts to a path ending with `action`, with its hidden fields (the form token) and `fields`. */
  submit(page: Answer, action: string, fields: Record<string, string>, stopBefore?: (next: URL) => boolean) {
    const form = formOn(page.html, action)
    return this.follow(new URL(form.action, page.url), { fields: { ...form.hidden, ...fields }, origin: page.url.origin }, stopBefore)
  }
}

const h1 = (page: Answer) => /<h1[^>]*>([\s\S]*?)<\/h1>/.exec(page.html)?.[1] ?? null
const alertOf = (page: Answer) => /<p role="alert">([\s\S]*?)<\/p>/.exec(page.html)?.[1] ?? null
const isFirstsCallback = (next: URL) => next.origin === new URL(first.issuer).origin && next.pathname.endsWith(`/login/${providerId}/callback`)

/** "Continue with Second authd" on the first's login page: the browser lands on the second's login page. */
async function continueWithSecond(browser: Browser) {
  const login = await browser.open(`${first.issuer}/login`)
  const button = /<a class="button secondary" href="([^"]+)">Continue with Second authd<\/a>/.exec(login.html)
  expect(button).not.toBeNull()
  const atSecond = await browser.open(new URL(button![1]!.replaceAll('&amp;', '&'), first.issuer).href)
  // (by way of the second's authorization endpoint, which sends a browser signed in nowhere to its login page)
  expect(browser.hops.some((hop) => hop.startsWith(`303 GET ${second.issuer}/authorize?`))).toBe(true)
  expect(atSecond.url.origin).toBe(new URL(second.issuer).origin)
  expect(atSecond.url.pathname).toBe(`/t/${second.ctx.tenantId}/login`)
  expect(h1(atSecond)).toStartWith('Sign in')
  return atSecond
}

async function turnOnTotp(ctx: TestContext, email: string): Promise<string> {
  const login = await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })
  const bearer = { authorization: `Bearer ${login.json.data.response.accessToken}` }
  const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer })).json.data
  expect((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: totpCode(secret, totpStep(ctx.clock.now())) } })).status).toBe(200)
  // (the next code must be of a later step: a step's code is accepted once)
  ctx.clock.advance(30)
  return secret
}

/** The user's sessions at the first that began through a provider, oldest first. */
const sessionsAtFirst = (email: string) =>
  queryDatabase<{ amr: string; provider_id: string | null }>(
    first.ctx,
    'SELECT f.amr, f.provider_id FROM refresh_families f JOIN users u ON u.id = f.user_id WHERE u.email = $1 AND f.provider_id IS NOT NULL AND f.revoked_at IS NULL ORDER BY f.created_at',
    [email],
  )

beforeAll(async () => {
  first = await startOidcWorld(UPSTREAMS_HERE)
  second = await startOidcWorld(UPSTREAMS_HERE)
  // As an operator would: a client at the second (its secret shown once), then the provider at
  // the first, then the client's redirect URI set to the one the first printed.
  const { client, clientSecret } = await createClient(second.ctx.runtime, second.ctx.tenantId, { name: 'First authd', redirectUris: [`${first.issuer}/pending`], firstParty: true })
  const created = await createProvider(first.ctx.runtime, first.ctx.tenantId, {
    type: 'oidc',
    name: 'Second authd',
    issuer: second.issuer,
    clientId: client.id,
    clientSecret: clientSecret!,
    createUsers: 'open',
    linkByEmail: 'verified',
    // Trusted with the upstream's second factor: so only the second's amr decides whether its
    // sign-in counts as one (a password must not).
    trustUpstreamMfa: true,
  })
  providerId = created.provider.providerId
  expect(created.redirectUri).toBe(`${first.issuer}/login/${providerId}/callback`)
  await updateClient(second.ctx.runtime, client.id, { redirectUris: [created.redirectUri] })
}, 60_000)
afterAll(async () => {
  await first?.close()
  await second?.close()
})

describe('a second authd as the upstream', () => {
  it('creates the user in the first with the address the second vouched for, signs them in, and refuses the answer in another browser', async () => {
    const { userId: upstreamId, email } = await second.ctx.addUser({ email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', emailVerified: true })
    const browser = new Browser()
    const atSecond = await continueWithSecond(browser)
    // The second authd's password form; its answer goes through its /authorize back to the first.
    const back = await browser.submit(atSecond, '/login', { email, password: PASSWORD }, isFirstsCallback)
    expect(back.next).toBeDefined()
    const callback = back.next!
    expect(callback.searchParams.get('iss')).toBe(second.issuer)
    expect(callback.searchParams.get('code')).not.toBeNull()

    // Login CSRF: the same answer in a browser that did not start the sign-in finds no flow,
    // and is refused before the code is redeemed.
    const victim = new Browser()
    const refused = await victim.open(callback.href)
    expect(refused.status).toBe(400)
    expect(alertOf(refused)).toContain('does not belong to a sign-in started in this browser')
    expect(victim.cookie(first.issuer, 'authd_session')).toBeUndefined()
    expect(await queryDatabase(first.ctx, 'SELECT id FROM users WHERE email = $1', [email])).toEqual([])

    // The starter's browser: signed in to the first, on its account page.
    const done = await browser.follow(callback, undefined, (next) => next.pathname === `/t/${first.ctx.tenantId}/account`)
    expect(done.status).toBe(303)
    expect(done.next!.origin).toBe(new URL(first.issuer).origin)
    expect(browser.cookie(first.issuer, 'authd_session')).toBeDefined()
    expect(browser.cookie(first.issuer, 'authd_federation')).toBeUndefined()
    const account = await browser.open(done.next!.href)
    expect(account.status).toBe(200)
    expect(account.html).toContain(email)

    const [user] = await queryDatabase<{ id: string; first_name: string; last_name: string; email_verified_at: number | null; password_hash: string | null }>(
      first.ctx,
      'SELECT id, first_name, last_name, email_verified_at, password_hash FROM users WHERE email = $1',
      [email],
    )
    expect(user).toMatchObject({ first_name: 'Grace', last_name: 'Hopper', password_hash: null })
    expect(user!.email_verified_at).not.toBeNull()
    // The identity is (provider, the second's subject: its user id).
    expect(await queryDatabase(first.ctx, 'SELECT subject, provider_id FROM identities WHERE user_id = $1', [user!.id])).toEqual([{ subject: upstreamId, provider_id: providerId }])

    // The second signed Grace in with her password: its grant to the first (the session whose
    // amr its ID token carries) says pwd. The first took that as no second factor, though the
    // provider is trusted with the upstream's.
    expect(await queryDatabase(second.ctx, 'SELECT amr FROM refresh_families WHERE user_id = $1 AND client_id IS NOT NULL', [upstreamId])).toEqual([{ amr: 'pwd' }])
    expect(await sessionsAtFirst(email)).toEqual([{ amr: 'fed', provider_id: providerId }])
  }, 30_000)

  it('an address the second does not vouch for (its user never proved it) makes no user in the first', async () => {
    const { email } = await second.ctx.addUser({ email: 'linus@example.com', firstName: 'Linus', lastName: 'Pauling' })
    const browser = new Browser()
    const refused = await browser.submit(await continueWithSecond(browser), '/login', { email, password: PASSWORD })
    expect(refused.url.pathname).toBe(`/t/${first.ctx.tenantId}/login/${providerId}/callback`)
    expect(refused.status).toBe(400)
    expect(alertOf(refused)).toContain('has not verified your e-mail address')
    expect(await queryDatabase(first.ctx, 'SELECT id FROM users WHERE email = $1', [email])).toEqual([])
  }, 30_000)

  it('a user with TOTP at the first: the second\'s password alone does not stand in for it; the second\'s own TOTP (amr otp) does, for a provider trusted with it', async () => {
    const { email } = await first.ctx.addUser({ email: 'ada@example.com', emailVerified: true })
    const secretAtFirst = await turnOnTotp(first.ctx, email)
    await second.ctx.addUser({ email, emailVerified: true })

    // 1. Password at the second: the first links the verified address (rule 2) and asks for
    //    its own second factor; no session until the code.
    const browser = new Browser()
    const challenge = await browser.submit(await continueWithSecond(browser), '/login', { email, password: PASSWORD })
    expect(challenge.url.pathname).toBe(`/t/${first.ctx.tenantId}/login/${providerId}/callback`)
    expect(challenge.status).toBe(200)
    expect(h1(challenge)).toBe('Two-step verification')
    expect(challenge.html).toContain('name="challengeToken"')
    expect(browser.cookie(first.issuer, 'authd_session')).toBeUndefined()
    const passed = await browser.submit(challenge, '/login/second-factor', { code: totpCode(secretAtFirst, totpStep(first.ctx.clock.now())) }, () => true)
    expect(passed.next!.pathname).toBe(`/t/${first.ctx.tenantId}/account`)
    expect(await sessionsAtFirst(email)).toEqual([{ amr: 'fed,otp', provider_id: providerId }])

    // 2. The second's own second factor: its ID token says pwd and otp, which the trusted
    //    provider takes in place of the first's: straight to the account page.
    const secretAtSecond = await turnOnTotp(second.ctx, email)
    const fresh = new Browser()
    const secondsChallenge = await fresh.submit(await continueWithSecond(fresh), '/login', { email, password: PASSWORD })
    expect(secondsChallenge.url.origin).toBe(new URL(second.issuer).origin)
    expect(h1(secondsChallenge)).toBe('Two-step verification')
    const trusted = await fresh.submit(secondsChallenge, '/login/second-factor', { code: totpCode(secretAtSecond, totpStep(second.ctx.clock.now())) }, (next) => next.origin === new URL(first.issuer).origin && !isFirstsCallback(next))
    expect(trusted.url.pathname).toBe(`/t/${first.ctx.tenantId}/login/${providerId}/callback`)
    expect(trusted.next!.pathname).toBe(`/t/${first.ctx.tenantId}/account`)
    expect(fresh.cookie(first.issuer, 'authd_session')).toBeDefined()
    expect((await sessionsAtFirst(email)).at(-1)).toEqual({ amr: 'fed,mfa', provider_id: providerId })
  }, 30_000)
})
