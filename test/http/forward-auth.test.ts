// Forward authentication (product spec §24) through app.handle: the proxy's two protocols, the
// domain cookie a sign-in on the pages sets, rules in order with groups and second factors,
// return_to to protected domains only, and the trust of the proxy's headers.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { addAccessRule, removeAccessRule } from '../../src/core/forward-auth/rules'
import { setForwardAuthDomains } from '../../src/core/forward-auth/domains'
import { addMembers, createGroup } from '../../src/core/groups/groups'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { setUserDisabled } from '../../src/core/accounts/users'
import { listUserSessions } from '../../src/core/sessions/sessions'
import { createTenant } from '../../src/core/tenants/tenants'
import { setTenantReturnToOrigins } from '../../src/core/tenants/tenant-pages'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createUser } from '../../src/core/accounts/users'
import { createTestContext, loginFor, PASSWORD, queryDatabase, recordStoreCalls, type TestContext } from '../helpers'
import { fieldError, formOn, PageBrowser, problemText, type PageAnswer } from '../pages'
import { createApp, createMetrics } from '../../src/server/app'
import { jsonLogger } from '../../src/log'
import { peerAddresses } from '../../src/server/plugins/client-ip'
import type { Metrics } from '../../src/server/metrics'

const AUTHD = 'http://auth.example.test'
let ctx: TestContext
let browser: PageBrowser
let email: string
let userId: string
let base: string
let metrics: Metrics

beforeEach(async () => {
  ctx = await createTestContext({ AUTHD_PUBLIC_URL: AUTHD, AUTHD_TRUSTED_PROXIES: '127.0.0.1' })
  ;({ email, userId } = await ctx.addUser({ email: 'ada@example.com' }))
  browser = new PageBrowser(ctx, {}, AUTHD)
  base = `/t/${ctx.tenantId}`
  await setForwardAuthDomains(ctx.runtime, ctx.tenantId, ['example.test'])
  metrics = createMetrics(ctx.runtime)
})
afterEach(() => ctx.close())

async function signIn(returnTo?: string): Promise<PageAnswer> {
  const query = returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''
  return browser.submit(await browser.get(`${base}/login${query}`), '/login', { email, password: PASSWORD }, { origin: AUTHD })
}

/** A check as Caddy's forward_auth asks it, with the browser's cookies. */
function forwardAuth(url: string, init: { method?: string; accept?: string; cookie?: string | null; authorization?: string; peer?: string } = {}) {
  const target = new URL(url)
  const headers: Record<string, string> = {
    'x-forwarded-method': init.method ?? 'GET',
    'x-forwarded-proto': target.protocol.slice(0, -1),
    'x-forwarded-host': target.host,
    'x-forwarded-uri': `${target.pathname}${target.search}`,
    accept: init.accept ?? 'text/html,application/xhtml+xml',
  }
  if (init.authorization) headers.authorization = init.authorization
  const cookie = init.cookie === null ? undefined : (init.cookie ?? [...browser.cookies].map(([n, v]) => `${n}=${v}`).join('; '))
  return ctx.call('GET', `${base}/authz/forward-auth`, { headers, cookie, apiKey: null, peer: init.peer })
}

function authRequest(url: string, init: { method?: string; cookie?: string | null; peer?: string } = {}) {
  const headers = { 'x-original-url': url, 'x-original-method': init.method ?? 'GET' }
  const cookie = init.cookie === null ? undefined : (init.cookie ?? [...browser.cookies].map(([n, v]) => `${n}=${v}`).join('; '))
  return ctx.call('GET', `${base}/authz/auth-request`, { headers, cookie, apiKey: null, peer: init.peer })
}

