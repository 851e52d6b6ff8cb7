// Outstanding secrets do not survive an admin action: an OTP or setup token mailed before a
// password set by an admin, a setup, or a disable (of the user or its tenant) no longer works
// after it, and a re-enabled tenant does not revive old sessions. The admin acts through the
// CLI, beside the running app, as an operator would.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createTestContext, databaseEnv, loginFor, PASSWORD, requestOtp, type TestContext } from '../helpers'
import { createUser } from '../../src/core/accounts/users'

let ctx: TestContext
let authd: ReturnType<typeof cliRunner>
beforeEach(async () => {
  ctx = await createTestContext()
  authd = cliRunner(SOURCE_CLI, ctx.dir, databaseEnv(ctx))
})
afterEach(() => ctx.close())

const NEW_PASSWORD = 'an admin chose this passphrase'
const invalidOtp = { statusCode: 400, message: 'Invalid or expired OTP', data: null }
const change = (email: string, otp: string) => ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp, newPassword: 'the attacker picked this one' } })
const admin = async (args: string[], stdin?: string) => {
  const r = await authd(args, { stdin })
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
}

describe('an OTP requested before an admin action', () => {
  it('is spent by users set-password', async () => {
    const { userId, email } = await ctx.addUser()
    const otp = await requestOtp(ctx, email)
    await admin(['users', 'set-password', userId, '--password-stdin'], NEW_PASSWORD)
    expect((await change(email, otp)).json).toEqual(invalidOtp)
    expect((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: NEW_PASSWORD } })).status).toBe(201)
  })

  it('is spent by users disable, and stays spent after users enable', async () => {
    const { userId, email } = await ctx.addUser()
    const otp = await requestOtp(ctx, email)
    await admin(['users', 'disable', userId])
    await admin(['users', 'enable', userId])
    expect((await change(email, otp)).json).toEqual(invalidOtp)
  })

  it('is spent by tenants disable, and stays spent after tenants enable', async () => {
    const { email } = await ctx.addUser()
    const otp = await requestOtp(ctx, email)
    await admin(['tenants', 'disable', ctx.tenantId])
    await admin(['tenants', 'enable', ctx.tenantId])
    expect((await change(email, otp)).json).toEqual(invalidOtp)
  })

  it('is spent when the user sets up their password with a setup token', async () => {
    const { user, setupToken } = await createUser(ctx.runtime, { tenantId: ctx.tenantId, email: 'new@example.com', firstName: 'Newt', lastName: 'S' })
    const otp = await requestOtp(ctx, user.email)
    const setup = await ctx.call('POST', '/api/v1/auth/setup-password', { body: { password: NEW_PASSWORD }, headers: { authorization: `Bearer ${setupToken!.token}` } })
    expect(setup.status).toBe(200)
    expect((await change(user.email, otp)).json).toEqual(invalidOtp)
  })
})

describe('a setup token issued before an admin action', () => {
  it.each([
    ['users disable then enable', (userId: string) => [['users', 'disable', userId], ['users', 'enable', userId]]],
    ['tenants disable then enable', () => [['tenants', 'disable', ctx.tenantId], ['tenants', 'enable', ctx.tenantId]]],
  ])('is spent by %s', async (_, steps) => {
    const { user, setupToken } = await createUser(ctx.runtime, { tenantId: ctx.tenantId, email: 'new@example.com', firstName: 'Newt', lastName: 'S' })
    for (const step of steps(user.id)) await admin(step)
    const setup = await ctx.call('POST', '/api/v1/auth/setup-password', { body: { password: NEW_PASSWORD }, headers: { authorization: `Bearer ${setupToken!.token}` } })
    expect(setup.json).toEqual({ statusCode: 401, message: 'Unauthorized', data: null })
  })
})

describe('disabling a tenant', () => {
  it('ends its sessions: enabling it again does not revive old cookies', async () => {
    const { email } = await ctx.addUser()
    const cookie = (await loginFor(ctx, email)).refreshCookie!
    await admin(['tenants', 'disable', ctx.tenantId])
    await admin(['tenants', 'enable', ctx.tenantId])
    expect((await ctx.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${cookie}` })).status).toBe(401)
    expect((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).status).toBe(201)
  })
})
