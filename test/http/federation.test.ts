// Sign-in through upstream identity providers (product spec §25), over authd's pages, against
// real upstreams on real sockets: panva's oidc-provider (a certified OpenID Provider) and a
// GitHub-shaped fake (test/upstreams/). The linking rules as attacks would try them (an
// unverified upstream address, an unverified local account, a replayed callback, another
// browser's answer), the second factor, groups, the account page, and every failure as a page.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { createProvider, updateProvider } from '../../src/core/federation/providers'
import { addMembers, createGroup } from '../../src/core/groups/groups'
import { createClient } from '../../src/core/oidc/clients'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { setUserDisabled } from '../../src/core/accounts/users'
import { setForwardAuthDomains } from '../../src/core/forward-auth/domains'
import { addAccessRule } from '../../src/core/forward-auth/rules'
import { createTestContext, loginFor, PASSWORD, queryDatabase, type TestContext } from '../helpers'
import { PageBrowser, type PageAnswer } from '../pages'
import { cancelAtUpstream, CookieJar, signInAtUpstream, startOidcUpstream, type OidcUpstream } from '../upstreams/oidc-provider'
import { authorizeAtGitHubFake, startGitHubFake, type GitHubFake } from '../upstreams/github-fake'

const AUTHD = 'http://auth.example.test'
const CLIENT = { clientId: 'authd-test', clientSecret: 'upstream secret with spaces & symbols' }

let upstream: OidcUpstream
let ctx: TestContext
let browser: PageBrowser
let base: string

beforeAll(async () => {
  upstream = await startOidcUpstream({ client: { ...CLIENT, redirectUris: [] } })
})
afterAll(() => upstream.close())

beforeEach(async () => {
  // (the upstreams of these tests are on this machine: a private address authd reaches only when told)
  ctx = await createTestContext({ AUTHD_PUBLIC_URL: AUTHD, AUTHD_PROVIDERS_ALLOW_PRIVATE: '127.0.0.1/32', AUTHD_TRUSTED_PROXIES: '127.0.0.1' })
  browser = new PageBrowser(ctx, {}, AUTHD)
  base = `/t/${ctx.tenantId}`
  upstream.mode = 'ok'
})
afterEach(() => ctx.close())

/** A provider of the test tenant at the oidc-provider upstream, registered there with its redirect URI. */
async function oidcProvider(fields: Record<string, unknown> = {}) {
  const { provider, redirectUri } = await createProvider(ctx.runtime, ctx.tenantId, { type: 'oidc', name: 'Upstream', issuer: upstream.issuer, ...CLIENT, ...fields })
  upstream.setClient({ ...CLIENT, redirectUris: [redirectUri] })
  return provider.providerId
}

const pathOf = (url: string) => {
  const parsed = new URL(url)
  expect(parsed.origin).toBe(AUTHD)
  return `${parsed.pathname}${parsed.search}`
}

/** "Continue with" on the login page, the upstream's own sign-in as `account`, and authd's callback. */
async function continueWith(providerId: string, account: string, options: { returnTo?: string; via?: PageBrowser } = {}): Promise<PageAnswer> {
  const via = options.via ?? browser
  const login = await via.get(`${base}/login${options.returnTo ? `?return_to=${encodeURIComponent(options.returnTo)}` : ''}`)
  const button = new RegExp(`href="([^"]*/login/${providerId}[^"]*)"`).exec(login.html)
  expect(button).not.toBeNull()
  const start = await via.get(button![1]!.replaceAll('&amp;', '&'))
  expect(start.status).toBe(303)
  return via.get(pathOf(await signInAtUpstream(start.location!, account)))
}

const sessionsOf = (userId: string) => queryDatabase<{ amr: string; provider_id: string | null }>(ctx, 'SELECT amr, provider_id FROM refresh_families WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at', [userId])
const userByEmail = async (email: string) => (await queryDatabase<{ id: string; email_verified_at: number | null; first_name: string; last_name: string }>(ctx, 'SELECT id, email_verified_at, first_name, last_name FROM users WHERE email = $1', [email]))[0]
const identitiesOf = (userId: string) => queryDatabase<{ subject: string; provider_id: string }>(ctx, 'SELECT subject, provider_id FROM identities WHERE user_id = $1', [userId])
const alertOf = (page: PageAnswer) => /<p role="alert">([\s\S]*?)<\/p>/.exec(page.html)?.[1] ?? null

