// Passkeys (product spec §19) through the HTTP API, with a software authenticator (P-256)
// making real ceremonies: every check of the server (origin, RP ID, challenge, type, user
// presence and verification, counter, signature) meets a response made to fail it. Runs on
// SQLite and, in the second pass, on PostgreSQL.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { setUserDisabled } from '../../src/core/accounts/users'
import { createTestContext, PASSWORD, queryDatabase, type CallResult, type TestContext } from '../helpers'
import { SoftwareAuthenticator } from '../software-authenticator'

const RP_ID = 'auth.example.com'
const ORIGIN = 'https://auth.example.com'
const unauthorized = { statusCode: 401, message: 'Unauthorized', data: null }

let ctx: TestContext
let email: string
let userId: string
beforeEach(async () => {
  ctx = await createTestContext({ AUTHD_PUBLIC_URL: ORIGIN, AUTHD_REFUSAL_HOLD_MS: '0' })
  ;({ email, userId } = await ctx.addUser({ email: 'ada@example.com' }))
})
afterEach(() => ctx.close())

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const accessToken = async () => (await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).json.data.response.accessToken as string

/** Signs in with the password, adds a passkey of `authenticator`: the passkey's view. */
async function register(authenticator: SoftwareAuthenticator, token?: string, name?: string): Promise<CallResult> {
  const t = token ?? (await accessToken())
  const started = await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer(t) })
  expect(started.status).toBe(200)
  const { challengeId, options } = started.json.data
  return ctx.call('POST', '/api/v1/auth/passkeys/register', { headers: bearer(t), body: { challengeId, response: authenticator.register(options), name } })
}

async function loginOptions(body: Record<string, unknown> = {}, apiKey?: string) {
  const res = await ctx.call('POST', '/api/v1/auth/passkeys/login/options', { body, apiKey })
  expect(res.status).toBe(200)
  return res.json.data as { challengeId: string; options: { challenge: string; rpId: string; allowCredentials?: Array<{ id: string }>; userVerification: string } }
}
const signIn = (challengeId: string, response: unknown, init: { apiKey?: string; peer?: string } = {}) =>
  ctx.call('POST', '/api/v1/auth/passkeys/login', { body: { challengeId, response }, apiKey: init.apiKey, peer: init.peer })

