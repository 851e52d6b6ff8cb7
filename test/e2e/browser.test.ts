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
import type { Browser } from 'playwright-core'
import { silentLogger } from '../../src/log'
import { startServer, type RunningServer } from '../../src/server/serve'
import { browserAvailable, sharedBrowser } from '../browser'
import { createTestContext, PASSWORD, type TestContext } from '../helpers'

const available = browserAvailable

let ctx: TestContext
let server: RunningServer
let browser: Browser
let pages: ReturnType<typeof Bun.serve>
let stranger: ReturnType<typeof Bun.serve>
let pageOrigin: string
let twoFactorApp: string
let strangerOrigin: string
let apiUrl: string

beforeAll(async () => {
  if (!available) return
  // Two origins on other sites than authd: the app (allowed) and a stranger (not allowed).
  pages = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request) => new Response(new URL(request.url).pathname === '/two-factor' ? TWO_FACTOR_APP : '<!doctype html><title>app</title><p>app</p>', { headers: { 'content-type': 'text/html' } }),
  })
  stranger = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('<!doctype html><title>stranger</title>', { headers: { 'content-type': 'text/html' } }) })
  pageOrigin = `http://localhost:${pages.port}`
  twoFactorApp = `${pageOrigin}/two-factor`
  strangerOrigin = `http://localhost:${stranger.port}`
  ctx = await createTestContext({ AUTHD_PORT: '0', AUTHD_CORS_ORIGINS: pageOrigin })
  server = await startServer(ctx.runtime, silentLogger)
  apiUrl = `${server.url.replace('127.0.0.1', 'localhost')}/api/v1/auth`
  await ctx.addUser({ email: 'ada@example.com' })
  await ctx.addUser({ email: 'grace@example.com' })
  browser = await sharedBrowser()
}, 60_000)

afterAll(async () => {
  if (!available) return
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

// The application a user signs in to: forms that call authd, as a real front end would. The
// API address and key come in the query string; each step leaves its outcome on <body>.
const TWO_FACTOR_APP = `<!doctype html><title>two-factor</title>
<form id="login"><input name="email"><input name="password" type="password"><button>Sign in</button></form>
<button id="enrol">Turn on two-factor authentication</button><code id="secret"></code>
<form id="confirm"><input name="code" autocomplete="one-time-code"><button>Confirm</button></form>
<ol id="recovery"></ol>
<form id="verify"><input name="code" autocomplete="one-time-code"><button>Verify</button></form>
<button id="logout">Sign out</button>
<script>
const params = new URLSearchParams(location.search)
const api = params.get('api'), key = params.get('key')
let accessToken = null, challengeToken = null
const call = async (method, path, body, headers = {}) => {
  const response = await fetch(api + path, { method, credentials: 'include', headers: { 'content-type': 'application/json', ...headers }, body: body && JSON.stringify(body) })
  return { status: response.status, body: await response.json() }
}
const done = (step, answer) => { document.body.dataset.step = step; document.body.dataset.status = answer.status; document.body.dataset.message = answer.body.message }
const signedIn = (answer) => { accessToken = answer.body.data.response.accessToken; document.body.dataset.amr = JSON.parse(atob(accessToken.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))).amr.join(',') }
const on = (id, step, action) => document.getElementById(id).addEventListener(id === 'enrol' || id === 'logout' ? 'click' : 'submit', async (event) => { event.preventDefault(); done(step, await action(event.target)) })
on('login', 'login', async (form) => {
  const answer = await call('POST', '/login', { email: form.email.value, password: form.password.value }, { 'x-api-key': key })
  if (answer.body.data?.response?.mfaRequired) challengeToken = answer.body.data.response.challengeToken
  else if (answer.status === 201) signedIn(answer)
  document.body.dataset.challenged = String(Boolean(challengeToken))
  return answer
})
on('enrol', 'enrol', async () => {
  const answer = await call('POST', '/mfa/totp', undefined, { authorization: 'Bearer ' + accessToken })
  document.getElementById('secret').textContent = answer.body.data.secret
  return answer
})
on('confirm', 'confirm', async (form) => {
  const answer = await call('POST', '/mfa/totp/confirm', { code: form.code.value }, { authorization: 'Bearer ' + accessToken })
  for (const code of answer.body.data?.recoveryCodes ?? []) document.getElementById('recovery').append(Object.assign(document.createElement('li'), { textContent: code }))
  return answer
})
on('verify', 'verify', async (form) => {
  const answer = await call('POST', '/mfa/verify', { challengeToken, code: form.code.value }, { 'x-api-key': key })
  if (answer.status === 201) signedIn(answer)
  return answer
})
on('logout', 'logout', () => call('POST', '/logout'))
</script>`

// The authenticator app: RFC 6238 over WebCrypto in the browser, written apart from
// core/totp.ts so that the two implementations check each other.
const authenticator = async ({ secret, at }: { secret: string; at: number }) => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
  let bits = ''
  for (const ch of secret.replace(/=+$/, '')) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0')
  const keyBytes = new Uint8Array(Math.floor(bits.length / 8)).map((_, i) => parseInt(bits.slice(i * 8, i * 8 + 8), 2))
  const counter = new DataView(new ArrayBuffer(8))
  counter.setBigUint64(0, BigInt(Math.floor(at / 1000 / 30)))
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-1' }, false, ['sign'])
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, counter.buffer))
  const offset = mac[19]! & 0x0f
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!
  return String(binary % 1_000_000).padStart(6, '0')
}