describe('a new person (§25 rule 3)', () => {
  it('gets an account with the upstream\'s names and vouched address where the provider lets them, and a session that says fed', async () => {
    upstream.setAccount('grace-1', { email: 'Grace@Example.com', email_verified: true, given_name: 'Grace', family_name: 'Hopper' })
    const providerId = await oidcProvider({ createUsers: 'open' })
    const done = await continueWith(providerId, 'grace-1')
    expect(done.status).toBe(303)
    expect(done.location).toBe(`${base}/account`)
    const user = (await userByEmail('grace@example.com'))!
    expect(user).toMatchObject({ first_name: 'Grace', last_name: 'Hopper' })
    expect(user.email_verified_at).not.toBeNull()
    expect(await identitiesOf(user.id)).toEqual([{ subject: 'grace-1', provider_id: providerId }])
    expect(await sessionsOf(user.id)).toEqual([{ amr: 'fed', provider_id: providerId }])
    const account = await browser.get(`${base}/account`)
    expect(account.html).toContain('grace@example.com')
    // the session.created event names the provider
    const [event] = await queryDatabase<{ data: string }>(ctx, "SELECT data FROM webhook_events WHERE type = 'session.created' AND user_id = $1", [user.id])
    expect(JSON.parse(event!.data).session.providerId).toBe(providerId)
  })

  it('is refused where nobody may sign up (the tenant\'s policy by default), on a page that says so', async () => {
    upstream.setAccount('mallory-1', { email: 'mallory@example.com', email_verified: true })
    const providerId = await oidcProvider()
    const done = await continueWith(providerId, 'mallory-1')
    expect(done.status).toBe(400)
    expect(alertOf(done)).toContain('new accounts cannot be created with Upstream')
    expect(await userByEmail('mallory@example.com')).toBeUndefined()
    expect(browser.cookies.has('authd_session')).toBe(false)
  })

  it('makes no account for an address the upstream did not vouch for (it would wait for its owner with the claimant\'s ways in)', async () => {
    upstream.setAccount('squatter', { email: 'owner@example.com', email_verified: false })
    const providerId = await oidcProvider({ createUsers: 'open' })
    const refused = await continueWith(providerId, 'squatter')
    expect(refused.status).toBe(400)
    expect(alertOf(refused)).toContain('Upstream has not verified your e-mail address')
    expect(await userByEmail('owner@example.com')).toBeUndefined()
  })

  it('reads the address from userinfo when the ID token leaves it there', async () => {
    const claimsAtUserinfo = await startOidcUpstream({ client: { ...CLIENT, redirectUris: [] }, claimsOnlyAtUserinfo: true, accounts: { 'kat-1': { email: 'kat@example.com', email_verified: true, given_name: 'Katherine', family_name: 'Johnson' } } })
    try {
      const { provider, redirectUri } = await createProvider(ctx.runtime, ctx.tenantId, { type: 'oidc', name: 'Userinfo', issuer: claimsAtUserinfo.issuer, ...CLIENT, createUsers: 'open' })
      claimsAtUserinfo.setClient({ ...CLIENT, redirectUris: [redirectUri] })
      expect((await continueWith(provider.providerId, 'kat-1')).status).toBe(303)
      expect(await userByEmail('kat@example.com')).toMatchObject({ first_name: 'Katherine' })
    } finally {
      await claimsAtUserinfo.close()
    }
  })
})