describe('adding a passkey', () => {
  it('verifies the ceremony, lists the passkey (no key, no credential id) and mails the user', async () => {
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN)
    const token = await accessToken()
    const started = await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer(token) })
    const { options } = started.json.data
    expect(options).toMatchObject({ rp: { id: RP_ID, name: 'Acme' }, user: { name: email, displayName: 'Ada Lovelace' }, attestation: 'none', authenticatorSelection: { residentKey: 'required' } })
    const added = await register(authenticator, token, 'My laptop')
    expect(added.status).toBe(201)
    expect(added.json.data).toEqual({ passkeyId: expect.any(String), name: 'My laptop', createdAt: expect.any(String), lastUsedAt: null, backedUp: false, deviceType: 'singleDevice', authenticator: null })
    const listed = await ctx.call('GET', '/api/v1/auth/passkeys', { headers: bearer(token) })
    expect(listed.json.data).toEqual([added.json.data])
    expect(listed.text).not.toContain(authenticator.credentials[0]!.id.toString('base64url'))
    const mail = await queryDatabase<{ subject: string; text_body: string }>(ctx, "SELECT subject, text_body FROM mail_outbox WHERE kind = 'passkey-added' AND recipient = $1", [email])
    expect(mail.map((m) => m.subject)).toEqual(['Acme: a passkey was added to your account'])
    expect(mail[0]!.text_body).toContain('a passkey named "My laptop" was added')
    // The next options exclude it: the same authenticator cannot register it twice.
    const again = (await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer(token) })).json.data.options
    expect(again.excludeCredentials).toEqual([{ id: authenticator.credentials[0]!.id.toString('base64url'), type: 'public-key', transports: ['internal'] }])
  })

  it('needs step-up, and a challenge of the same user, live and unspent', async () => {
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN)
    const token = await accessToken()
    const { challengeId, options } = (await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer(token) })).json.data
    const response = authenticator.register(options)
    // Another user's session cannot use it.
    const { email: other } = await ctx.addUser({ email: 'grace@example.com' })
    const otherToken = (await ctx.call('POST', '/api/v1/auth/login', { body: { email: other, password: PASSWORD } })).json.data.response.accessToken
    expect((await ctx.call('POST', '/api/v1/auth/passkeys/register', { headers: bearer(otherToken), body: { challengeId, response } })).status).toBe(400)
    // Spent by that first use, even though it failed.
    expect((await ctx.call('POST', '/api/v1/auth/passkeys/register', { headers: bearer(token), body: { challengeId, response } })).status).toBe(400)
    ctx.clock.advance(5 * 60 + 1)
    const stale = await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer(token) })
    expect(stale.json.message).toBe('Step-up required: confirm your password or code with POST /api/v1/auth/reauthenticate')
    expect(stale.status).toBe(403)
  })

  it('checks step-up again at the registration: a proof that aged past 5 minutes since the options is refused', async () => {
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN)
    const token = await accessToken()
    ctx.clock.advance(4 * 60)
    // Options within the window (the proof is 4 minutes old)...
    const started = await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer(token) })
    expect(started.status).toBe(200)
    const { challengeId, options } = started.json.data
    // ...and the registration 2 minutes later: the challenge is live, the proof is 6 minutes old.
    ctx.clock.advance(2 * 60)
    const late = await ctx.call('POST', '/api/v1/auth/passkeys/register', { headers: bearer(token), body: { challengeId, response: authenticator.register(options) } })
    expect({ status: late.status, message: late.json.message }).toEqual({ status: 403, message: 'Step-up required: confirm your password or code with POST /api/v1/auth/reauthenticate' })
    expect((await ctx.call('GET', '/api/v1/auth/passkeys', { headers: bearer(token) })).json.data).toEqual([])
    expect(await queryDatabase(ctx, "SELECT id FROM mail_outbox WHERE kind = 'passkey-added'")).toEqual([])
  })

  it('refuses a wrong origin, a wrong RP ID and a wrong type, with one message that repeats nothing', async () => {
    const token = await accessToken()
    for (const tweaks of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { type: 'webauthn.get' }, { challenge: 'AAAA' }]) {
      const { challengeId, options } = (await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer(token) })).json.data
      const refused = await ctx.call('POST', '/api/v1/auth/passkeys/register', { headers: bearer(token), body: { challengeId, response: new SoftwareAuthenticator(RP_ID, ORIGIN).register(options, tweaks) } })
      expect(refused.json).toEqual({ statusCode: 400, message: 'The passkey could not be verified: start again with POST /passkeys/register/options', data: null })
    }
    expect((await ctx.call('GET', '/api/v1/auth/passkeys', { headers: bearer(token) })).json.data).toEqual([])
  })

  it('allows at most 20 passkeys per user', async () => {
    const token = await accessToken()
    for (let i = 0; i < 20; i++) expect((await register(new SoftwareAuthenticator(RP_ID, ORIGIN), token)).status).toBe(201)
    const more = await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer(token) })
    expect(more.json).toEqual({ statusCode: 409, message: 'At most 20 passkeys per user: remove one first', data: null })
  })
})