describe('forward-auth', () => {
  it('sends a browser that is not signed in to the login page, sets the domain cookie at sign-in, then admits it with its headers', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    const before = await forwardAuth('http://app.example.test/dashboard?x=1')
    expect(before.status).toBe(302)
    const login = new URL(before.headers.get('location')!)
    expect(login.origin + login.pathname).toBe(`${AUTHD}${base}/login`)
    expect(login.searchParams.get('return_to')).toBe('http://app.example.test/dashboard?x=1')
    const page = await browser.get(`${login.pathname}${login.search}`)
    expect(page.html).toContain('After signing in you go on to app.example.test.')
    const signedIn = await browser.submit(page, '/login', { email, password: PASSWORD }, { origin: AUTHD })
    expect(signedIn.status).toBe(303)
    expect(signedIn.location).toBe('http://app.example.test/dashboard?x=1')
    const setCookies = signedIn.headers.getSetCookie().find((c) => c.startsWith(`authd_session_${ctx.tenantId}=`))
    expect(setCookies).toMatch(/Domain=example\.test/i)
    expect(setCookies).toMatch(/HttpOnly/i)
    expect(setCookies).toMatch(/SameSite=Lax/i)
    const after = await forwardAuth('http://app.example.test/dashboard?x=1')
    expect(after.status).toBe(200)
    expect(Object.fromEntries(['remote-user', 'remote-email', 'remote-name', 'remote-groups', 'remote-user-id'].map((h) => [h, after.headers.get(h)]))).toEqual({
      'remote-user': email, 'remote-email': email, 'remote-name': 'Ada Lovelace', 'remote-groups': '', 'remote-user-id': userId,
    })
  })

  it('answers nginx: 401 with the login page in Location, 200 once signed in, and reads only X-Original-URL and X-Original-Method', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: '*.example.test', policy: 'one_factor' })
    const before = await authRequest('http://wiki.example.test/page/1')
    expect(before.status).toBe(401)
    expect(before.headers.get('location')).toBe(`${AUTHD}${base}/login?return_to=${encodeURIComponent('http://wiki.example.test/page/1')}`)
    await signIn()
    const after = await authRequest('http://wiki.example.test/page/1', { method: 'POST' })
    expect({ status: after.status, user: after.headers.get('remote-user') }).toEqual({ status: 200, user: email })
  })

  it('answers 401, not a redirect, to what is no page load: another method, or a client that does not ask for HTML', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    expect((await forwardAuth('http://app.example.test/api', { method: 'POST' })).status).toBe(401)
    const json = await forwardAuth('http://app.example.test/api', { accept: 'application/json' })
    expect({ status: json.status, challenge: json.headers.get('www-authenticate'), location: json.headers.get('location') }).toEqual({ status: 401, challenge: 'Bearer realm="authd"', location: null })
  })

  it('lets a bypass path through with every Remote-* header empty, reading nothing from the store', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', paths: ['/health'], policy: 'bypass' })
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    await signIn()
    await forwardAuth('http://app.example.test/health') // (the rules are read once, then held)
    const calls = recordStoreCalls(ctx.runtime.store)
    const open = await forwardAuth('http://app.example.test/health')
    expect(open.status).toBe(200)
    for (const header of ['remote-user', 'remote-email', 'remote-name', 'remote-groups', 'remote-user-id']) expect(open.headers.get(header)).toBe('')
    expect(calls).toEqual([])
    // A prefix holds whole segments: /health opens /health/live, never /healthy or /health-admin.
    expect((await forwardAuth('http://app.example.test/health/live', { cookie: null })).status).toBe(200)
    expect((await forwardAuth('http://app.example.test/healthy', { cookie: null })).status).toBe(302)
    expect((await forwardAuth('http://app.example.test/health-admin', { cookie: null })).status).toBe(302)
  })

  it("reads the session with its user and the user's groups in one read for an admitted check, and writes nothing", async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    await signIn()
    await forwardAuth('http://app.example.test/')
    const calls = recordStoreCalls(ctx.runtime.store)
    expect((await forwardAuth('http://app.example.test/')).status).toBe(200)
    expect(calls.map((call) => call.name)).toEqual(['sessions.findTokenWithGroups'])
  })

  it("records the session's last use at most once a minute, as the account page lists it", async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    ctx.clock.freeze()
    await signIn()
    const signedInAt = ctx.clock.now()
    ctx.clock.advance(90)
    const calls = recordStoreCalls(ctx.runtime.store)
    for (let i = 0; i < 3; i++) expect((await forwardAuth('http://app.example.test/')).status).toBe(200)
    expect(calls.filter((call) => call.name === 'sessions.markUsed').length).toBe(1)
    const [session] = await listUserSessions(ctx.runtime, userId)
    expect(session!.lastUsedAt).toBe(new Date(signedInAt + 90_000).toISOString())
  })

  it('denies what no rule matches, and a deny rule, to everyone', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', paths: ['/admin'], policy: 'deny' })
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    await signIn()
    const other = await forwardAuth('http://other.example.test/')
    expect({ status: other.status, text: other.text }).toEqual({ status: 403, text: 'You do not have access to other.example.test' })
    expect((await forwardAuth('http://other.example.test/', { cookie: null })).status).toBe(403)
    expect((await forwardAuth('http://app.example.test/admin/users')).status).toBe(403)
  })

  it('matches paths as the application reads them: encoded, with dot segments or doubled slashes', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', paths: ['/admin'], policy: 'deny' })
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    await signIn()
    for (const path of ['/%61dmin', '/public/../admin', '//admin', '/public/%2e%2e/admin/x', '/./admin', '/public\\..\\admin', '/public/..;/admin', '/public/..%3b/admin', '/admin;jsessionid=x', '/ADMIN', '/Admin/x', '/admin.', '/admin%20', '/admin./x']) {
      expect({ path, status: (await forwardAuth(`http://app.example.test${path}`)).status }).toEqual({ path, status: 403 })
    }
    expect((await forwardAuth('http://app.example.test/public/admin')).status).toBe(200)
    expect((await forwardAuth('http://app.example.test/%E0%A4%A')).status).toBe(400)
    // (some applications stop reading a path at a NUL)
    expect((await forwardAuth('http://app.example.test/admin%00.png')).status).toBe(400)
  })

  it("admits members of a rule's groups only, and lists the user's groups sorted in Remote-Groups", async () => {
    const admins = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
    const ops = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'ops' })
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'grafana.example.test', policy: 'one_factor', groups: ['admins'] })
    await signIn()
    const outsider = await forwardAuth('http://grafana.example.test/')
    expect(outsider.status).toBe(403)
    await addMembers(ctx.runtime, ops.id, [userId])
    await addMembers(ctx.runtime, admins.id, [userId])
    const member = await forwardAuth('http://grafana.example.test/')
    expect({ status: member.status, groups: member.headers.get('remote-groups') }).toEqual({ status: 200, groups: 'admins,ops' })
  })

  it('audits a denial of a signed-in user at most once a minute per user and rule, and counts every answer in the metrics', async () => {
    const rule = await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'deny' })
    await signIn()
    const denials = () => queryDatabase<{ detail: string }>(ctx, "SELECT detail FROM audit_events WHERE type = 'forward_auth.denied'")
    for (let i = 0; i < 3; i++) expect((await forwardAuth('http://app.example.test/secret?token=x')).status).toBe(403)
    expect((await denials()).length).toBe(1)
    const detail = JSON.parse((await denials())[0]!.detail)
    expect(detail).toMatchObject({ host: 'app.example.test', path: '/secret', method: 'GET', ruleId: rule.id })
    ctx.clock.advance(61)
    await forwardAuth('http://app.example.test/secret')
    expect((await denials()).length).toBe(2)
    const counted = (await metrics.render()).split('\n').filter((line) => line.startsWith('authd_forward_auth_checks_total'))
    expect(counted).toEqual(['authd_forward_auth_checks_total{outcome="denied"} 4'])
  })

  it('logs a check that refuses, not one that passes (a proxy asks about every request it serves)', async () => {
    const lines: string[] = []
    const app = createApp(ctx.runtime, jsonLogger((line) => lines.push(line)))
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', paths: ['/open'], policy: 'bypass' })
    const ask = async (path: string) => {
      const request = new Request(`http://localhost${base}/authz/auth-request`, { headers: { 'x-original-url': `http://app.example.test${path}`, 'x-original-method': 'GET' } })
      peerAddresses.set(request, '127.0.0.1')
      return (await app.handle(request)).status
    }
    expect(await ask('/open')).toBe(200)
    expect(lines).toEqual([])
    expect(await ask('/closed')).toBe(403)
    expect(lines.map((line) => JSON.parse(line)).map(({ msg, path, status }) => ({ msg, path, status }))).toEqual([{ msg: 'request', path: `${base}/authz/auth-request`, status: 403 }])
  })

  it('counts allowed checks and those sent to sign in, and audits neither', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    await forwardAuth('http://app.example.test/')
    await signIn()
    await forwardAuth('http://app.example.test/')
    await forwardAuth('http://app.example.test/')
    const counted = (await metrics.render()).split('\n').filter((line) => line.startsWith('authd_forward_auth_checks_total'))
    expect(counted.sort()).toEqual(['authd_forward_auth_checks_total{outcome="allowed"} 2', 'authd_forward_auth_checks_total{outcome="sign_in"} 1'])
    expect(await queryDatabase(ctx, "SELECT type FROM audit_events WHERE type LIKE 'forward_auth%'")).toEqual([])
  })

  it('ends access with the session: sign-out on the pages, a session ended from the account page, a disabled user', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    await signIn()
    const cookie = [...browser.cookies].map(([n, v]) => `${n}=${v}`).join('; ')
    expect((await forwardAuth('http://app.example.test/', { cookie })).status).toBe(200)
    const out = await browser.submit(await browser.get(`${base}/logout`), '/logout', {}, { origin: AUTHD })
    expect(out.headers.getSetCookie().some((c) => c.startsWith(`authd_session_${ctx.tenantId}=;`) && /Domain=example\.test/i.test(c))).toBe(true)
    // The cookie the browser had (a copy kept elsewhere) opens nothing any more.
    expect((await forwardAuth('http://app.example.test/', { cookie })).status).toBe(302)

    await signIn()
    expect((await forwardAuth('http://app.example.test/')).status).toBe(200)
    await setUserDisabled(ctx.runtime, userId, true)
    expect((await forwardAuth('http://app.example.test/')).status).toBe(302)
  })

  it('takes a bearer access token of the tenant instead of the cookie, until its session ends', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'api.example.test', policy: 'one_factor' })
    const login = await loginFor(ctx, email)
    const token = login.json.data.response.accessToken as string
    const answer = await forwardAuth('http://api.example.test/v1', { cookie: null, authorization: `Bearer ${token}`, accept: 'application/json' })
    expect({ status: answer.status, user: answer.headers.get('remote-user') }).toEqual({ status: 200, user: email })
    // Another tenant's token (its own audience) is nobody here.
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    await createUser(ctx.runtime, { tenantId: other.id, email: 'eve@example.com', firstName: 'Eve', lastName: 'X', password: PASSWORD })
    const foreign = await ctx.call('POST', '/api/v1/auth/login', { body: { email: 'eve@example.com', password: PASSWORD }, apiKey: (await createApiKey(ctx.runtime, { tenantId: other.id })).key })
    expect((await forwardAuth('http://api.example.test/v1', { cookie: null, authorization: `Bearer ${foreign.json.data.response.accessToken}`, accept: 'application/json' })).status).toBe(401)
    // An application's own Authorization (Basic, or its own tokens) hides neither the cookie nor the answer.
    await signIn()
    expect((await forwardAuth('http://api.example.test/v1', { authorization: 'Basic YWxhZGRpbjpvcGVuc2VzYW1l' })).status).toBe(200)
    expect((await forwardAuth('http://api.example.test/v1', { authorization: 'Bearer not-an-authd-token' })).status).toBe(200)
    await ctx.call('POST', '/api/v1/auth/logout', { cookie: `refreshToken=${login.refreshCookie}` })
    expect((await forwardAuth('http://api.example.test/v1', { cookie: null, authorization: `Bearer ${token}`, accept: 'application/json' })).status).toBe(401)
  })

  it('refuses a peer that is not a trusted proxy, and a proxy that leaves out the original request', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'bypass' })
    const around = await forwardAuth('http://app.example.test/', { peer: '203.0.113.9' })
    expect({ status: around.status, text: around.text }).toEqual({ status: 403, text: 'Forward authentication answers trusted proxies only (AUTHD_TRUSTED_PROXIES)' })
    expect((await authRequest('http://app.example.test/', { peer: '203.0.113.9' })).status).toBe(403)
    const bare = await ctx.call('GET', `${base}/authz/forward-auth`, { apiKey: null })
    expect({ status: bare.status, text: bare.text }).toEqual({ status: 400, text: 'A forward-auth check needs X-Forwarded-Host, X-Forwarded-Uri and X-Forwarded-Method from the proxy' })
    const foreignUrl = await ctx.call('GET', `${base}/authz/auth-request`, { apiKey: null, headers: { 'x-original-url': 'javascript:alert(1)', 'x-original-method': 'GET' } })
    expect(foreignUrl.status).toBe(400)
  })

  it('answers 404 for a tenant that does not exist or protects no domain, and decides nothing for a host off its domains', async () => {
    expect((await ctx.call('GET', '/t/nobody/authz/forward-auth', { apiKey: null })).status).toBe(404)
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'bypass' })
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.lab.example.test', policy: 'bypass' })
    await setForwardAuthDomains(ctx.runtime, ctx.tenantId, ['example.test', 'lab.example.test'])
    expect((await forwardAuth('http://app.lab.example.test/')).status).toBe(200)
    // Narrowed by the operator (authd at auth.lab.example.test, say): the rule left behind for app.example.test decides nothing.
    await ctx.runtime.store.tenants.updateSettings(ctx.tenantId, { forwardAuthDomains: JSON.stringify(['lab.example.test']) })
    ctx.clock.advance(15)
    expect((await forwardAuth('http://app.example.test/')).status).toBe(403)
    expect((await forwardAuth('http://app.lab.example.test/')).status).toBe(200)
    // Turned off: the checks answer 404 (nginx and Caddy then refuse every request), whatever rules stay.
    await ctx.runtime.store.tenants.updateSettings(ctx.tenantId, { forwardAuthDomains: null })
    ctx.clock.advance(15)
    const off = await forwardAuth('http://app.lab.example.test/')
    expect({ status: off.status, text: off.text }).toEqual({ status: 404, text: 'No tenant here protects a domain with forward authentication' })
  })

  it('refuses an original URL whose host is not a host: a URL parser and the proxy would read it apart', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'public.example.test', policy: 'bypass' })
    for (const url of ['http://app.example.test:1@public.example.test/admin', 'http://user@public.example.test/', 'http://app example.test/']) {
      expect({ url, status: (await authRequest(url)).status }).toEqual({ url, status: 400 })
    }
    for (const host of ['app.example.test:1@public.example.test', 'public.example.test/x', 'public.example.test?x']) {
      const answer = await ctx.call('GET', `${base}/authz/forward-auth`, { apiKey: null, headers: { 'x-forwarded-method': 'GET', 'x-forwarded-proto': 'http', 'x-forwarded-host': host, 'x-forwarded-uri': '/admin' } })
      expect({ host, status: answer.status, text: answer.text }).toEqual({ host, status: 400, text: 'The original request names no host: a host name or address, with at most a port' })
    }
    expect((await authRequest('http://PUBLIC.example.test.:8443/')).status).toBe(200)
  })

  it('holds the rules in memory: a rule written by another instance is in force within 15 s, one added here at once', async () => {
    await signIn()
    expect((await forwardAuth('http://app.example.test/')).status).toBe(403)
    // Another instance (or the CLI) adds a rule: this one reads it at its next reload.
    await ctx.runtime.store.accessRules.insert({ id: Bun.randomUUIDv7(), tenantId: ctx.tenantId, domain: 'app.example.test', paths: [], methods: [], policy: 'one_factor', groups: [], createdAt: ctx.clock.now() }, null, 500)
    expect((await forwardAuth('http://app.example.test/')).status).toBe(403)
    ctx.clock.freeze()
    ctx.clock.advance(14)
    expect((await forwardAuth('http://app.example.test/')).status).toBe(403)
    ctx.clock.advance(1)
    expect((await forwardAuth('http://app.example.test/')).status).toBe(200)
    const rule = await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'deny', position: 1 })
    expect((await forwardAuth('http://app.example.test/')).status).toBe(403)
    await removeAccessRule(ctx.runtime, rule.id)
    expect((await forwardAuth('http://app.example.test/')).status).toBe(200)
  })
})