describe('an existing account of the same address (§25 rule 2)', () => {
  it('is linked at once when both sides vouch and the provider is set to verified', async () => {
    const { userId } = await ctx.addUser({ email: 'ada@example.com', emailVerified: true })
    upstream.setAccount('ada-1', { email: 'ada@example.com', email_verified: true })
    const providerId = await oidcProvider({ linkByEmail: 'verified' })
    expect((await continueWith(providerId, 'ada-1')).location).toBe(`${base}/account`)
    expect(await identitiesOf(userId)).toEqual([{ subject: 'ada-1', provider_id: providerId }])
    const [linked] = await queryDatabase<{ detail: string }>(ctx, "SELECT detail FROM audit_events WHERE type = 'identity.linked'")
    expect(JSON.parse(linked!.detail)).toMatchObject({ providerId, how: 'verified-email' })
  })

  it('is not handed over for an address the upstream did not vouch for: the person must sign in to it, as that user, on the page that says what it links', async () => {
    const { userId } = await ctx.addUser({ email: 'ada@example.com', emailVerified: true })
    const other = await ctx.addUser({ email: 'eve@example.com' })
    upstream.setAccount('eve-claims-ada', { email: 'ada@example.com', email_verified: false })
    const providerId = await oidcProvider({ linkByEmail: 'verified' })
    const prove = await continueWith(providerId, 'eve-claims-ada')
    expect(prove.status).toBe(200)
    expect(prove.html).toContain('An account with the address ada@example.com already exists')
    expect(prove.html).toContain('value="ada@example.com"')
    expect(browser.cookies.has('authd_session')).toBe(false)
    expect(await identitiesOf(userId)).toEqual([])

    // a wrong password proves nothing, and the page drawn again links nothing: it no longer says
    // it would (the next person at a shared computer signs in there)
    const wrong = await browser.submit(prove, '/login', { email: 'ada@example.com', password: 'wrong password' }, { origin: AUTHD })
    expect(wrong.status).toBe(401)
    expect(wrong.html).not.toContain('name="link_flow"')
    expect(wrong.html).not.toContain('already exists')
    // another account's sign-in on the page that asks links nothing to it
    await browser.submit(prove, '/login', { email: other.email, password: PASSWORD }, { origin: AUTHD })
    expect(await identitiesOf(other.userId)).toEqual([])
    await browser.submit(await browser.get(`${base}/logout`), '/logout', {}, { origin: AUTHD })
    // nor does the owner's ordinary sign-in in a browser where the flow was left (a shared
    // computer: whoever left it waiting must not get the next person's account)
    const ordinary = await browser.submit(await browser.get(`${base}/login`), '/login', { email: 'ada@example.com', password: PASSWORD }, { origin: AUTHD })
    expect(ordinary.location).toBe(`${base}/account`)
    expect(await identitiesOf(userId)).toEqual([])
    await browser.submit(await browser.get(`${base}/logout`), '/logout', {}, { origin: AUTHD })

    // the owner's sign-in on the page that asks for it links it
    const again = await continueWith(providerId, 'eve-claims-ada')
    const owner = await browser.submit(again, '/login', { email: 'ada@example.com', password: PASSWORD }, { origin: AUTHD })
    expect(owner.location).toBe(`${base}/account?done=identity-linked`)
    expect(await identitiesOf(userId)).toEqual([{ subject: 'eve-claims-ada', provider_id: providerId }])
    // and from then on the upstream account signs in alone (rule 1)
    const fresh = new PageBrowser(ctx, {}, AUTHD)
    expect((await continueWith(providerId, 'eve-claims-ada', { via: fresh })).location).toBe(`${base}/account`)
  })

  it('links after the second factor too, when the sign-in the page asked for has one', async () => {
    const { userId, email } = await ctx.addUser({ email: 'ada@example.com' })
    const login = await loginFor(ctx, email)
    const bearer = { authorization: `Bearer ${login.json.data.response.accessToken}` }
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer })).json.data
    await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: totpCode(secret, totpStep(ctx.clock.now())) } })
    ctx.clock.advance(30)
    upstream.setAccount('ada-mfa', { email, email_verified: true })
    const providerId = await oidcProvider({ linkByEmail: 'verified' })
    const prove = await continueWith(providerId, 'ada-mfa')
    const challenge = await browser.submit(prove, '/login', { email, password: PASSWORD }, { origin: AUTHD })
    expect(challenge.html).toContain('name="link_flow"')
    const passed = await browser.submit(challenge, '/login/second-factor', { code: totpCode(secret, totpStep(ctx.clock.now())) }, { origin: AUTHD })
    expect(passed.location).toBe(`${base}/account?done=identity-linked`)
    expect(await identitiesOf(userId)).toHaveLength(1)
  })

  it('is not handed over when the local address was never proven (an account made for a victim\'s address)', async () => {
    const { userId } = await ctx.addUser({ email: 'victim@example.com' })
    upstream.setAccount('victim-1', { email: 'victim@example.com', email_verified: true })
    const providerId = await oidcProvider({ linkByEmail: 'verified' })
    const prove = await continueWith(providerId, 'victim-1')
    expect(prove.html).toContain('already exists')
    expect(await identitiesOf(userId)).toEqual([])
  })

  it('is never linked by address when the provider says never', async () => {
    const { userId } = await ctx.addUser({ email: 'ada@example.com', emailVerified: true })
    upstream.setAccount('ada-2', { email: 'ada@example.com', email_verified: true })
    const providerId = await oidcProvider({ linkByEmail: 'never' })
    expect((await continueWith(providerId, 'ada-2')).html).toContain('already exists')
    expect(await identitiesOf(userId)).toEqual([])
  })
})

