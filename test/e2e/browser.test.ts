// A real browser: a page served from another origin logs in with credentials: 'include',
// refreshes with the HttpOnly SameSite=None cookie, and logs out; a page from an origin
// that is not allowed can neither read nor use the session.
//
// The page and authd share a site (localhost, different ports), as an app and its auth
// server do in production (app.example.com, auth.example.com). Across *sites*, browsers
// that block third-party cookies (Safari, Firefox, and this Chromium, even in a normal
// profile) do not store the cookie at all: see docs/security.md.
// Needs Chromium (Debian's `chromium`; .ci/run installs it). Without it, locally, the test
// is skipped with a message; in CI (CI=true) its absence is a failure.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { silentLogger } from '../../src/log'
import { startServer, type RunningServer } from '../../src/server/serve'
import { createTestContext, PASSWORD, type TestContext } from '../helpers'

const CHROMIUM = process.env.AUTHD_TEST_CHROMIUM ?? '/usr/bin/chromium'
const available = existsSync(CHROMIUM)
if (!available && process.env.CI !== 'true') console.warn(`browser test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`)

let ctx: TestContext
let server: RunningServer
let browser: Browser
let pages: ReturnType<typeof Bun.serve>
let stranger: ReturnType<typeof Bun.serve>
let pageOrigin: string
let strangerOrigin: string
let apiUrl: string

beforeAll(async () => {
  if (!available) return
  // Two origins on other sites than authd: the app (allowed) and a stranger (not allowed).
  pages = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('<!doctype html><title>app</title><p>app</p>', { headers: { 'content-type': 'text/html' } }) })
  stranger = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('<!doctype html><title>stranger</title>', { headers: { 'content-type': 'text/html' } }) })
  pageOrigin = `http://localhost:${pages.port}`
  strangerOrigin = `http://localhost:${stranger.port}`
  ctx = await createTestContext({ AUTHD_PORT: '0', AUTHD_CORS_ORIGINS: pageOrigin })
  server = await startServer(ctx.runtime, silentLogger)
  apiUrl = `${server.url.replace('127.0.0.1', 'localhost')}/api/v1/auth`
  await ctx.addUser({ email: 'ada@example.com' })
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}, 60_000)

afterAll(async () => {
  if (!available) return
  await browser?.close()
  await server?.stop()
  pages?.stop()
  stranger?.stop()
  ctx?.close()
})

describe('in a real browser (Chromium)', () => {
  it.skipIf(!available && process.env.CI !== 'true')('a page on another origin logs in, refreshes with the cookie and logs out', async () => {
    expect(available).toBe(true)
    const page = await (await browser.newContext()).newPage()
    await page.goto(pageOrigin)
    const result = await page.evaluate(
      async ({ api, key, password }) => {
        const call = async (path: string, init: RequestInit = {}) => {
          const response = await fetch(`${api}${path}`, { credentials: 'include', ...init })
          return { status: response.status, body: (await response.json()) as { data: any } }
        }
        const login = await call('/login', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ email: 'ada@example.com', password, rememberMe: true }),
        })
        const visibleCookies = (globalThis as unknown as { document: { cookie: string } }).document.cookie
        const refresh = await call('/refresh-token')
        const again = await call('/refresh-token')
        const logout = await call('/logout', { method: 'POST' })
        const afterLogout = await call('/refresh-token')
        return { login, visibleCookies, refresh, again, logout, afterLogout }
      },
      { api: apiUrl, key: ctx.apiKey, password: PASSWORD },
    )
    expect(result.login.status).toBe(201)
    expect(result.visibleCookies).toBe('') // HttpOnly: scripts never see the refresh token
    expect(result.refresh.status).toBe(201)
    expect(result.refresh.body.data.response.user.email).toBe('ada@example.com')
    expect(result.again.status).toBe(201) // the browser stored the rotated cookie
    expect(result.logout.status).toBe(200)
    expect(result.afterLogout.status).toBe(401)
  }, 60_000)

  it.skipIf(!available && process.env.CI !== 'true')('a page from an origin that is not allowed can neither read nor use the session', async () => {
    const app = await (await browser.newContext()).newPage()
    await app.goto(pageOrigin)
    const api = apiUrl
    await app.evaluate(
      async ({ api, key, password }) => {
        await fetch(`${api}/login`, {
          method: 'POST',
          credentials: 'include',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ email: 'ada@example.com', password }),
        })
      },
      { api, key: ctx.apiKey, password: PASSWORD },
    )
    const tokenRows = () => {
      const db = new Database(ctx.runtime.config.databasePath, { readonly: true })
      const { n } = db.query('SELECT count(*) AS n FROM refresh_tokens').get() as { n: number }
      db.close()
      return n
    }
    const before = tokenRows()
    const strangerPage = await app.context().newPage()
    await strangerPage.goto(strangerOrigin)
    const outcome = await strangerPage.evaluate(async (api) => {
      try {
        await fetch(`${api}/refresh-token`, { credentials: 'include' })
        return 'read the response'
      } catch {
        return 'blocked by CORS'
      }
    }, api)
    expect(outcome).toBe('blocked by CORS')
    const refused = await strangerPage.evaluate(async (api) => (await fetch(`${api}/refresh-token`, { credentials: 'include', mode: 'no-cors' })).type, api)
    expect(refused).toBe('opaque') // even a no-cors request gets nothing readable,
    // and the server refused both (Origin check): the stranger rotated nothing.
    expect(tokenRows()).toBe(before)
    const stillWorks = await app.evaluate(async (api) => (await fetch(`${api}/refresh-token`, { credentials: 'include' })).status, api)
    expect(stillWorks).toBe(201)
  }, 60_000)
})
