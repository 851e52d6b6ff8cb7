// Users record emailVerifiedAt (product spec §25, §28): set by a setup token or invitation
// used, a verified sign-up, a reset by OTP, or an admin who vouches (the admin API's
// emailVerified, the CLI's --email-verified); cleared by a new address unless the same change
// vouches for it. The admin API's user, `users show` and GET /me show it.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { setTenantSignup } from '../../src/core/signup/signup'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createTestContext, databaseEnv, loginFor, PASSWORD, queryDatabase, requestOtp, type TestContext } from '../helpers'

const ADMIN = '/api/v1/admin'
let ctx: TestContext
let adminKey: string
beforeEach(async () => {
  ctx = await createTestContext()
  ctx.clock.freeze()
  adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })).key
})
afterEach(() => ctx.close())

const admin = (method: string, path: string, body?: unknown) => ctx.call(method, `${ADMIN}${path}`, { body, apiKey: adminKey })
const verifiedAt = async (userId: string) => (await admin('GET', `/users/${userId}`)).json.data.emailVerifiedAt as string | null
const nowIso = () => new Date(ctx.clock.now()).toISOString()
const newPerson = { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' }

/** The setup token of the latest invitation queued for the address. */
async function invitationToken(email: string): Promise<string> {
  const [row] = await queryDatabase<{ text_body: string }>(ctx, "SELECT text_body FROM mail_outbox WHERE kind = 'invitation' AND recipient = $1 ORDER BY created_at DESC LIMIT 1", [email])
  return /^ {4}(\S+)$/m.exec(row!.text_body)![1]!
}

const setUpPassword = (setupToken: string) =>
  ctx.call('POST', '/api/v1/auth/setup-password', { body: { password: 'a setup passphrase of mine' }, headers: { authorization: `Bearer ${setupToken}` } })

describe('what sets emailVerifiedAt', () => {
  it('nothing, for a user an admin typed in: null in the admin API and at GET /me', async () => {
    const created = await admin('POST', '/users', { ...newPerson, password: PASSWORD })
    expect(created.json.data.emailVerifiedAt).toBeNull()
    expect(await verifiedAt(created.json.data.userId)).toBeNull()
    const login = await loginFor(ctx, 'grace@example.com')
    const me = await ctx.call('GET', '/api/v1/auth/me', { headers: { authorization: `Bearer ${login.json.data.response.accessToken}` } })
    expect(me.json.data).toMatchObject({ email: 'grace@example.com', emailVerifiedAt: null })
  })

  it('a setup token used (handed over by the admin), and an invitation used (mailed)', async () => {
    const handed = await admin('POST', '/users', newPerson)
    ctx.clock.advance(5)
    expect((await setUpPassword(handed.json.data.setupToken)).status).toBe(200)
    expect(await verifiedAt(handed.json.data.userId)).toBe(nowIso())

    const invited = await admin('POST', '/users', { ...newPerson, email: 'ada@example.com', invite: true })
    expect(invited.json.data.emailVerifiedAt).toBeNull()
    expect((await setUpPassword(await invitationToken('ada@example.com'))).status).toBe(200)
    expect(await verifiedAt(invited.json.data.userId)).toBe(nowIso())
  })

  it('a verified sign-up: GET /me says when', async () => {
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'open')
    await ctx.call('POST', '/api/v1/auth/signup', { body: { ...newPerson, password: 'a sign-up passphrase of mine' } })
    const [mail] = await queryDatabase<{ text_body: string }>(ctx, "SELECT text_body FROM mail_outbox WHERE kind = 'signup-code'")
    ctx.clock.advance(30)
    const verified = await ctx.call('POST', '/api/v1/auth/verify-email', { body: { email: 'grace@example.com', otp: /\b(\d{6})\b/.exec(mail!.text_body)![1] } })
    expect(verified.status).toBe(201)
    const me = await ctx.call('GET', '/api/v1/auth/me', { headers: { authorization: `Bearer ${verified.json.data.response.accessToken}` } })
    expect(me.json.data.emailVerifiedAt).toBe(nowIso())
  })

  it('a reset by OTP (and not a failed one)', async () => {
    const { userId, email } = await ctx.addUser()
    const otp = await requestOtp(ctx, email)
    const change = (code: string) => ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp: code, newPassword: 'a brand new passphrase' } })
    expect((await change(otp === '000000' ? '111111' : '000000')).status).toBe(400)
    expect(await verifiedAt(userId)).toBeNull()
    expect((await change(otp)).status).toBe(200)
    expect(await verifiedAt(userId)).toBe(nowIso())
  })

  it('an admin who vouches: emailVerified on create or update, and false takes it back', async () => {
    const created = await admin('POST', '/users', { ...newPerson, password: PASSWORD, emailVerified: true })
    expect(created.status).toBe(201)
    expect(created.json.data.emailVerifiedAt).toBe(nowIso())
    const { userId } = await ctx.addUser({ email: 'ada@example.com' })
    ctx.clock.advance(7)
    const updated = await admin('PATCH', `/users/${userId}`, { emailVerified: true })
    expect(updated.json.data.emailVerifiedAt).toBe(nowIso())
    expect((await admin('PATCH', `/users/${userId}`, { emailVerified: false })).json.data.emailVerifiedAt).toBeNull()
    expect((await admin('PATCH', `/users/${userId}`, { emailVerified: 'yes' })).status).toBe(400)
  })
})