describe('the flow', () => {
  it('spends an answer once: a replayed callback finds nothing and starts no second session', async () => {
    upstream.setAccount('grace-2', { email: 'grace2@example.com', email_verified: true })
    const providerId = await oidcProvider({ createUsers: 'open' })
    const start = await browser.get(`${base}/login/${providerId}`)
    const callback = pathOf(await signInAtUpstream(start.location!, 'grace-2'))
    const flowCookie = browser.cookies.get('authd_federation')!
    expect((await browser.get(callback)).status).toBe(303)
    browser.cookies.set('authd_federation', flowCookie)
    const replay = await browser.get(callback)
    expect(replay.status).toBe(400)
    expect(alertOf(replay)).toContain('expired or was already used')
    const user = (await userByEmail('grace2@example.com'))!
    expect(await sessionsOf(user.id)).toHaveLength(1)
  })

  it('refuses an answer delivered to another browser (login CSRF), with or without a flow of its own', async () => {
    upstream.setAccount('attacker', { email: 'attacker@example.com', email_verified: true })
    const providerId = await oidcProvider({ createUsers: 'open' })
    const start = await browser.get(`${base}/login/${providerId}`)
    const callback = pathOf(await signInAtUpstream(start.location!, 'attacker'))
    const victim = new PageBrowser(ctx, {}, AUTHD)
    const bare = await victim.get(callback)
    expect(bare.status).toBe(400)
    expect(alertOf(bare)).toContain('does not belong to a sign-in started in this browser')
    await victim.get(`${base}/login/${providerId}`)
    expect((await victim.get(callback)).status).toBe(400)
    expect(victim.cookies.has('authd_session')).toBe(false)
    expect(await userByEmail('attacker@example.com')).toBeUndefined()
  })

  it('refuses an answer whose iss names another issuer (RFC 9207: a mix-up), and spends the flow', async () => {
    upstream.setAccount('mixup-1', { email: 'mixup@example.com', email_verified: true })
    const providerId = await oidcProvider({ createUsers: 'open' })
    const start = await browser.get(`${base}/login/${providerId}`)
    const callback = new URL(await signInAtUpstream(start.location!, 'mixup-1'))
    expect(callback.searchParams.get('iss')).toBe(upstream.issuer)
    callback.searchParams.set('iss', 'https://attacker.example')
    const mixedUp = await browser.get(pathOf(callback.href))
    expect(mixedUp.status).toBe(400)
    expect(alertOf(mixedUp)).toContain('does not belong to a sign-in started in this browser')
    expect(await userByEmail('mixup@example.com')).toBeUndefined()
    // nor does the genuine answer work after it: the flow is spent
    callback.searchParams.set('iss', upstream.issuer)
    expect((await browser.get(pathOf(callback.href))).status).toBe(400)
  })

  it('ends a sign-in answered after 10 minutes', async () => {
    upstream.setAccount('slow-1', { email: 'slow@example.com', email_verified: true })
    const providerId = await oidcProvider({ createUsers: 'open' })
    const start = await browser.get(`${base}/login/${providerId}`)
    const callback = pathOf(await signInAtUpstream(start.location!, 'slow-1'))
    ctx.clock.advance(10 * 60 + 1)
    const late = await browser.get(callback)
    expect(late.status).toBe(400)
    expect(alertOf(late)).toContain('expired')
  })

  it('shows the upstream\'s refusal as it said it, escaped', async () => {
    const providerId = await oidcProvider({ createUsers: 'open' })
    const start = await browser.get(`${base}/login/${providerId}`)
    const cancelled = await browser.get(pathOf(await cancelAtUpstream(start.location!)))
    expect(cancelled.status).toBe(400)
    expect(alertOf(cancelled)).toContain('Upstream did not sign you in. It said: access_denied')
    // an error of the upstream's own wording never becomes markup (a state this browser holds)
    const again = await browser.get(`${base}/login/${providerId}`)
    const state = new URL(again.location!).searchParams.get('state')!
    const forged = await browser.get(`${base}/login/${providerId}/callback?${new URLSearchParams({ state, iss: upstream.issuer, error: '<script>alert(1)</script>' })}`)
    expect(forged.status).toBe(400)
    expect(forged.html).not.toContain('<script>alert(1)')
    expect(forged.html).toContain('&lt;script&gt;')
  })

  it('says an unreachable upstream is unreachable', async () => {
    const { provider } = await createProvider(ctx.runtime, ctx.tenantId, { type: 'oidc', name: 'Gone', issuer: 'http://127.0.0.1:9', ...CLIENT })
    const page = await browser.get(`${base}/login/${provider.providerId}`)
    expect(page.status).toBe(502)
    expect(alertOf(page)).toContain('Gone cannot be reached right now')
    upstream.mode = 'down'
    const providerId = await oidcProvider()
    const down = await browser.get(`${base}/login/${providerId}`)
    expect(down.status).toBe(502)
  })

  it('reaches no private address the operator did not allow (an admin key choosing an issuer inside the network), and reads no answer larger than 1 MiB', async () => {
    const providerId = await oidcProvider()
    const closed = await createTestContext({ AUTHD_PUBLIC_URL: AUTHD })
    const discoveries = () => upstream.requests.filter((r) => r.path.includes('openid-configuration')).length
    const before = discoveries()
    try {
      const refused = await new PageBrowser(closed, {}, AUTHD).get(`/t/${closed.tenantId}/login/${(await createProvider(closed.runtime, closed.tenantId, { type: 'oidc', name: 'Inside', issuer: upstream.issuer, ...CLIENT })).provider.providerId}`)
      expect(refused.status).toBe(502)
      expect(alertOf(refused)).toContain('Inside cannot be reached right now')
      expect(discoveries()).toBe(before)
    } finally {
      await closed.close()
    }
    expect((await browser.get(`${base}/login/${providerId}`)).status).toBe(303)
    const huge = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(`{"issuer":"x","pad":"${'x'.repeat(2 * 1024 * 1024)}"}`, { headers: { 'content-type': 'application/json' } }) })
    try {
      const { provider } = await createProvider(ctx.runtime, ctx.tenantId, { type: 'oidc', name: 'Huge', issuer: `http://127.0.0.1:${huge.port}`, ...CLIENT })
      const page = await browser.get(`${base}/login/${provider.providerId}`)
      expect(page.status).toBe(502)
      expect(alertOf(page)).toContain('Huge answered with an error')
    } finally {
      huge.stop(true)
    }
  })

  it('reads the upstream\'s discovery document once in 10 minutes, and again after the provider changes', async () => {
    const providerId = await oidcProvider()
    const discoveries = () => upstream.requests.filter((r) => r.path.endsWith('/.well-known/openid-configuration')).length
    const before = discoveries()
    await browser.get(`${base}/login/${providerId}`)
    await browser.get(`${base}/login/${providerId}`)
    expect(discoveries()).toBe(before + 1)
    ctx.clock.advance(10 * 60 + 1)
    await browser.get(`${base}/login/${providerId}`)
    expect(discoveries()).toBe(before + 2)
    await updateProvider(ctx.runtime, providerId, { name: 'Renamed' })
    await browser.get(`${base}/login/${providerId}`)
    expect(discoveries()).toBe(before + 3)
  })

  it('unpacks a compressed answer within the same bound, and refuses an encoding it cannot bound', async () => {
    let encoding = 'gzip'
    let bomb = false
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (request) => {
        const issuer = `http://127.0.0.1:${server.port}`
        const document = bomb ? `{"pad":"${' '.repeat(64 * 1024 * 1024)}"}` : JSON.stringify({ issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`, response_types_supported: ['code'] })
        expect(request.headers.get('accept-encoding')).toBe('identity')
        const body = Bun.gzipSync(document)
        return new Response(body, { headers: { 'content-type': 'application/json', 'content-encoding': encoding } })
      },
    })
    try {
      const { provider } = await createProvider(ctx.runtime, ctx.tenantId, { type: 'oidc', name: 'Packed', issuer: `http://127.0.0.1:${server.port}`, ...CLIENT })
      const start = (id: string) => browser.get(`${base}/login/${id}`)
      const packed = await start(provider.providerId)
      expect(packed.status).toBe(303)
      expect(packed.location).toStartWith(`http://127.0.0.1:${server.port}/authorize?`)
      // 64 MiB of spaces in 64 KiB of gzip: cut at 1 MiB unpacked
      bomb = true
      const bombed = await createProvider(ctx.runtime, ctx.tenantId, { type: 'oidc', name: 'Bomb', issuer: `http://127.0.0.1:${server.port}`, ...CLIENT })
      const refused = await start(bombed.provider.providerId)
      expect(refused.status).toBe(502)
      expect(alertOf(refused)).toContain('Bomb answered with an error')
      bomb = false
      encoding = 'br'
      const brotli = await createProvider(ctx.runtime, ctx.tenantId, { type: 'oidc', name: 'Brotli', issuer: `http://127.0.0.1:${server.port}`, ...CLIENT })
      expect((await start(brotli.provider.providerId)).status).toBe(502)
    } finally {
      server.stop(true)
    }
  })

  it('holds each address to a budget of starts (each stores a flow), as passkey ceremonies are', async () => {
    const tight = await createTestContext({ AUTHD_PUBLIC_URL: AUTHD, AUTHD_PROVIDERS_ALLOW_PRIVATE: '127.0.0.1/32', AUTHD_PASSKEY_OPTIONS_IP_PER_10MIN: '2' })
    try {
      const { provider, redirectUri } = await createProvider(tight.runtime, tight.tenantId, { type: 'oidc', name: 'Upstream', issuer: upstream.issuer, ...CLIENT })
      upstream.setClient({ ...CLIENT, redirectUris: [redirectUri] })
      const visitor = new PageBrowser(tight, {}, AUTHD)
      const start = () => visitor.get(`/t/${tight.tenantId}/login/${provider.providerId}`)
      expect((await start()).status).toBe(303)
      expect((await start()).status).toBe(303)
      const third = await start()
      expect(third.status).toBe(429)
      expect(third.headers.get('retry-after')).not.toBeNull()
      expect(await queryDatabase(tight, 'SELECT id FROM federation_flows')).toHaveLength(2)
    } finally {
      await tight.close()
    }
  })

  it('answers a provider of another tenant, or none, with 404', async () => {
    expect((await browser.get(`${base}/login/0198a2b4-0000-7000-8000-000000000000`)).status).toBe(404)
    expect((await browser.get(`${base}/login/0198a2b4-0000-7000-8000-000000000000/callback?state=x&code=y`)).status).toBe(404)
  })
})

