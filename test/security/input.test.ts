// Input that could change where mail goes, what a log line says, or which password is hashed
// is refused with a 400 naming the field, over HTTP and at the CLI.
import { afterEach, describe, expect, it } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createUser } from '../../src/core/accounts/users'
import { createTestContext, PASSWORD, requestOtp, tempDir, type TestContext } from '../helpers'

let ctx: TestContext
afterEach(() => ctx?.close())

const BAD_ADDRESSES = [
  ['a NUL', 'ada\u0000@example.com'],
  ['a control character', 'ada\u0001@example.com'],
  ['a line break inside', 'ada@example.com\r\nBcc: x@evil.example'],
  ['a comma (two recipients)', 'ada@example.com,eve@evil.example'],
  ['a semicolon', 'ada@example.com;eve@evil.example'],
  ['angle brackets', 'Ada <ada@example.com>'],
  ['a bidi override', 'ada\u202e@example.com'],
]
const invalidEmail = { statusCode: 400, message: 'email must be a valid e-mail address', data: null }

const nulInBody = { statusCode: 400, message: 'email must not contain a NUL character (\\u0000)', data: null }
const nulInUrl = { statusCode: 400, message: 'The request URL holds a NUL character (%00)', data: null }

describe('e-mail addresses with control characters, NUL, commas or header syntax', () => {
  it.each(BAD_ADDRESSES)('%s: 400 at login, forgot-password and change-password', async (what, email) => {
    ctx = await createTestContext()
    await ctx.addUser({ email: 'ada@example.com' })
    const nul = what === 'a NUL'
    expect((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).json).toEqual(nul ? nulInBody : invalidEmail)
    expect((await ctx.call('GET', `/api/v1/auth/forgot-password/${encodeURIComponent(email)}`)).json).toEqual(nul ? nulInUrl : invalidEmail)
    expect((await ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp: '123456', newPassword: 'a fine new passphrase' } })).json).toEqual(nul ? nulInBody : invalidEmail)
    expect(await ctx.runtime.store.outbox.list({})).toEqual([])
  })

  // Many CLI processes, one after another: a loaded machine needs more than the default 5 s.
  it('are refused by users create and users import', async () => {
    const dir = tempDir()
    try {
      const authd = cliRunner(SOURCE_CLI, dir)
      const { tenantId } = (await authd(['--json', 'tenants', 'create', '--name', 'Acme'])).json
      for (const [, email] of BAD_ADDRESSES.filter(([, e]) => !e!.includes('\u0000'))) {
        const r = await authd(['users', 'create', '--tenant', tenantId, '--email', email!, '--first-name', 'Ada', '--last-name', 'L'])
        expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: 'authd: email must be a valid e-mail address\n' })
      }
      const file = join(dir, 'users.json')
      writeFileSync(file, JSON.stringify([{ email: 'ada\u0000@example.com', firstName: 'Ada', lastName: 'L' }, { email: 'a@x.io,b@y.io', firstName: 'B', lastName: 'C' }]))
      const r = await authd(['users', 'import', '--tenant', tenantId, file])
      expect(r.stderr).toBe('authd: nothing imported, 2 invalid row(s): row 1: email must be a valid e-mail address; row 2: email must be a valid e-mail address\n')
      expect((await authd(['--json', 'users', 'list', '--tenant', tenantId])).json).toEqual({ items: [], nextCursor: null })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('passwords with an unpaired surrogate', () => {
  // JSON can carry a lone surrogate; hashed, its UTF-8 form would be U+FFFD, so two different
  // passwords would be the same one.
  const lone = 'a long passphrase with \ud800 in it'
  const refused = { statusCode: 400, message: 'Password must be valid Unicode text (it contains an unpaired surrogate)', data: null }

  it('are a 400 at login, change-password and setup-password, never hashed as U+FFFD', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser({ password: 'a long passphrase with \ufffd in it' })
    expect((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: lone } })).json).toEqual(refused)
    expect((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: 'a long passphrase with \ufffd in it' } })).status).toBe(201)
    const otp = await requestOtp(ctx, email)
    expect((await ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp, newPassword: lone } })).json).toEqual(refused)
    const { setupToken } = await createUser(ctx.runtime, { tenantId: ctx.tenantId, email: 'new@example.com', firstName: 'Newt', lastName: 'S' })
    const setup = await ctx.call('POST', '/api/v1/auth/setup-password', { body: { password: lone }, headers: { authorization: `Bearer ${setupToken!.token}` } })
    expect(setup.json).toEqual(refused)
  })
})

describe('a NUL character in an id, a filter or a body string', () => {
  it('is a 400 on every route that takes one, never a 500 (PostgreSQL refuses NUL in text)', async () => {
    ctx = await createTestContext()
    const { userId, email } = await ctx.addUser({ email: 'ada@example.com' })
    const { createApiKey } = await import('../../src/core/tenants/api-keys')
    const admin = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })).key
    const token = (await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).json.data.response.accessToken
    const bearer = { authorization: `Bearer ${token}` }
    const calls: Array<[string, string, { apiKey?: string; headers?: Record<string, string>; body?: unknown }]> = [
      ['GET', '/api/v1/admin/users/%00', { apiKey: admin }],
      ['PATCH', '/api/v1/admin/users/%00', { apiKey: admin, body: { firstName: 'X' } }],
      ['DELETE', `/api/v1/admin/users/${userId}%00`, { apiKey: admin }],
      ['GET', '/api/v1/admin/users/%00/sessions', { apiKey: admin }],
      ['POST', '/api/v1/admin/users/%00/invite', { apiKey: admin }],
      ['DELETE', '/api/v1/admin/users/%00/mfa', { apiKey: admin }],
      ['GET', '/api/v1/admin/users/%00/passkeys', { apiKey: admin }],
      ['GET', '/api/v1/admin/audit?userId=%00', { apiKey: admin }],
      ['GET', '/api/v1/admin/audit?type=%00', { apiKey: admin }],
      ['GET', '/api/v1/admin/users?email=a%00@example.com', { apiKey: admin }],
      ['DELETE', '/api/v1/auth/sessions/%00', { headers: bearer }],
      ['DELETE', '/api/v1/auth/passkeys/%00', { headers: bearer }],
    ]
    for (const [method, path, init] of calls) {
      const r = await ctx.call(method, path, init)
      expect({ path, status: r.status, body: r.json }).toEqual({ path, status: 400, body: { statusCode: 400, message: 'The request URL holds a NUL character (%00)', data: null } })
    }
    const inBody = await ctx.call('POST', '/api/v1/auth/passkeys/login', { body: { challengeId: 'x\u0000y', response: {} } })
    expect(inBody.json).toEqual({ statusCode: 400, message: 'challengeId must not contain a NUL character (\\u0000)', data: null })
    const nested = await ctx.call('PATCH', `/api/v1/admin/users/${userId}`, { apiKey: admin, body: { lastName: 'L\u0000' } })
    expect(nested.status).toBe(400)
  })
})