describe('signing in with a passkey alone', () => {
  it('without an e-mail (discoverable, autofill), and with one: the login answer, amr from the authenticator', async () => {
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN, { synced: true })
    expect((await register(authenticator)).status).toBe(201)
    const discoverable = await loginOptions()
    expect(discoverable.options).toMatchObject({ rpId: RP_ID, userVerification: 'required' })
    expect(discoverable.options.allowCredentials ?? []).toEqual([])
    const signedIn = await signIn(discoverable.challengeId, authenticator.assert(discoverable.options))
    expect(signedIn.status).toBe(201)
    expect(signedIn.refreshCookie).toBeTruthy()
    expect(signedIn.json.data.response.user).toMatchObject({ userId, email })
    expect(claims(signedIn.json.data.response.accessToken).amr).toEqual(['swk', 'user', 'mfa'])
    // With an e-mail the options are those given without one, for a known and an unknown address
    // alike (every authd passkey is discoverable), so they cannot tell who has passkeys.
    const named = await loginOptions({ email: 'ADA@example.com' })
    const unknown = await loginOptions({ email: 'nobody@example.com' })
    for (const given of [named, unknown]) {
      expect(given.options.allowCredentials ?? []).toEqual([])
      expect(Object.keys(given.options).sort()).toEqual(Object.keys(discoverable.options).sort())
      expect({ ...given.options, challenge: '' }).toEqual({ ...discoverable.options, challenge: '' })
    }
    expect((await signIn(named.challengeId, authenticator.assert(named.options))).status).toBe(201)
    // An authenticator that gives a null userHandle (allowed by WebAuthn) still signs in.
    const nullHandle = await loginOptions()
    const withoutHandle = authenticator.assert(nullHandle.options)
    expect((await signIn(nullHandle.challengeId, { ...withoutHandle, response: { ...withoutHandle.response, userHandle: null } })).status).toBe(201)
    // The passkey's last use is shown.
    const token = signedIn.json.data.response.accessToken
    expect((await ctx.call('GET', '/api/v1/auth/passkeys', { headers: bearer(token) })).json.data[0].lastUsedAt).toEqual(expect.any(String))
  })

  it('refuses every broken assertion with 401: origin, RP ID, challenge, type, no user verification, bad signature, unknown credential', async () => {
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN)
    await register(authenticator)
    const cases = [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { challenge: 'AAAAAAAAAAAAAAAAAAAAAA' }, { type: 'webauthn.create' }, { userVerified: false }, { forgeSignature: true }]
    for (const tweaks of cases) {
      const { challengeId, options } = await loginOptions()
      expect((await signIn(challengeId, authenticator.assert(options, tweaks), { peer: `10.1.0.${cases.indexOf(tweaks)}` })).json).toEqual(unauthorized)
    }
    // An unknown credential (another authenticator's) and a bad signature are answered alike.
    const stranger = new SoftwareAuthenticator(RP_ID, ORIGIN)
    stranger.register({ challenge: 'x', rp: { id: RP_ID }, user: { id: 'someone' } })
    const a = await loginOptions()
    const unknown = await signIn(a.challengeId, stranger.assert(a.options), { peer: '10.2.0.1' })
    const b = await loginOptions()
    const forged = await signIn(b.challengeId, authenticator.assert(b.options, { forgeSignature: true }), { peer: '10.2.0.2' })
    expect({ status: unknown.status, body: unknown.text }).toEqual({ status: forged.status, body: forged.text })
    // The real one still works.
    const c = await loginOptions()
    expect((await signIn(c.challengeId, authenticator.assert(c.options))).status).toBe(201)
  })

  it('spends a challenge by its first use, ends it after 5 minutes, and binds it to its tenant', async () => {
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN)
    await register(authenticator)
    const first = await loginOptions()
    expect((await signIn(first.challengeId, authenticator.assert(first.options))).status).toBe(201)
    expect((await signIn(first.challengeId, authenticator.assert(first.options))).json).toEqual(unauthorized)
    const late = await loginOptions()
    ctx.clock.advance(5 * 60 + 1)
    expect((await signIn(late.challengeId, authenticator.assert(late.options))).json).toEqual(unauthorized)
    // Another tenant's API key finds no challenge (nor the credential) of this one.
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const otherKey = (await createApiKey(ctx.runtime, { tenantId: other.id })).key
    const mine = await loginOptions()
    expect((await signIn(mine.challengeId, authenticator.assert(mine.options), { apiKey: otherKey })).json).toEqual(unauthorized)
    const theirs = await loginOptions({}, otherKey)
    expect((await signIn(theirs.challengeId, authenticator.assert(theirs.options), { apiKey: otherKey })).json).toEqual(unauthorized)
  })

  it('refuses a signature counter that goes backwards, and audits a possible clone', async () => {
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN)
    await register(authenticator)
    const a = await loginOptions()
    expect((await signIn(a.challengeId, authenticator.assert(a.options, { counter: 7 }))).status).toBe(201)
    const b = await loginOptions()
    expect((await signIn(b.challengeId, authenticator.assert(b.options, { counter: 5 }))).json).toEqual(unauthorized)
    const c = await loginOptions()
    expect((await signIn(c.challengeId, authenticator.assert(c.options, { counter: 7 }))).json).toEqual(unauthorized)
    const audited = await queryDatabase<{ type: string }>(ctx, "SELECT type FROM audit_events WHERE type = 'passkey.counter_regressed'")
    expect(audited).toHaveLength(2)
    const d = await loginOptions()
    expect((await signIn(d.challengeId, authenticator.assert(d.options, { counter: 8 }))).status).toBe(201)
    // A clone racing its original: assertions with one counter sent at once; one signs in.
    const racing = await Promise.all([loginOptions(), loginOptions(), loginOptions()])
    const answers = await Promise.all(racing.map((r, i) => signIn(r.challengeId, authenticator.assert(r.options, { counter: 9 }), { peer: `10.3.0.${i}` })))
    expect(answers.map((a) => a.status).sort()).toEqual([201, 401, 401])
    expect(await queryDatabase<{ type: string }>(ctx, "SELECT type FROM audit_events WHERE type = 'passkey.counter_regressed'")).toHaveLength(4)
  })

  it('refuses a disabled user (403) after a valid assertion only', async () => {
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN)
    await register(authenticator)
    await setUserDisabled(ctx.runtime, userId, true)
    const { challengeId, options } = await loginOptions()
    expect((await signIn(challengeId, authenticator.assert(options))).json).toEqual({ statusCode: 403, message: 'User is disabled', data: null })
  })

  it('gives one session for 20 concurrent uses of one challenge', async () => {
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN)
    await register(authenticator)
    const { challengeId, options } = await loginOptions()
    const response = authenticator.assert(options)
    const answers = await Promise.all(Array.from({ length: 20 }, () => signIn(challengeId, response)))
    expect(answers.map((a) => a.status).sort()).toEqual([201, ...Array(19).fill(401)])
  })

  it('answers bodies that are not the WebAuthn JSON forms with a 400 naming the field, never a 500', async () => {
    const { challengeId } = await loginOptions()
    const cases: Array<[unknown, string]> = [
      ['not an object', 'response must be an object (the credential\'s toJSON())'],
      [{}, 'response.id must be a base64url string'],
      [{ id: 'abc', rawId: 'abc', type: 'password' }, 'response.type must be "public-key"'],
      [{ id: 'abc', rawId: 'abc', type: 'public-key', response: {} }, 'response.response.clientDataJSON must be a base64url string'],
      [{ id: 'abc', rawId: 'abc', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: '!!' } }, 'response.response.signature must be a base64url string'],
    ]
    for (const [response, message] of cases) expect((await signIn(challengeId, response)).json).toEqual({ statusCode: 400, message, data: null })
    expect((await ctx.call('POST', '/api/v1/auth/passkeys/login', { body: { response: {} } })).status).toBe(400)
    expect((await ctx.call('POST', '/api/v1/auth/passkeys/login/options', { body: { email: 'not an address' } })).status).toBe(400)
    // Garbage that is base64url all the same: a 401, not a 500.
    const { challengeId: fresh } = await loginOptions()
    expect((await signIn(fresh, { id: 'abc', rawId: 'abc', type: 'public-key', response: { clientDataJSON: 'abc', authenticatorData: 'abc', signature: 'abc' } })).json).toEqual(unauthorized)
  })
})

