// Input that could change where mail goes, what a log line says, or which password is hashed
// is refused with a 400 naming the field, over HTTP and at the CLI.
import { afterEach, describe, expect, it } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createUser } from '../../src/core/users'
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

describe('e-mail addresses with control characters, NUL, commas or header syntax', () => {
  it.each(BAD_ADDRESSES)('%s: 400 at login, forgot-password and change-password', async (_, email) => {
    ctx = await createTestContext()
    await ctx.addUser({ email: 'ada@example.com' })
    expect((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).json).toEqual(invalidEmail)
    expect((await ctx.call('GET', `/api/v1/auth/forgot-password/${encodeURIComponent(email)}`)).json).toEqual(invalidEmail)
    expect((await ctx.call('POST', '/api/v1/auth/change-password', { body: { email, otp: '123456', newPassword: 'a fine new passphrase' } })).json).toEqual(invalidEmail)
    expect(await ctx.runtime.store.outbox.list({})).toEqual([])
  })

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
  })
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
