// The device authorization grant (RFC 8628, product spec §26) with openid-client v6 as the
// device over a real socket, and a browser without JavaScript (UserAgent) approving or denying
// on /t/{tenant}/device. The clock is the test's: expiry and slow_down are driven by it.
import { afterEach, describe, expect, it } from 'bun:test'
import * as oidc from 'openid-client'
import { createClient } from '../../src/core/oidc/clients'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { databaseEnv } from '../helpers'
import { addMembers, createGroup, removeMembers } from '../../src/core/groups/groups'
import { fieldError, formOn, noticeText, problemText } from '../pages'
import { loadConfig } from '../../src/config'
import { relyingParty, startOidcWorld, UserAgent, type OidcWorld } from '../oidc-journey'

const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

let world: OidcWorld
afterEach(() => world.close())

const pathOf = (url: string) => new URL(url).pathname

/** A device client (public unless told) and openid-client's Configuration for it. */
async function deviceClient(options: { public?: boolean; allowedGroups?: string[] } = {}) {
  const { client, clientSecret } = await createClient(world.ctx.runtime, world.ctx.tenantId, { name: 'Acme CLI', device: true, public: options.public ?? true, allowedGroups: options.allowedGroups })
  const auth = clientSecret === null ? oidc.None() : oidc.ClientSecretBasic(clientSecret)
  const config = await oidc.discovery(new URL(world.issuer), client.id, undefined, auth, { execute: [oidc.allowInsecureRequests] })
  return { client, clientSecret, config }
}

/** A browser signed in on its way to the device page (the login page first, then back, code kept). */
async function signedInAt(url: string, email: string) {
  const agent = new UserAgent(new URL(world.issuer).origin)
  const login = await agent.follow(pathOf(url) + new URL(url).search)
  const page = await agent.signIn(login, email)
  return { agent, page }
}

/** The code typed on the page (one look-up) and the confirmation's decision sent. */
async function decide(agent: UserAgent, page: { html: string }, userCode: string, decision: 'approve' | 'deny') {
  const typed = formOn(page.html, '/device')
  const confirm = await agent.send(typed.action, { form: { ...typed.hidden, user_code: userCode } })
  expect(confirm.status).toBe(200)
  const form = formOn(confirm.html, '/device/decide')
  return { confirm, form, answer: await agent.send(form.action, { form: { ...form.hidden, decision } }) }
}

/** A poll of the token endpoint by hand (openid-client waits the interval in real time first). */
async function poll(clientId: string, deviceCode: string) {
  const response = await fetch(`${world.issuer}/token`, { method: 'POST', body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId }) })
  return { status: response.status, ...((await response.json()) as { error?: string; access_token?: string }) }
}

/** openid-client's poll, at once (the interval is the server's to enforce: see the slow_down test). */
const pollNow = (config: oidc.Configuration, response: oidc.DeviceAuthorizationResponse) => oidc.pollDeviceAuthorizationGrant(config, { ...response, interval: 0 })
const refusal = (promise: Promise<unknown>) => promise.then(() => null, (e: { error?: string; code?: string }) => e.error ?? e.code)

