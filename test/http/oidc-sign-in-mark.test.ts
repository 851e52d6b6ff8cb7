// The mark authd puts on an authorize request it resumes after a sign-in (authd_signed_in_after)
// vouches only for a sign-in authd itself asked for: a signed-in browser that writes the mark
// into a URL, or takes one from another browser or another request, is asked to sign in again
// (OpenID Connect Core §3.1.2.1: prompt=login and max_age oblige the provider to re-authenticate).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import * as oidc from 'openid-client'
import { SIGN_IN_MARK_GRACE_MS, SIGN_IN_MARK_TTL_MS, SIGNED_IN_AFTER } from '../../src/core/oidc/authorization'
import { authorizationRequest, CALLBACK, relyingParty, startOidcWorld, UserAgent, type OidcWorld } from '../oidc-journey'

let world: OidcWorld
let email: string
beforeEach(async () => {
  world = await startOidcWorld()
  email = (await world.ctx.addUser({ email: 'ada@example.com' })).email
})
afterEach(() => world.close())

/** A browser signed in through a first code flow, and its relying party. */
async function signedInBrowser() {
  const { config } = await relyingParty(world)
  const browser = new UserAgent(world.server.url)
  const first = await authorizationRequest(config)
  const login = await browser.follow(first.url.href)
  expect((await browser.signIn(login, email)).location).toStartWith(CALLBACK)
  return { config, browser }
}

/** Where authd sends the browser for this URL: the client (a code or an error) or a login page. */
async function outcome(browser: UserAgent, url: string): Promise<'code' | 'login' | string> {
  const answer = await browser.send(url)
  const location = new URL(answer.location!, world.server.url)
  if (location.href.startsWith(CALLBACK)) return location.searchParams.get('code') ? 'code' : location.searchParams.get('error')!
  return location.pathname.endsWith('/login') ? 'login' : location.href
}

/** The login page authd sent this request to, and its return_to: the resumed request, marked. */
async function markedResume(browser: UserAgent, url: string): Promise<{ login: URL; resume: URL }> {
  const answer = await browser.send(url)
  const login = new URL(answer.location!, world.server.url)
  expect(login.pathname).toEndWith('/login')
  const resume = new URL(login.searchParams.get('return_to')!, world.server.url)
  expect(resume.searchParams.get(SIGNED_IN_AFTER)).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/)
  return { login, resume }
}

describe('authorize: the sign-in mark cannot be forged, moved or kept', () => {
  it('a mark written by the browser gets no code for prompt=login, max_age=0 or prompt=none&max_age=0', async () => {
    const { config, browser } = await signedInBrowser()
    world.ctx.clock.advance(5)
    for (const value of ['0', String(Date.now() - 3_600_000), `0.${'A'.repeat(43)}`, `${world.ctx.clock.now()}.${'A'.repeat(43)}`]) {
      const login = await authorizationRequest(config, { prompt: 'login', [SIGNED_IN_AFTER]: value })
      expect(await outcome(browser, login.url.href)).toBe('login')
      const maxAge = await authorizationRequest(config, { max_age: '0', [SIGNED_IN_AFTER]: value })
      expect(await outcome(browser, maxAge.url.href)).toBe('login')
      const silent = await authorizationRequest(config, { prompt: 'none', max_age: '0', [SIGNED_IN_AFTER]: value })
      expect(await outcome(browser, silent.url.href)).toBe('login_required')
    }
  })

  it("authd's own mark resumes the request after the sign-in, and only that request in that browser, for a while", async () => {
    const { config, browser } = await signedInBrowser()
    world.ctx.clock.advance(5)
    const request = await authorizationRequest(config, { prompt: 'login' })
    const { login: loginUrl, resume } = await markedResume(browser, request.url.href)
    // Before signing in again, the mark vouches for nothing: the session is older than it.
    expect(await outcome(browser, resume.href)).toBe('login')

    // Signed in again: the marked request gets its code.
    const login = await browser.follow(loginUrl.pathname + loginUrl.search)
    const callback = new URL((await browser.signIn(login, email)).location!)
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce })
    expect(tokens.access_token).toBeString()

    // The same mark on another request (another state) is no mark.
    const other = new URL(resume)
    other.searchParams.set('state', 'another-state')
    expect(await outcome(browser, other.href)).toBe('login')
    // Nor in another signed-in browser (it has a form cookie of its own).
    const { browser: elsewhere } = await signedInBrowser()
    world.ctx.clock.advance(5)
    expect(await outcome(elsewhere, resume.href)).toBe('login')
    // Nor in the same browser once the sign-in it vouched for is no longer just now (a replay
    // under max_age would otherwise get codes for the mark's whole life).
    world.ctx.clock.advance(SIGN_IN_MARK_GRACE_MS / 1000 + 1)
    expect(await outcome(browser, resume.href)).toBe('login')
  })

  it('a mark made long ago vouches for nothing, even for a sign-in just now', async () => {
    const { config, browser } = await signedInBrowser()
    world.ctx.clock.advance(5)
    const request = await authorizationRequest(config, { prompt: 'login' })
    const { login: loginUrl, resume } = await markedResume(browser, request.url.href)
    world.ctx.clock.advance(SIGN_IN_MARK_TTL_MS / 1000 + 1)
    const login = await browser.follow(loginUrl.pathname + loginUrl.search)
    // (the sign-in resumes the request, whose stale mark sends it to the login form again)
    const after = await browser.signIn(login, email)
    expect(new URL(after.location ?? 'http://x/', world.server.url).href.startsWith(CALLBACK)).toBe(false)
    expect(after.html).toContain('name="password"')
    expect(await outcome(browser, resume.href)).toBe('login')
  })
})