describe('two-factor authentication in a real browser (Chromium)', () => {
  it.skipIf(!available && process.env.CI !== 'true')('enrols by typing the code computed from the secret, signs out, and signs in again through the challenge', async () => {
    expect(available).toBe(true)
    const page = await (await browser.newContext()).newPage()
    await page.goto(`${twoFactorApp}?${new URLSearchParams({ api: apiUrl, key: ctx.apiKey })}`)
    const step = async (name: string) => {
      await page.waitForSelector(`body[data-step="${name}"]`)
      const state = await page.evaluate(() => ({ ...(globalThis as unknown as { document: { body: { dataset: Record<string, string> } } }).document.body.dataset }))
      await page.evaluate(() => delete (globalThis as unknown as { document: { body: { dataset: Record<string, string> } } }).document.body.dataset.step)
      return state
    }
    const signIn = async () => {
      await page.fill('#login [name=email]', 'grace@example.com')
      await page.fill('#login [name=password]', PASSWORD)
      await page.click('#login button')
      return step('login')
    }
    const typeCode = async (form: string, code: string) => {
      await page.fill(`#${form} [name=code]`, code)
      await page.click(`#${form} button`)
      return step(form)
    }
    // The phone's clock is the server's: the test clock moves both.
    const codeNow = async (secret: string) => page.evaluate(authenticator, { secret, at: ctx.clock.now() })

    expect(await signIn()).toMatchObject({ status: '201', challenged: 'false', amr: 'pwd' })
    await page.click('#enrol')
    expect((await step('enrol')).status).toBe('200')
    const secret = (await page.textContent('#secret'))!
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(await typeCode('confirm', await codeNow(secret))).toMatchObject({ status: '200', message: 'Two-factor authentication is on' })
    expect(await page.locator('#recovery li').count()).toBe(10)

    await page.click('#logout')
    expect((await step('logout')).status).toBe('200')
    ctx.clock.advance(30) // the next code: the one typed at enrolment is spent

    // The right password alone gives a challenge, not a session: nothing to refresh yet.
    expect(await signIn()).toMatchObject({ status: '201', challenged: 'true' })
    expect(await page.evaluate(async (api) => (await fetch(`${api}/refresh-token`, { credentials: 'include' })).status, apiUrl)).toBe(401)
    const wrong = (await codeNow(secret)) === '000000' ? '000001' : '000000'
    expect(await typeCode('verify', wrong)).toMatchObject({ status: '400', message: 'Invalid or expired code' })
    expect(await typeCode('verify', await codeNow(secret))).toMatchObject({ status: '201', amr: 'pwd,otp' })
    // The browser stored the session cookie from /mfa/verify, and the session keeps its amr.
    const refreshed = await page.evaluate(async (api) => {
      const body = (await (await fetch(`${api}/refresh-token`, { credentials: 'include' })).json()) as { data: { response: { accessToken: string } } }
      return JSON.parse(atob(body.data.response.accessToken.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).amr
    }, apiUrl)
    expect(refreshed).toEqual(['pwd', 'otp'])
  }, 60_000)
})