describe('the device authorization grant (RFC 8628)', () => {
  it('gives a public client the tokens once the signed-in person approves the code filled in from verification_uri_complete, exactly once', async () => {
    world = await startOidcWorld()
    const { email, userId } = await world.ctx.addUser()
    const { client, config } = await deviceClient()
    expect(config.serverMetadata()).toMatchObject({ device_authorization_endpoint: `${world.issuer}/device_authorization` })
    expect(config.serverMetadata().grant_types_supported).toContain(DEVICE_GRANT)
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid profile email offline_access' })
    expect(started).toMatchObject({ verification_uri: `${world.issuer}/device`, verification_uri_complete: `${world.issuer}/device?user_code=${started.user_code}`, expires_in: 600, interval: 5 })
    expect(started.user_code).toMatch(USER_CODE)
    // The complete URI fills the code in; it decides nothing until the person confirms.
    const { agent, page } = await signedInAt(started.verification_uri_complete!, email)
    expect(page.html).toContain(`value="${started.user_code}"`)
    expect(await poll(client.id, started.device_code)).toMatchObject({ status: 400, error: 'authorization_pending' })
    // typed in lower case without the dash: the same code
    const { confirm, answer } = await decide(agent, page, started.user_code.toLowerCase().replace('-', ''), 'approve')
    expect(confirm.html).toContain('Acme CLI')
    expect(confirm.html).toContain('keep access while you are away')
    expect(noticeText(answer.html)).toContain('your device is signed in')
    const tokens = await pollNow(config, started)
    expect(tokens.claims()).toMatchObject({ sub: userId, aud: client.id, iss: world.issuer, email, name: 'Ada Lovelace' })
    expect(tokens.refresh_token).toBeString()
    expect((await oidc.fetchUserInfo(config, tokens.access_token, userId)).email).toBe(email)
    // The code is spent: a second poll, and a second decision on the page, get nothing.
    expect(await poll(client.id, started.device_code)).toMatchObject({ status: 400, error: 'invalid_grant' })
    const reopened = await agent.follow(pathOf(started.verification_uri_complete!) + new URL(started.verification_uri_complete!).search)
    const typed = formOn(reopened.html, '/device')
    const used = await agent.send(typed.action, { form: { ...typed.hidden, user_code: started.user_code } })
    expect({ status: used.status, problem: problemText(used.html) }).toEqual({ status: 400, problem: expect.stringContaining('used already') })
    // The approval is the user's consent: the account's applications list the device.
    expect((await world.ctx.runtime.store.oidc.listConsents(userId)).map((c) => c.clientId)).toEqual([client.id])
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!)
    expect(refreshed.access_token).toBeString()
  })

  it('answers access_denied once the person denies, and the first decision wins', async () => {
    world = await startOidcWorld()
    const { email } = await world.ctx.addUser()
    const { config } = await deviceClient({ public: false })
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' })
    const { agent, page } = await signedInAt(started.verification_uri, email)
    const { answer, form } = await decide(agent, page, started.user_code, 'deny')
    expect(noticeText(answer.html)).toContain('not signed in')
    // (the confirmation sent again, now to approve: the denial stands)
    const late = await agent.send(form.action, { form: { ...form.hidden, decision: 'approve' } })
    expect({ status: late.status, problem: problemText(late.html) }).toEqual({ status: 400, problem: expect.stringContaining('used already') })
    expect(await refusal(pollNow(config, started))).toBe('access_denied')
    expect(await refusal(pollNow(config, started))).toBe('access_denied')
  })

  it('answers slow_down to a poll sooner than the interval, which then grows by 5 s; expired_token after 600 s', async () => {
    world = await startOidcWorld()
    world.ctx.clock.freeze()
    const { client, config } = await deviceClient()
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' })
    expect(await poll(client.id, started.device_code)).toMatchObject({ error: 'authorization_pending' })
    expect(await poll(client.id, started.device_code)).toMatchObject({ status: 400, error: 'slow_down' })
    world.ctx.clock.advance(6)
    // (the interval is 10 s now)
    expect(await poll(client.id, started.device_code)).toMatchObject({ error: 'slow_down' })
    world.ctx.clock.advance(16)
    expect(await poll(client.id, started.device_code)).toMatchObject({ error: 'authorization_pending' })
    world.ctx.clock.advance(600)
    expect(await poll(client.id, started.device_code)).toMatchObject({ status: 400, error: 'expired_token' })
  })

  it('refuses another client’s device code, a client not created with --device, and a request without openid', async () => {
    world = await startOidcWorld()
    const { config } = await deviceClient()
    const other = await deviceClient()
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' })
    expect(await poll(other.client.id, started.device_code)).toMatchObject({ status: 400, error: 'invalid_grant' })
    expect(await poll(other.client.id, 'nonsense')).toMatchObject({ status: 400, error: 'invalid_grant' })
    const { config: wiki } = await relyingParty(world)
    expect(await refusal(oidc.initiateDeviceAuthorization(wiki, { scope: 'openid' }))).toBe('unauthorized_client')
    expect(await refusal(oidc.initiateDeviceAuthorization(config, { scope: 'profile' }))).toBe('invalid_scope')
  })

  it('refuses a user the client does not admit by its groups once the code is looked up, offering another account (a sign-out with the form token), after which a member finds the code filled in', async () => {
    world = await startOidcWorld()
    const outsider = await world.ctx.addUser()
    const member = await world.ctx.addUser()
    const group = await createGroup(world.ctx.runtime, { tenantId: world.ctx.tenantId, name: 'ops' })
    await addMembers(world.ctx.runtime, group.id, [member.userId])
    const { client, config } = await deviceClient({ allowedGroups: ['ops'] })
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' })
    const back = `${pathOf(world.issuer)}/device?${new URLSearchParams({ user_code: started.user_code })}`
    const { agent, page } = await signedInAt(started.verification_uri, outsider.email)
    const typed = formOn(page.html, '/device')
    // (typed in lower case without the dash: the way back carries the code as shown)
    const refused = await agent.send(typed.action, { form: { ...typed.hidden, user_code: started.user_code.toLowerCase().replace('-', '') } })
    expect({ status: refused.status, problem: problemText(refused.html) }).toEqual({ status: 403, problem: expect.stringContaining('only for members') })
    expect(refused.html).not.toContain('/device/decide')
    const signOut = formOn(refused.html, '/logout')
    expect(signOut.hidden).toEqual({ _form: typed.hidden._form!, return_to: back })
    // Nor can an outsider who learnt the code approve it, or end the member's sign-in by denying
    // it, by posting the decision by hand: refused at the decision, with the same way out.
    for (const decision of ['approve', 'deny']) {
      const posted = await agent.send(`${pathOf(world.issuer)}/device/decide`, { form: { _form: typed.hidden._form!, user_code: started.user_code, decision } })
      expect({ status: posted.status, problem: problemText(posted.html), back: formOn(posted.html, '/logout').hidden.return_to }).toEqual({ status: 403, problem: expect.stringContaining('only for members'), back })
    }
    expect(await poll(client.id, started.device_code)).toMatchObject({ error: 'authorization_pending' })
    // "Sign out and use another account", as a browser without JavaScript: signed out, the login
    // form, and after the member signs in, the device page with the code filled in.
    const login = await agent.follow(signOut.action, { form: signOut.hidden })
    expect(login.html).toContain('name="password"')
    const again = await agent.signIn(login, member.email)
    expect(again.status).toBe(200)
    expect(again.html).toContain(`value="${started.user_code}"`)
    const { confirm } = await decide(agent, again, started.user_code, 'approve')
    expect(confirm.html).toContain('Acme CLI')
    expect((await pollNow(config, started)).claims()?.sub).toBe(member.userId)
    const denied = await world.ctx.runtime.store.audit.query({ tenantId: world.ctx.tenantId, type: 'oidc.access_denied', limit: 10 })
    expect(denied.map((e) => e.userId)).toEqual([outsider.userId, outsider.userId, outsider.userId])
  })

  it('refuses at the decision a user who left the allowed groups after the confirmation was shown, offering another account there too', async () => {
    world = await startOidcWorld()
    const member = await world.ctx.addUser()
    const group = await createGroup(world.ctx.runtime, { tenantId: world.ctx.tenantId, name: 'ops' })
    await addMembers(world.ctx.runtime, group.id, [member.userId])
    const { client, config } = await deviceClient({ allowedGroups: ['ops'] })
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' })
    const { agent, page } = await signedInAt(started.verification_uri, member.email)
    const typed = formOn(page.html, '/device')
    const confirm = await agent.send(typed.action, { form: { ...typed.hidden, user_code: started.user_code } })
    expect(confirm.status).toBe(200)
    await removeMembers(world.ctx.runtime, group.id, [member.userId])
    const form = formOn(confirm.html, '/device/decide')
    const answer = await agent.send(form.action, { form: { ...form.hidden, decision: 'approve' } })
    expect({ status: answer.status, problem: problemText(answer.html) }).toEqual({ status: 403, problem: expect.stringContaining('only for members') })
    expect(formOn(answer.html, '/logout').hidden.return_to).toBe(`${pathOf(world.issuer)}/device?${new URLSearchParams({ user_code: started.user_code })}`)
    expect(await poll(client.id, started.device_code)).toMatchObject({ error: 'authorization_pending' })
  })

  it('counts wrong user codes per client IP before judging them (a burst as a run), then refuses even a right one', async () => {
    world = await startOidcWorld({}, { AUTHD_OTP_FAILURES_BEFORE_LOCKOUT: '3' })
    const { email } = await world.ctx.addUser()
    const { config } = await deviceClient()
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' })
    const { agent, page } = await signedInAt(started.verification_uri, email)
    const typed = formOn(page.html, '/device')
    const wrong = await agent.send(typed.action, { form: { ...typed.hidden, user_code: 'BBBB-BBBB' } })
    expect({ status: wrong.status, error: fieldError(wrong.html, 'user_code') }).toEqual({ status: 400, error: expect.stringContaining('not valid') })
    const burst = await Promise.all(['CCCC-CCCC', 'DDDD-DDDD', 'FFFF-FFFF', 'GGGG-GGGG', 'HHHH-HHHH'].map((code) => agent.send(typed.action, { form: { ...typed.hidden, user_code: code } })))
    expect(burst.map((a) => a.status).sort()).toEqual([400, 400, 429, 429, 429])
    const right = await agent.send(typed.action, { form: { ...typed.hidden, user_code: started.user_code } })
    expect({ status: right.status, problem: problemText(right.html) }).toEqual({ status: 429, problem: expect.stringContaining('Too many attempts') })
    // Another account at the same address is refused too, by the address's count alone.
    const other = await signedInAt(started.verification_uri, (await world.ctx.addUser()).email)
    const otherTyped = formOn(other.page.html, '/device')
    const otherRight = await other.agent.send(otherTyped.action, { form: { ...otherTyped.hidden, user_code: started.user_code } })
    expect({ status: otherRight.status, retryAfter: otherRight.headers.get('retry-after') }).toEqual({ status: 429, retryAfter: expect.stringMatching(/^[1-9][0-9]*$/) })
    await world.ctx.runtime.refusals.flush(world.ctx.runtime.store)
    const limited = await world.ctx.runtime.store.audit.query({ tenantId: world.ctx.tenantId, type: 'device_code.limited', limit: 10 })
    expect(limited.map((e) => e.detail?.limits)).toContainEqual(['device-code:ip'])
  })

  it('counts wrong user codes per signed-in account too, across client IPs, then refuses even a right one; another account at the same addresses is not refused', async () => {
    world = await startOidcWorld({}, { AUTHD_OTP_FAILURES_BEFORE_LOCKOUT: '3', AUTHD_TRUSTED_PROXIES: '127.0.0.1' })
    const guesser = await world.ctx.addUser()
    const bystander = await world.ctx.addUser()
    const { config } = await deviceClient()
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' })
    /** A signed-in browser's look-up of a code from 198.51.100.{n} (through the trusted proxy at 127.0.0.1). */
    const lookUpAs = async (email: string) => {
      const { agent, page } = await signedInAt(started.verification_uri, email)
      const typed = formOn(page.html, '/device')
      return (code: string, n: number) => agent.send(typed.action, { form: { ...typed.hidden, user_code: code }, headers: { 'x-forwarded-for': `198.51.100.${n}` } })
    }
    const guess = await lookUpAs(guesser.email)
    // One wrong code from each of three addresses: no address has spent its budget, the account has.
    for (const [n, code] of [[1, 'BBBB-BBBB'], [2, 'CCCC-CCCC'], [3, 'DDDD-DDDD']] as const) expect((await guess(code, n)).status).toBe(400)
    const fourth = await guess('FFFF-FFFF', 4)
    expect({ status: fourth.status, problem: problemText(fourth.html), retryAfter: fourth.headers.get('retry-after') }).toEqual({
      status: 429,
      problem: expect.stringContaining('Too many attempts'),
      retryAfter: expect.stringMatching(/^[1-9][0-9]*$/),
    })
    expect((await guess(started.user_code, 5)).status).toBe(429)
    // Another account from the addresses the guesser used: their counts do not refuse it.
    const other = await lookUpAs(bystander.email)
    expect((await other('GGGG-GGGG', 1)).status).toBe(400)
    expect((await other('HHHH-HHHH', 2)).status).toBe(400)
    const right = await other(started.user_code, 3)
    expect({ status: right.status, decide: formOn(right.html, '/device/decide').action }).toEqual({ status: 200, decide: `${pathOf(world.issuer)}/device/decide` })
    // The refusals name the per-account rule alone.
    await world.ctx.runtime.refusals.flush(world.ctx.runtime.store)
    const limited = await world.ctx.runtime.store.audit.query({ tenantId: world.ctx.tenantId, type: 'device_code.limited', limit: 10 })
    expect(limited.map((e) => [e.ip, e.detail?.limits]).sort()).toEqual([
      ['198.51.100.4', ['device-code:user']],
      ['198.51.100.5', ['device-code:user']],
    ])
  })

  it('judges a burst of one account’s wrong codes from many addresses like the same guesses in a row', async () => {
    world = await startOidcWorld({}, { AUTHD_OTP_FAILURES_BEFORE_LOCKOUT: '3', AUTHD_TRUSTED_PROXIES: '127.0.0.1' })
    const guesser = await world.ctx.addUser()
    const { config } = await deviceClient()
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' })
    const { agent, page } = await signedInAt(started.verification_uri, guesser.email)
    const typed = formOn(page.html, '/device')
    const codes = ['BBBB-BBBB', 'CCCC-CCCC', 'DDDD-DDDD', 'FFFF-FFFF', 'GGGG-GGGG', 'HHHH-HHHH', 'JJJJ-JJJJ', 'KKKK-KKKK']
    const burst = await Promise.all(codes.map((code, n) => agent.send(typed.action, { form: { ...typed.hidden, user_code: code }, headers: { 'x-forwarded-for': `198.51.100.${n + 1}` } })))
    // (eight addresses, none past its own budget: the account's three guesses are all that is judged)
    expect(burst.map((a) => a.status).sort()).toEqual([400, 400, 400, 429, 429, 429, 429, 429])
    expect((await agent.send(typed.action, { form: { ...typed.hidden, user_code: started.user_code }, headers: { 'x-forwarded-for': '198.51.100.99' } })).status).toBe(429)
  })

  it('speaks German to a German browser', async () => {
    world = await startOidcWorld()
    const { email } = await world.ctx.addUser()
    const { config } = await deviceClient()
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email' })
    const { agent } = await signedInAt(started.verification_uri, email)
    const cookie = [...agent.cookies].map(([n, v]) => `${n}=${v}`).join('; ')
    const page = await (await fetch(started.verification_uri, { headers: { cookie, 'accept-language': 'de' } })).text()
    expect(page).toContain('Gerät verbinden')
    expect(page).toContain('Geben Sie den Code ein')
  })
})

