// Passkeys in a real browser (Chromium through playwright-core), with the DevTools virtual
// authenticator (ctap2, internal transport, resident keys, user verification): a real
// authenticator to the browser. A page on another origin of the same site (as an app beside
// its auth server) uses only the browser's own WebAuthn JSON helpers
// (PublicKeyCredential.parseCreationOptionsFromJSON, credential.toJSON()), as docs/api.md's
// minimal page does: register after signing in, sign out, sign in with the passkey alone, with
// autofill, and as the second factor; remove it and watch the next sign-in fail.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { BrowserContext, CDPSession, Page } from 'playwright-core'
import { setTenantRelyingParty } from '../../src/core/tenants/relying-party'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { silentLogger } from '../../src/log'
import { startServer, type RunningServer } from '../../src/server/serve'
import { runBrowserTests, sharedBrowser } from '../browser'
import { createTestContext, PASSWORD, type TestContext } from '../helpers'

let ctx: TestContext
let server: RunningServer
let pages: ReturnType<typeof Bun.serve>
let pageOrigin: string
let context: BrowserContext

beforeAll(async () => {
  if (!runBrowserTests) return
  pages = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(PASSKEY_APP, { headers: { 'content-type': 'text/html' } }) })
  pageOrigin = `http://localhost:${pages.port}`
  ctx = await createTestContext({ AUTHD_PORT: '0', AUTHD_CORS_ORIGINS: pageOrigin })
  server = await startServer(ctx.runtime, silentLogger)
  // The app's page runs the ceremonies: its origin, on the RP ID of the site.
  await setTenantRelyingParty(ctx.runtime, ctx.tenantId, { rpId: 'localhost', origins: [pageOrigin] })
  await ctx.addUser({ email: 'ada@example.com' })
  context = await (await sharedBrowser()).newContext()
}, 60_000)

afterAll(async () => {
  if (!runBrowserTests) return
  await context?.close()
  await server?.stop()
  pages?.stop()
  await ctx?.close()
})

/** The page with a virtual authenticator attached, as a phone or laptop with a platform authenticator. */
async function pageWithAuthenticator(): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })
  const api = `${server.url.replace('127.0.0.1', 'localhost')}/api/v1/auth`
  await page.goto(`${pageOrigin}/?api=${encodeURIComponent(api)}&key=${encodeURIComponent(ctx.apiKey)}`)
  return { page, cdp, authenticatorId }
}

type Answer = { status: number; body: { message: string; data: any } }
const run = (page: Page, step: string, ...args: unknown[]) => page.evaluate(({ step, args }) => (globalThis as any).app[step](...args), { step, args }) as Promise<Answer>
const amrOf = (answer: Answer) => JSON.parse(Buffer.from(answer.body.data.response.accessToken.split('.')[1], 'base64url').toString()).amr

describe('passkeys in a real browser (Chromium, virtual authenticator)', () => {
  it.skipIf(!runBrowserTests)('register after signing in, sign out, sign in with the passkey alone and by autofill, as the second factor; removed, it signs in no more', async () => {
    const { page, cdp, authenticatorId } = await pageWithAuthenticator()
    expect((await run(page, 'login', 'ada@example.com', PASSWORD)).status).toBe(201)
    const added = await run(page, 'addPasskey', 'This browser')
    expect({ status: added.status, name: added.body.data.name }).toEqual({ status: 201, name: 'This browser' })
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    expect(credentials).toHaveLength(1)
    expect(credentials[0]!.isResidentCredential).toBe(true)
    expect((await run(page, 'logout')).status).toBe(200)

    // The passkey alone: a discoverable credential, user verified by the authenticator.
    const alone = await run(page, 'signInWithPasskey')
    expect({ status: alone.status, message: alone.body.message }).toEqual({ status: 201, message: 'Login successful' })
    expect(amrOf(alone)).toEqual(['hwk', 'user', 'mfa'])
    expect(alone.body.data.response.user.email).toBe('ada@example.com')
    // With the address typed first: the options list this user's passkeys.
    expect((await run(page, 'signInWithPasskey', 'ada@example.com')).status).toBe(201)
    // Autofill: a conditional request offered on the username field, chosen by the user.
    const autofill = await run(page, 'signInByAutofill')
    expect(autofill.status).toBe(201)

    // As the second factor, once TOTP is on: the challenge lists passkey and the passkey passes it.
    const { secret } = (await run(page, 'enrolTotp')).body.data
    expect((await run(page, 'confirmTotp', totpCode(secret, totpStep(Date.now())))).status).toBe(200)
    const challenged = await run(page, 'login', 'ada@example.com', PASSWORD)
    expect(challenged.body.data.response.methods).toEqual(['totp', 'recovery', 'passkey'])
    const second = await run(page, 'passChallengeWithPasskey')
    expect(second.status).toBe(201)
    expect(amrOf(second)).toEqual(['pwd', 'hwk', 'user', 'mfa'])

    // Removed (this session proved its user just now: step-up holds), the passkey signs in no more.
    const [passkey] = (await run(page, 'listPasskeys')).body.data
    expect((await run(page, 'removePasskey', passkey.passkeyId)).status).toBe(200)
    const refused = await run(page, 'signInWithPasskey')
    expect({ status: refused.status, message: refused.body.message }).toEqual({ status: 401, message: 'Unauthorized' })
  }, 60_000)
})