describe('after the upstream', () => {
  async function linkedUser(fields: Record<string, unknown> = {}, account: Record<string, unknown> = {}) {
    const { userId, email } = await ctx.addUser({ email: 'ada@example.com', emailVerified: true })
    upstream.setAccount('ada-3', { email, email_verified: true, ...account })
    const providerId = await oidcProvider({ linkByEmail: 'verified', ...fields })
    return { userId, email, providerId }
  }

  async function turnOnTotp(email: string) {
    const login = await loginFor(ctx, email)
    const bearer = { authorization: `Bearer ${login.json.data.response.accessToken}` }
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer })).json.data
    await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: totpCode(secret, totpStep(ctx.clock.now())) } })
    ctx.clock.advance(30)
    return secret as string
  }

  it('asks a user with TOTP for their code, and the session says fed and otp', async () => {
    const { userId, email, providerId } = await linkedUser()
    const secret = await turnOnTotp(email)
    const challenge = await continueWith(providerId, 'ada-3')
    expect(challenge.status).toBe(200)
    expect(challenge.html).toContain('name="challengeToken"')
    expect(browser.cookies.has('authd_session')).toBe(false)
    const passed = await browser.submit(challenge, '/login/second-factor', { code: totpCode(secret, totpStep(ctx.clock.now())) }, { origin: AUTHD })
    expect(passed.location).toBe(`${base}/account`)
    expect((await sessionsOf(userId)).at(-1)).toEqual({ amr: 'fed,otp', provider_id: providerId })
  })

  it('takes the upstream\'s second factor only from a provider trusted with it, and only when its amr says so', async () => {
    const { userId, email, providerId } = await linkedUser({ trustUpstreamMfa: true }, { amr: ['pwd', 'mfa'] })
    await turnOnTotp(email)
    expect((await continueWith(providerId, 'ada-3')).location).toBe(`${base}/account`)
    expect((await sessionsOf(userId)).at(-1)).toEqual({ amr: 'fed,mfa', provider_id: providerId })
    upstream.setAccount('ada-3', { email, email_verified: true, amr: ['pwd'] })
    const fresh = new PageBrowser(ctx, {}, AUTHD)
    expect((await continueWith(providerId, 'ada-3', { via: fresh })).html).toContain('name="challengeToken"')
  })

  it('refuses a disabled user', async () => {
    const { userId, providerId } = await linkedUser()
    await continueWith(providerId, 'ada-3')
    await setUserDisabled(ctx.runtime, userId, true)
    const fresh = new PageBrowser(ctx, {}, AUTHD)
    const refused = await continueWith(providerId, 'ada-3', { via: fresh })
    expect(refused.status).toBe(403)
    expect(alertOf(refused)).toContain('disabled')
  })

  it('sets the mapped groups from the claim at each sign-in, and leaves the others alone', async () => {
    const employees = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'employees' })
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'ops' })
    const local = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'local-only' })
    const { userId, email, providerId } = await linkedUser({ scopes: 'openid email profile groups', groupsClaim: 'groups', groupMap: { staff: 'employees', admins: 'ops' } }, { groups: ['staff', 'unmapped'] })
    await addMembers(ctx.runtime, local.id, [userId])
    const groupsOf = async () => (await queryDatabase<{ name: string }>(ctx, 'SELECT g.name FROM group_members m JOIN groups g ON g.id = m.group_id WHERE m.user_id = $1 ORDER BY g.name', [userId])).map((r) => r.name)
    await continueWith(providerId, 'ada-3')
    expect(await groupsOf()).toEqual(['employees', 'local-only'])
    upstream.setAccount('ada-3', { email, email_verified: true, groups: ['admins'] })
    await continueWith(providerId, 'ada-3', { via: new PageBrowser(ctx, {}, AUTHD) })
    expect(await groupsOf()).toEqual(['local-only', 'ops'])
    expect(employees.name).toBe('employees')
  })

  it('lets the pages drawn at the callback lead on to an OpenID client: its redirect URI is a form target of their CSP', async () => {
    // The second factor (and "prove your account") is drawn at the callback, whose URL holds no
    // return_to; its form's answer redirects to /authorize and on to the client. A browser
    // applies form-action to those redirects (test/e2e/federation-browser.test.ts).
    const { client } = await createClient(ctx.runtime, ctx.tenantId, { name: 'Wiki', redirectUris: ['https://wiki.example.com/callback'], firstParty: true })
    const authorize = `${AUTHD}${base}/authorize?${new URLSearchParams({ client_id: client.id, redirect_uri: 'https://wiki.example.com/callback', response_type: 'code', scope: 'openid' })}`
    const formAction = (page: PageAnswer) => /form-action ([^;]*)/.exec(page.headers.get('content-security-policy')!)![1]!.split(' ')
    const { email, providerId } = await linkedUser()
    await turnOnTotp(email)
    const challenge = await continueWith(providerId, 'ada-3', { returnTo: authorize })
    expect(challenge.html).toContain('name="challengeToken"')
    expect(formAction(challenge)).toContain('https://wiki.example.com')

    const { email: other } = await ctx.addUser({ email: 'linus@example.com' })
    upstream.setAccount('linus-up', { email: other, email_verified: false })
    const prove = await continueWith(providerId, 'linus-up', { returnTo: authorize, via: new PageBrowser(ctx, {}, AUTHD) })
    expect(prove.html).toContain('already exists')
    expect(formAction(prove)).toContain('https://wiki.example.com')
  })

  it('signs a browser in for the applications behind the tenant\'s reverse proxy (forward auth), as a password would', async () => {
    await setForwardAuthDomains(ctx.runtime, ctx.tenantId, ['example.test'])
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    const { providerId } = await linkedUser()
    const check = () =>
      ctx.call('GET', `${base}/authz/forward-auth`, {
        apiKey: null,
        cookie: [...browser.cookies].map(([n, v]) => `${n}=${v}`).join('; '),
        headers: { 'x-forwarded-method': 'GET', 'x-forwarded-proto': 'http', 'x-forwarded-host': 'app.example.test', 'x-forwarded-uri': '/', accept: 'text/html' },
      })
    expect((await check()).status).toBe(302)
    const done = await continueWith(providerId, 'ada-3', { returnTo: 'http://app.example.test/' })
    expect(done.location).toBe('http://app.example.test/')
    const admitted = await check()
    expect(admitted.status).toBe(200)
    expect(admitted.headers.get('remote-email')).toBe('ada@example.com')
  })

  it('returns to where the sign-in was going', async () => {
    const { providerId } = await linkedUser()
    const done = await continueWith(providerId, 'ada-3', { returnTo: `${AUTHD}${base}/account/apps` })
    expect(done.location).toBe(`${AUTHD}${base}/account/apps`)
  })
})