describe('return_to and the pages', () => {
  it('returns to any URL on a protected domain, and refuses another host', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: '*.example.test', policy: 'one_factor' })
    const foreign = await browser.get(`${base}/login?return_to=${encodeURIComponent('http://evil.test/')}`)
    expect(foreign.status).toBe(400)
    expect(problemText(foreign.html)).toContain('This sign-in link leads to a site that is not registered for Acme.')
    const lookalike = await browser.get(`${base}/login?return_to=${encodeURIComponent('http://example.test.evil.test/')}`)
    expect(lookalike.status).toBe(400)
    const signedIn = await signIn('http://deep.wiki.example.test/a?b=c')
    expect(signedIn.location).toBe('http://deep.wiki.example.test/a?b=c')
  })

  it('gives a browser signed in before the domain was protected its cookie when it is sent back through the login page', async () => {
    await setForwardAuthDomains(ctx.runtime, ctx.tenantId, [])
    await signIn()
    expect([...browser.cookies.keys()].some((name) => name.startsWith('authd_session_'))).toBe(false)
    await setForwardAuthDomains(ctx.runtime, ctx.tenantId, ['example.test'])
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    const sent = await forwardAuth('http://app.example.test/')
    const back = await browser.get(new URL(sent.headers.get('location')!).pathname + new URL(sent.headers.get('location')!).search)
    expect(back.location).toBe('http://app.example.test/')
    expect((await forwardAuth('http://app.example.test/')).status).toBe(200)
  })

  it('judges an application the operator also registered as a return_to origin like any other on the domain', async () => {
    await setTenantReturnToOrigins(ctx.runtime, ctx.tenantId, ['https://app.example.test'])
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor', groups: ['admins'] })
    await signIn()
    const page = await browser.get(`${base}/login?return_to=${encodeURIComponent('https://app.example.test/')}`)
    expect(page.status).toBe(403)
    expect(page.html).toContain('<h1>You do not have access to app.example.test</h1>')
  })

  it('tells a signed-in user whom the rules keep out so, with a way to switch accounts, instead of a loop', async () => {
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor', groups: ['admins'] })
    await signIn()
    const page = await browser.get(`${base}/login?return_to=${encodeURIComponent('http://app.example.test/')}`)
    expect(page.status).toBe(403)
    expect(page.html).toContain('<h1>You do not have access to app.example.test</h1>')
    expect(formOn(page.html, '/logout').hidden.return_to).toBe('http://app.example.test/')
  })

  it('keeps the domain cookie from opening the pages: it is sealed for the checks alone', async () => {
    await signIn()
    const domainCookie = [...browser.cookies].find(([name]) => name.startsWith('authd_session_'))!
    const thief = new PageBrowser(ctx, {}, AUTHD)
    thief.cookies.set('authd_session', domainCookie[1])
    const account = await thief.get(`${base}/account`)
    expect(account.status).toBe(303)
    expect(account.location).toContain('/login')
  })
})