describe('device clients through the CLI and the admin API', () => {
  it('authd clients create --device (public, no redirect URI) makes a client that gets a user code; --device with --service is refused', async () => {
    world = await startOidcWorld()
    const authd = cliRunner(SOURCE_CLI, world.ctx.dir, { ...databaseEnv(world.ctx), AUTHD_PUBLIC_URL: world.ctx.runtime.config.publicUrl })
    const created = await authd(['--json', 'clients', 'create', '--tenant', world.ctx.tenantId, '--name', 'Acme CLI', '--device', '--public'])
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' })
    expect(created.json).toMatchObject({ client: { type: 'public', device: true, redirectUris: [] }, clientSecret: null })
    const config = await oidc.discovery(new URL(world.issuer), created.json.client.clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] })
    expect((await oidc.initiateDeviceAuthorization(config, { scope: 'openid' })).user_code).toMatch(USER_CODE)
    const human = await authd(['clients', 'create', '--tenant', world.ctx.tenantId, '--name', 'TV', '--device'])
    expect(human.stdout).toContain('device grant')
    expect((await authd(['clients', 'create', '--tenant', world.ctx.tenantId, '--name', 'X', '--device', '--service'])).code).toBe(2)
  }, 30_000)

  it('POST /api/v1/admin/clients takes device: true (redirect URIs then optional), not with service', async () => {
    world = await startOidcWorld()
    const key = (await createApiKey(world.ctx.runtime, { tenantId: world.ctx.tenantId, name: 'ops', scope: 'admin' })).key
    const admin = (body: unknown) => world.ctx.call('POST', '/api/v1/admin/clients', { apiKey: key, body })
    const created = await admin({ name: 'Acme CLI', device: true, public: true })
    expect({ status: created.status, client: created.json.data.client }).toMatchObject({ status: 201, client: { device: true, type: 'public', redirectUris: [] } })
    expect((await admin({ name: 'Wiki', redirectUris: ['https://wiki.example/cb'] })).json.data.client.device).toBe(false)
    expect((await admin({ name: 'Wiki' })).status).toBe(400)
    const both = await admin({ name: 'X', device: true, service: true })
    expect({ status: both.status, message: both.json.message }).toEqual({ status: 400, message: expect.stringContaining('service client cannot use the device grant') })
  })
})

describe('the device authorization endpoint', () => {
  it('holds each address to a budget of device authorizations (each stores a row, and one more live user code a guesser could hit)', async () => {
    world = await startOidcWorld({ limits: { ...loadConfig({}).limits, passkeyOptionsIpPer10Min: 2 } })
    const { client } = await createClient(world.ctx.runtime, world.ctx.tenantId, { name: 'Acme CLI', device: true, public: true })
    const start = () => fetch(`${world.issuer}/device_authorization`, { method: 'POST', body: new URLSearchParams({ client_id: client.id, scope: 'openid' }) })
    expect((await start()).status).toBe(200)
    expect((await start()).status).toBe(200)
    const third = await start()
    expect(third.status).toBe(429)
    expect(third.headers.get('retry-after')).not.toBeNull()
  })
})
