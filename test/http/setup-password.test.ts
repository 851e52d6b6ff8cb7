import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { newSetupToken } from '../../src/core/accounts/setup-password'
import { createTenant } from '../../src/core/tenants/tenants'
import { createUser } from '../../src/core/accounts/users'
import { createTestContext, PASSWORD, type TestContext } from '../helpers'

const SETUP = '/api/v1/auth/setup-password'
const unauthorized = { statusCode: 401, message: 'Unauthorized', data: null }
let ctx: TestContext
beforeEach(async () => {
  ctx = await createTestContext()
})
afterEach(() => ctx.close())

/** A user created without a password, and the setup token the CLI would print. */
async function invited(fields = {}) {
  const { user, setupToken } = await createUser(ctx.runtime, {
    tenantId: ctx.tenantId,
    email: 'new@example.com',
    firstName: 'Newt',
    lastName: 'Scamander',
    ...fields,
  })
  return { userId: user.id, token: setupToken!.token }
}

/** A token planted directly in the store: for cases the CLI never issues. */
async function plantToken(userId: string) {
  const { token, record } = newSetupToken(ctx.runtime, userId, ctx.clock.now())
  await ctx.runtime.store.setupTokens.replace(record)
  return token
}

const setup = (token: string | undefined, password = PASSWORD, init: { apiKey?: string | null; scheme?: string } = {}) =>
  ctx.call('POST', SETUP, {
    body: { password },
    apiKey: init.apiKey,
    headers: token === undefined ? {} : { authorization: `${init.scheme ?? 'Bearer'} ${token}` },
  })

describe('POST /setup-password', () => {
  it('sets the password: 200 with the fixed message and the userId; the user can log in', async () => {
    const { userId, token } = await invited()
    const res = await setup(token)
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ statusCode: 200, message: 'Password set up successfully', data: userId })
    const login = await ctx.call('POST', '/api/v1/auth/login', { body: { email: 'new@example.com', password: PASSWORD } })
    expect(login.status).toBe(201)
  })

  it('answers 409 when the user already has a password', async () => {
    const { token } = await invited()
    expect((await setup(token)).status).toBe(200)
    expect((await setup(token, 'another long passphrase')).json).toEqual({ statusCode: 409, message: 'User already has a password', data: null })

    const { userId } = await ctx.addUser()
    expect((await setup(await plantToken(userId))).status).toBe(409)
  })

  it('answers 403 for a tenant-type user (a token planted in the store: the CLI never issues one)', async () => {
    const { user, setupToken } = await createUser(ctx.runtime, { tenantId: ctx.tenantId, email: 'svc@example.com', firstName: 'Svc', lastName: 'Account', type: 'tenant' })
    expect(setupToken).toBeUndefined()
    const res = await setup(await plantToken(user.id))
    expect(res.json).toEqual({ statusCode: 403, message: 'Tenant users cannot set up passwords', data: null })
  })

  it('answers 404 when the token\'s user no longer exists', async () => {
    const res = await setup(await plantToken(Bun.randomUUIDv7()))
    expect(res.json).toEqual({ statusCode: 404, message: 'Resource not found', data: null })
  })

  it.each([
    ['no Authorization header', undefined, {}],
    ['an unknown token', 'x'.repeat(43), {}],
    ['another scheme', 'TOKEN', { scheme: 'Basic' }],
    ['no API key', 'TOKEN', { apiKey: null }],
  ])('answers 401 for %s', async (_, token, init) => {
    const { token: real } = await invited()
    expect((await setup(token === 'TOKEN' ? real : token, PASSWORD, init)).json).toEqual(unauthorized)
  })

  it('answers 401 once the token is older than 72 hours', async () => {
    const { token } = await invited()
    ctx.clock.advance(72 * 3600 + 1)
    expect((await setup(token)).json).toEqual(unauthorized)
  })

  it("answers 401 for another tenant's token", async () => {
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const { token } = await invited({ tenantId: other.id })
    expect((await setup(token)).json).toEqual(unauthorized)
  })

  it('accepts the scheme in any case', async () => {
    const { token } = await invited()
    expect((await setup(token, PASSWORD, { scheme: 'bearer' })).status).toBe(200)
  })

  it('refuses a weak password (400 naming the rule) and leaves the token usable', async () => {
    const { token } = await invited()
    expect((await setup(token, 'tooshort')).json).toEqual({ statusCode: 400, message: 'Password must be at least 15 characters long', data: null })
    expect((await setup(token, 'scamander is my password')).json).toEqual({ statusCode: 400, message: 'Password must not contain your name', data: null })
    expect((await setup(token)).status).toBe(200)
  })

  it('answers 400 for a malformed body', async () => {
    const { token } = await invited()
    const res = await ctx.call('POST', SETUP, { body: { pass: PASSWORD }, headers: { authorization: `Bearer ${token}` } })
    expect(res.json).toEqual({ statusCode: 400, message: 'password is required and must be a string', data: null })
  })
})