describe('the account page', () => {
  it('lists, links and unlinks identities, and keeps the last way in', async () => {
    upstream.setAccount('only-upstream', { email: 'solo@example.com', email_verified: true, given_name: 'Solo' })
    const providerId = await oidcProvider({ createUsers: 'open' })
    const second = await createProvider(ctx.runtime, ctx.tenantId, { type: 'oidc', name: 'Second', issuer: upstream.issuer, ...CLIENT })
    upstream.setClient({ ...CLIENT, redirectUris: [second.redirectUri, `${AUTHD}/t/${ctx.tenantId}/login/${providerId}/callback`] })
    await continueWith(providerId, 'only-upstream')
    const user = (await userByEmail('solo@example.com'))!
    const account = await browser.get(`${base}/account`)
    expect(account.html).toContain('Sign-in with other accounts')
    expect(account.html).toContain('solo@example.com')

    // the only way in cannot go
    const last = await browser.submit(account, '/account/identities/unlink', {}, { origin: AUTHD })
    expect(last.status).toBe(409)
    expect(last.html).toContain('This is your last way to sign in')

    // link a second provider: the upstream's sign-in, then back to the account page
    const linkStart = await browser.submit(account, '/account/identities/link', { providerId: second.provider.providerId }, { origin: AUTHD })
    expect(linkStart.status).toBe(303)
    const linked = await browser.get(pathOf(await signInAtUpstream(linkStart.location!, 'only-upstream')))
    expect(linked.location).toBe(`${base}/account?done=identity-linked`)
    expect((await identitiesOf(user.id)).map((i) => i.provider_id).sort()).toEqual([providerId, second.provider.providerId].sort())

    // now one may go
    const twoLinked = await browser.get(`${base}/account`)
    const unlinked = await browser.submit(twoLinked, '/account/identities/unlink', {}, { origin: AUTHD })
    expect(unlinked.location).toBe(`${base}/account?done=identity-unlinked`)
    expect(await identitiesOf(user.id)).toHaveLength(1)
    expect(await queryDatabase(ctx, "SELECT type FROM webhook_events WHERE type = 'identity.unlinked'")).toHaveLength(1)
  })

  it('lets a user without a password confirm it is them by a fresh sign-in at the upstream (prompt=login, max_age=0), never by a silent one', async () => {
    upstream.setAccount('fresh-1', { email: 'fresh@example.com', email_verified: true })
    const providerId = await oidcProvider({ createUsers: 'open' })
    // (signed in six minutes "ago" by authd's clock: the upstream's auth_time is real time)
    ctx.clock.advance(-6 * 60)
    await continueWith(providerId, 'fresh-1')
    ctx.clock.advance(6 * 60)
    const stale = await browser.get(`${base}/account`)
    expect(stale.html).not.toContain('Current password')
    expect(stale.html).toContain('Confirm it is you')
    const confirm = /href="([^"]*reauthenticate=1[^"]*)"/.exec(stale.html)
    expect(confirm).not.toBeNull()
    const start = await browser.get(confirm![1]!.replaceAll('&amp;', '&'))
    const asked = new URL(start.location!)
    expect(asked.searchParams.get('prompt')).toBe('login')
    expect(asked.searchParams.get('max_age')).toBe('0')
    const back = await browser.get(pathOf(await signInAtUpstream(start.location!, 'fresh-1')))
    expect(back.location).toBe(`${AUTHD}${base}/account`)
    const confirmed = await browser.get(`${base}/account`)
    expect(confirmed.html).not.toContain('Confirm it is you')
    expect(confirmed.html).toContain('Change your password')
  })

  it('takes a session the upstream started silently, from its own older sign-in, for no fresh proof', async () => {
    upstream.setAccount('silent-1', { email: 'silent@example.com', email_verified: true })
    const providerId = await oidcProvider({ createUsers: 'open' })
    const upstreamSession = new CookieJar()
    const first = await browser.get(`${base}/login/${providerId}`)
    await browser.get(pathOf(await signInAtUpstream(first.location!, 'silent-1', upstreamSession)))
    ctx.clock.advance(6 * 60)
    // signed out, then "Continue with" again: the upstream asks nothing (its session), and says when it last did
    await browser.submit(await browser.get(`${base}/logout`), '/logout', {}, { origin: AUTHD })
    const again = await browser.get(`${base}/login/${providerId}`)
    expect(new URL(again.location!).searchParams.get('max_age')).toBe(String(30 * 86_400))
    const back = await browser.get(pathOf(await signInAtUpstream(again.location!, 'silent-1', upstreamSession)))
    expect(back.location).toBe(`${base}/account`)
    expect((await browser.get(`${base}/account`)).html).toContain('Confirm it is you')
  })

  it('refuses to link an upstream account that belongs to another user', async () => {
    upstream.setAccount('shared', { email: 'first@example.com', email_verified: true })
    const providerId = await oidcProvider({ createUsers: 'open' })
    await continueWith(providerId, 'shared', { via: new PageBrowser(ctx, {}, AUTHD) })
    const { email } = await ctx.addUser({ email: 'second@example.com' })
    const signedIn = await browser.submit(await browser.get(`${base}/login`), '/login', { email, password: PASSWORD }, { origin: AUTHD })
    expect(signedIn.status).toBe(303)
    const account = await browser.get(`${base}/account`)
    const start = await browser.submit(account, '/account/identities/link', { providerId }, { origin: AUTHD })
    const refused = await browser.get(pathOf(await signInAtUpstream(start.location!, 'shared')))
    expect(refused.status).toBe(403)
    expect(alertOf(refused)).toContain('already linked to another account')
  })
})

