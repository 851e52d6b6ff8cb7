// Forward authentication (product spec §24) through app.handle: the proxy's two protocols, the
// domain cookie a sign-in on the pages sets, rules in order with groups and second factors,
// return_to to protected domains only, and the trust of the proxy's headers.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { addAccessRule, removeAccessRule } from '../../src/core/forward-auth/rules'
import { setForwardAuthDomains } from '../../src/core/forward-auth/domains'
import { addMembers, createGroup } from '../../src/core/groups/groups'
import { createTestContext, loginFor, PASSWORD, type TestContext } from '../helpers'
import { PageBrowser, type PageAnswer } from '../pages'

const AUTHD = 'http://auth.example.test'
let ctx: TestContext
let browser: PageBrowser
let email: string
let userId: string
let base: string

beforeEach(async () => {
  ctx = await createTestContext({ AUTHD_PUBLIC_URL: AUTHD, AUTHD_TRUSTED_PROXIES: '127.0.0.1' })
  ;({ email, userId } = await ctx.addUser({ email: 'ada@example.com' }))
  browser = new PageBrowser(ctx, {}, AUTHD)
  base = `/t/${ctx.tenantId}`
  await setForwardAuthDomains(ctx.runtime, ctx.tenantId, ['example.test'])
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
})