// The app's page: the minimal passkey code of docs/api.md (Passkeys), and a few buttons' worth of glue.
const PASSKEY_APP = `<!doctype html><title>passkeys</title>
<label>E-mail <input id="username" autocomplete="username webauthn"></label>
<script>
const params = new URLSearchParams(location.search)
const api = params.get('api'), key = params.get('key')
let accessToken = null, challenge = null
async function call(method, path, body, headers = {}) {
  const response = await fetch(api + path, { method, credentials: 'include', headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers }, body: body && JSON.stringify(body) })
  return { status: response.status, body: await response.json() }
}
const bearer = () => ({ authorization: 'Bearer ' + accessToken })
const remember = (answer) => { if (answer.status === 201 && answer.body.data.response.accessToken) accessToken = answer.body.data.response.accessToken; return answer }

async function signInWith(options, challengeId, mediation) {
  const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options), mediation })
  return remember(await call('POST', '/passkeys/login', { challengeId, response: credential.toJSON() }))
}

window.app = {
  async login(email, password) {
    const answer = await call('POST', '/login', { email, password })
    challenge = answer.body.data?.response?.mfaRequired ? answer.body.data.response : null
    return remember(answer)
  },
  async logout() { return call('POST', '/logout') },
  async addPasskey(name) {
    const { body } = await call('POST', '/passkeys/register/options', undefined, bearer())
    const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(body.data.options) })
    return call('POST', '/passkeys/register', { challengeId: body.data.challengeId, response: credential.toJSON(), name }, bearer())
  },
  async signInWithPasskey(email) {
    const { body } = await call('POST', '/passkeys/login/options', email ? { email } : {})
    try {
      return await signInWith(body.data.options, body.data.challengeId)
    } catch (error) {
      return { status: 0, body: { message: String(error) } }
    }
  },
  async signInByAutofill() {
    const { body } = await call('POST', '/passkeys/login/options', {})
    if (!(await PublicKeyCredential.isConditionalMediationAvailable())) return { status: 0, body: { message: 'no conditional mediation' } }
    const answer = signInWith(body.data.options, body.data.challengeId, 'conditional')
    // The user focuses the username field and picks the passkey the browser offers there.
    document.getElementById('username').focus()
    return answer
  },
  async enrolTotp() { return call('POST', '/mfa/totp', undefined, bearer()) },
  async confirmTotp(code) { return call('POST', '/mfa/totp/confirm', { code }, bearer()) },
  async passChallengeWithPasskey() {
    const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(challenge.passkeyOptions) })
    return remember(await call('POST', '/mfa/verify', { challengeToken: challenge.challengeToken, response: credential.toJSON() }))
  },
  async listPasskeys() { return call('GET', '/passkeys', undefined, bearer()) },
  async removePasskey(id) { return call('DELETE', '/passkeys/' + id, undefined, bearer()) },
}
</script>`