describe('managing passkeys', () => {
  it('renames one, removes one with step-up, and a removed passkey signs in no more', async () => {
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN)
    const token = await accessToken()
    const { passkeyId } = (await register(authenticator, token)).json.data
    const renamed = await ctx.call('PATCH', `/api/v1/auth/passkeys/${passkeyId}`, { headers: bearer(token), body: { name: 'Work phone' } })
    expect(renamed.json.data.name).toBe('Work phone')
    expect((await ctx.call('PATCH', `/api/v1/auth/passkeys/${passkeyId}`, { headers: bearer(token), body: { name: 'two\nlines' } })).status).toBe(400)
    // Another user's passkey is no passkey of the caller's.
    const { email: other } = await ctx.addUser({ email: 'grace@example.com' })
    const otherToken = (await ctx.call('POST', '/api/v1/auth/login', { body: { email: other, password: PASSWORD } })).json.data.response.accessToken
    expect((await ctx.call('DELETE', `/api/v1/auth/passkeys/${passkeyId}`, { headers: bearer(otherToken) })).status).toBe(404)
    ctx.clock.advance(5 * 60 + 1)
    expect((await ctx.call('DELETE', `/api/v1/auth/passkeys/${passkeyId}`, { headers: bearer(token) })).status).toBe(403)
    expect((await ctx.call('POST', '/api/v1/auth/reauthenticate', { headers: bearer(token), body: { password: PASSWORD } })).status).toBe(200)
    expect((await ctx.call('DELETE', `/api/v1/auth/passkeys/${passkeyId}`, { headers: bearer(token) })).json).toEqual({ statusCode: 200, message: 'Passkey removed', data: null })
    const { challengeId, options } = await loginOptions()
    expect((await signIn(challengeId, authenticator.assert(options))).json).toEqual(unauthorized)
  })

  it('proves the user again for step-up (POST /reauthenticate): only the user\'s own passkey, verified, for a live challenge', async () => {
    const mine = new SoftwareAuthenticator(RP_ID, ORIGIN)
    const token = await accessToken()
    expect((await register(mine, token)).status).toBe(201)
    const { email: other } = await ctx.addUser({ email: 'grace@example.com' })
    const otherToken = (await ctx.call('POST', '/api/v1/auth/login', { body: { email: other, password: PASSWORD } })).json.data.response.accessToken
    const theirs = new SoftwareAuthenticator(RP_ID, ORIGIN)
    expect((await register(theirs, otherToken)).status).toBe(201)
    ctx.clock.advance(5 * 60 + 1)
    const reauth = (body: unknown) => ctx.call('POST', '/api/v1/auth/reauthenticate', { headers: bearer(token), body })
    const wrong = { statusCode: 400, message: 'Invalid password or code', data: null }
    const another = await loginOptions()
    expect((await reauth({ challengeId: another.challengeId, response: theirs.assert(another.options) })).json).toEqual(wrong)
    const unverified = await loginOptions()
    expect((await reauth({ challengeId: unverified.challengeId, response: mine.assert(unverified.options, { userVerified: false }) })).json).toEqual(wrong)
    expect((await reauth({ challengeId: unverified.challengeId, response: mine.assert(unverified.options) })).json).toEqual(wrong)
    expect((await reauth({ challengeId: 'x', response: { id: 1 } })).status).toBe(400)
    expect((await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer(token) })).status).toBe(403)
    const live = await loginOptions()
    const proved = await reauth({ challengeId: live.challengeId, response: mine.assert(live.options) })
    expect(proved.json).toMatchObject({ statusCode: 200, message: 'Reauthenticated' })
    expect((await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer(token) })).status).toBe(200)
  })

  it('through the admin API: list and delete a user’s passkeys, and set the relying party', async () => {
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN)
    const { passkeyId } = (await register(authenticator)).json.data
    const admin = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })).key
    const listed = await ctx.call('GET', `/api/v1/admin/users/${userId}/passkeys`, { apiKey: admin })
    expect(listed.json.data.map((p: { passkeyId: string }) => p.passkeyId)).toEqual([passkeyId])
    expect((await ctx.call('DELETE', `/api/v1/admin/users/${userId}/passkeys/${passkeyId}`, { apiKey: admin })).json.data).toEqual({ userId, passkeyId })
    expect((await ctx.call('DELETE', `/api/v1/admin/users/${userId}/passkeys/${passkeyId}`, { apiKey: admin })).status).toBe(404)
    expect((await ctx.call('GET', '/api/v1/admin/tenant', { apiKey: admin })).json.data).toMatchObject({ passkeyRpId: RP_ID, passkeyOrigins: [ORIGIN] })
    const set = await ctx.call('PATCH', '/api/v1/admin/tenant', { apiKey: admin, body: { passkeyRpId: 'example.com', passkeyOrigins: ['https://app.example.com', 'https://example.com'] } })
    expect(set.json.data).toMatchObject({ passkeyRpId: 'example.com', passkeyOrigins: ['https://app.example.com', 'https://example.com'] })
    const misfit = await ctx.call('PATCH', '/api/v1/admin/tenant', { apiKey: admin, body: { passkeyOrigins: ['https://elsewhere.example'] } })
    expect(misfit.json).toEqual({ statusCode: 400, message: 'passkeyRpId example.com is not the host of https://elsewhere.example nor a suffix of it: browsers would refuse every passkey there', data: null })
    for (const rpId of ['192.168.0.1', 'https://example.com', 'com']) expect((await ctx.call('PATCH', '/api/v1/admin/tenant', { apiKey: admin, body: { passkeyRpId: rpId } })).status).toBe(400)
    // A ceremony now runs on the app's origin, for the new RP ID.
    const app = new SoftwareAuthenticator('example.com', 'https://app.example.com')
    expect((await register(app)).status).toBe(201)
    const { challengeId, options } = await loginOptions()
    expect(options.rpId).toBe('example.com')
    expect((await signIn(challengeId, app.assert(options))).status).toBe(201)
  })
})