describe('a new address', () => {
  it('clears emailVerifiedAt, unless the same change vouches for it', async () => {
    const created = await admin('POST', '/users', { ...newPerson, password: PASSWORD, emailVerified: true })
    const userId = created.json.data.userId
    const moved = await admin('PATCH', `/users/${userId}`, { email: 'Grace@Example.org' })
    expect(moved.json.data).toMatchObject({ email: 'grace@example.org', emailVerifiedAt: null })
    // The same address again is no change.
    await admin('PATCH', `/users/${userId}`, { emailVerified: true })
    expect((await admin('PATCH', `/users/${userId}`, { email: 'grace@example.org' })).json.data.emailVerifiedAt).toBe(nowIso())
    ctx.clock.advance(3)
    const vouched = await admin('PATCH', `/users/${userId}`, { email: 'grace@example.net', emailVerified: true })
    expect(vouched.json.data).toMatchObject({ email: 'grace@example.net', emailVerifiedAt: nowIso() })
    // The user logs in with the new address.
    expect((await loginFor(ctx, 'grace@example.net')).status).toBe(201)
  })

  it('spends what was mailed to the old address: its setup token and OTP prove nothing now', async () => {
    const invited = await admin('POST', '/users', { ...newPerson, invite: true })
    const token = await invitationToken('grace@example.com')
    await admin('PATCH', `/users/${invited.json.data.userId}`, { email: 'grace@example.org' })
    expect((await setUpPassword(token)).status).toBe(401)
    expect(await verifiedAt(invited.json.data.userId)).toBeNull()

    const { userId, email } = await ctx.addUser({ email: 'ada@example.com' })
    const otp = await requestOtp(ctx, email)
    await admin('PATCH', `/users/${userId}`, { email: 'ada@example.org' })
    const reset = await ctx.call('POST', '/api/v1/auth/change-password', { body: { email: 'ada@example.org', otp, newPassword: 'a brand new passphrase' } })
    expect(reset.status).toBe(400)
    expect(await verifiedAt(userId)).toBeNull()
  })

  it("is refused (409) when it is another user's in the tenant, and must be an address (400)", async () => {
    await ctx.addUser({ email: 'ada@example.com' })
    const { userId } = await ctx.addUser({ email: 'grace@example.com' })
    const taken = await admin('PATCH', `/users/${userId}`, { email: 'ADA@example.com' })
    expect(taken.json).toEqual({ statusCode: 409, message: 'A user with e-mail ada@example.com already exists in this tenant', data: null })
    expect((await admin('PATCH', `/users/${userId}`, { email: 'not an address' })).status).toBe(400)
    expect((await admin('GET', `/users/${userId}`)).json.data.email).toBe('grace@example.com')
  })
})

describe('the CLI', () => {
  it('users create --email-verified, users update --email, users show', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, databaseEnv(ctx))
    const created = await authd(['--json', 'users', 'create', '--tenant', ctx.tenantId, '--email', 'grace@example.com', '--first-name', 'Grace', '--last-name', 'Hopper', '--email-verified'])
    expect(created.code).toBe(0)
    expect(created.json.emailVerifiedAt).toBeString()
    const userId = created.json.userId
    const moved = await authd(['--json', 'users', 'update', userId, '--email', 'grace@example.org'])
    expect(moved.json).toMatchObject({ email: 'grace@example.org', emailVerifiedAt: null })
    const vouched = await authd(['--json', 'users', 'update', userId, '--email-verified'])
    expect(vouched.json.emailVerifiedAt).toBeString()
    const shown = await authd(['users', 'show', userId])
    expect(shown.stdout).toContain('emailVerifiedAt')
    expect(shown.stdout).toContain(vouched.json.emailVerifiedAt)
  })
})