describe('the GitHub preset (against a GitHub-shaped fake)', () => {
  let github: GitHubFake
  beforeEach(async () => {
    github = await startGitHubFake({
      users: [
        { id: 583231, login: 'octocat', name: 'Mona Lisa Octocat', email: null, emails: [{ email: 'octocat@example.com', primary: true, verified: true, visibility: 'private' }] },
        { id: 42, login: 'claimer', name: 'Claimer', email: null, emails: [{ email: 'ada@example.com', primary: true, verified: false, visibility: 'private' }] },
      ],
    })
  })
  afterEach(() => github.close())

  async function githubProvider(fields: Record<string, unknown> = {}) {
    const { provider, redirectUri } = await createProvider(ctx.runtime, ctx.tenantId, { type: 'github', issuer: github.url, ...CLIENT, ...fields })
    github.setApp({ ...CLIENT, callbackUrl: redirectUri })
    return provider.providerId
  }

  async function continueWithGitHub(providerId: string, login: string) {
    const start = await browser.get(`${base}/login/${providerId}`)
    return browser.get(pathOf(await authorizeAtGitHubFake(start.location!, login)))
  }

  it('signs a new person in by their numeric id and verified primary address', async () => {
    const providerId = await githubProvider({ createUsers: 'open' })
    expect((await continueWithGitHub(providerId, 'octocat')).location).toBe(`${base}/account`)
    const user = (await userByEmail('octocat@example.com'))!
    expect(user).toMatchObject({ first_name: 'Mona', last_name: 'Lisa Octocat' })
    expect(user.email_verified_at).not.toBeNull()
    expect(await identitiesOf(user.id)).toEqual([{ subject: '583231', provider_id: providerId }])
  })

  it('asks for the local account behind an unverified primary address', async () => {
    const { userId } = await ctx.addUser({ email: 'ada@example.com', emailVerified: true })
    const providerId = await githubProvider({ linkByEmail: 'verified', createUsers: 'open' })
    expect((await continueWithGitHub(providerId, 'claimer')).html).toContain('already exists')
    expect(await identitiesOf(userId)).toEqual([])
  })

  it('says GitHub failed when its API does', async () => {
    const providerId = await githubProvider({ createUsers: 'open' })
    const start = await browser.get(`${base}/login/${providerId}`)
    const callback = pathOf(await authorizeAtGitHubFake(start.location!, 'octocat'))
    github.mode = 'error'
    const failed = await browser.get(callback)
    expect(failed.status).toBe(502)
    expect(alertOf(failed)).toContain('GitHub answered with an error')
  })
})