describe('a passkey as the second factor', () => {
  it('passes the login challenge of a user with TOTP on, in place of a code', async () => {
    const token = await accessToken()
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })).json.data
    await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), body: { code: totpCode(secret, totpStep(ctx.clock.now())) } })
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN)
    expect((await register(authenticator, token)).status).toBe(201)
    const challenged = (await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).json.data.response
    expect(challenged.methods).toEqual(['totp', 'recovery', 'passkey'])
    expect(challenged.passkeyOptions.allowCredentials.map((c: { id: string }) => c.id)).toEqual([authenticator.credentials[0]!.id.toString('base64url')])
    // A broken assertion is a wrong code; the right one passes.
    const broken = await ctx.call('POST', '/api/v1/auth/mfa/verify', { body: { challengeToken: challenged.challengeToken, response: authenticator.assert(challenged.passkeyOptions, { forgeSignature: true }) } })
    expect(broken.json).toEqual({ statusCode: 400, message: 'Invalid or expired code', data: null })
    const passed = await ctx.call('POST', '/api/v1/auth/mfa/verify', { body: { challengeToken: challenged.challengeToken, response: authenticator.assert(challenged.passkeyOptions) } })
    expect(passed.status).toBe(201)
    expect(claims(passed.json.data.response.accessToken).amr).toEqual(['pwd', 'hwk', 'user', 'mfa'])
    expect((await ctx.call('POST', '/api/v1/auth/mfa/verify', { body: { challengeToken: challenged.challengeToken, code: '123456', response: {} } })).status).toBe(400)
  })
})