describe('two_factor', () => {
  it('sends a password-only session to set up a second factor, then to prove it, then on to the application', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', paths: ['/admin'], policy: 'two_factor' })
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'one_factor' })
    await signIn()
    expect((await forwardAuth('http://app.example.test/')).status).toBe(200)
    const asked = await forwardAuth('http://app.example.test/admin')
    expect(asked.status).toBe(302)
    const loginUrl = new URL(asked.headers.get('location')!)
    const setUp = await browser.get(loginUrl.pathname + loginUrl.search)
    expect(setUp.html).toContain('app.example.test asks for two-step verification, and your account has none yet.')
    // Turned on on the account page, in the same session.
    const account = await browser.get(`${base}/account`)
    const started = await browser.submit(account, '/account/totp', {}, { origin: AUTHD })
    const secret = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(started.html)![1]!.replaceAll(' ', '')
    const code = () => totpCode(secret, totpStep(ctx.clock.now()))
    await browser.submit(started, '/account/totp/confirm', { code: code() }, { origin: AUTHD })
    expect((await forwardAuth('http://app.example.test/admin')).status).toBe(302)
    ctx.clock.advance(30)
    const prove = await browser.get(loginUrl.pathname + loginUrl.search)
    expect(prove.html).toContain('app.example.test asks for two-step verification. Enter the 6-digit code from your authenticator app.')
    const wrong = await browser.submit(prove, '/login/session-factor', { code: code() === '000000' ? '111111' : '000000' }, { origin: AUTHD })
    expect({ status: wrong.status, code: fieldError(wrong.html, 'code') }).toEqual({ status: 400, code: 'The code is wrong or was used already. Enter a new code.' })
    const proved = await browser.submit(wrong, '/login/session-factor', { code: code() }, { origin: AUTHD })
    expect(proved.location).toBe('http://app.example.test/admin')
    expect((await forwardAuth('http://app.example.test/admin')).status).toBe(200)
  })

  it('admits a session whose sign-in asked for the code at once', async () => {
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', policy: 'two_factor' })
    const login = await loginFor(ctx, email)
    const bearer = { authorization: `Bearer ${login.json.data.response.accessToken}` }
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer })).json.data
    await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: totpCode(secret, totpStep(ctx.clock.now())) } })
    ctx.clock.advance(30)
    const challenge = await signIn('http://app.example.test/')
    const passed = await browser.submit(challenge, '/login/second-factor', { code: totpCode(secret, totpStep(ctx.clock.now())) }, { origin: AUTHD })
    expect(passed.location).toBe('http://app.example.test/')
    expect((await forwardAuth('http://app.example.test/')).status).toBe(200)
  })
})
