// No answer tells whether an account exists: bodies, statuses, headers and the work done are
// the same for registered and unknown addresses (login, forgot-password, change-password),
// and for setup tokens of another tenant and unknown ones.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import type { Store } from '../../src/core/store'
import { createTenant } from '../../src/core/tenants'
import { createUser } from '../../src/core/users'
import { createTestContext, PASSWORD, type CallResult, type TestContext } from '../helpers'

let ctx: TestContext
beforeEach(async () => {
  ctx = await createTestContext()
})
afterEach(() => ctx.close())

/** Everything a client sees but the Date and X-Request-Id headers (different on every response). */
const visible = (r: CallResult) => ({ status: r.status, body: r.text, headers: [...r.headers.entries()].filter(([k]) => k !== 'date' && k !== 'x-request-id').sort() })

/** Wraps every store method to record its calls (name and arguments), in order. */
function recordStoreCalls(store: Store) {
  const calls: Array<{ name: string; args: unknown[] }> = []
  for (const [group, methods] of Object.entries(store)) {
    if (typeof methods !== 'object' || methods === null) continue
    for (const [name, fn] of Object.entries(methods)) {
      if (typeof fn !== 'function') continue
      ;(methods as Record<string, unknown>)[name] = (...args: unknown[]) => {
        calls.push({ name: `${group}.${name}`, args })
        return (fn as (...a: unknown[]) => unknown)(...args)
      }
    }
  }
  return calls
}

describe('login does not reveal whether an account exists', () => {
  it('answers an unknown e-mail exactly as a wrong password, after the same work', async () => {
    const { email } = await ctx.addUser()
    await ctx.runtime.hasher.warmUp()
    const verifications: string[] = []
    const verify = ctx.runtime.hasher.verify.bind(ctx.runtime.hasher)
    ctx.runtime.hasher.verify = (password, hash) => {
      verifications.push('verify')
      return verify(password, hash)
    }
    const calls = recordStoreCalls(ctx.runtime.store)
    const known = await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: 'a wrong password here' }, peer: '192.0.2.1' })
    const [knownVerifications, knownCalls] = [verifications.splice(0), calls.splice(0)]
    const unknown = await ctx.call('POST', '/api/v1/auth/login', { body: { email: 'nobody@example.com', password: 'a wrong password here' }, peer: '192.0.2.2' })
    expect(visible(unknown)).toEqual(visible(known))
    expect(knownVerifications).toEqual(['verify'])
    expect(verifications).toEqual(['verify'])
    expect(calls.map((c) => c.name)).toEqual(knownCalls.map((c) => c.name))
  })
})

describe('forgot-password does not reveal whether an address is registered', () => {
  it('answers byte for byte the same (but for the echoed address) and sends nothing', async () => {
    await ctx.addUser({ email: 'ada@example.com' })
    const known = await ctx.call('GET', '/api/v1/auth/forgot-password/ada@example.com')
    const unknown = await ctx.call('GET', '/api/v1/auth/forgot-password/nobody@example.com')
    expect(visible(unknown)).toEqual({ ...visible(known), body: known.text.replace('ada@example.com', 'nobody@example.com') })
    const queued = await ctx.runtime.store.outbox.list({})
    expect(queued.map((m) => m.recipient)).toEqual(['ada@example.com'])
  })

  it('does the same work: the same store calls, one write transaction each', async () => {
    await ctx.addUser({ email: 'ada@example.com' })
    const calls = recordStoreCalls(ctx.runtime.store)
    await ctx.call('GET', '/api/v1/auth/forgot-password/ada@example.com')
    const known = calls.splice(0)
    await ctx.call('GET', '/api/v1/auth/forgot-password/nobody@example.com')
    // The API key, the client IP's budget (read, then spent), the look-up, and one write transaction.
    expect(known.map((c) => c.name)).toEqual(['apiKeys.findActiveByHash', 'limits.get', 'limits.apply', 'users.findByEmail', 'passwordResets.request'])
    expect(calls.map((c) => c.name)).toEqual(known.map((c) => c.name))
    // The one write differs only in whether it carries an OTP and a mail.
    const [knownWrite, unknownWrite] = [known[4]!.args[0], calls[4]!.args[0]] as any[]
    expect(Object.keys(knownWrite).sort()).toEqual(Object.keys(unknownWrite).sort())
    expect(knownWrite.otp && knownWrite.mail).toBeTruthy()
    expect(unknownWrite.otp ?? unknownWrite.mail).toBeUndefined()
  })
})

describe('change-password does not reveal whether an address is registered', () => {
  it('answers an unknown address exactly as a wrong code for a registered one', async () => {
    const { email } = await ctx.addUser()
    await ctx.call('GET', `/api/v1/auth/forgot-password/${email}`)
    const body = { otp: '000000', newPassword: 'a new passphrase of mine' }
    const known = await ctx.call('POST', '/api/v1/auth/change-password', { body: { ...body, email } })
    const unknown = await ctx.call('POST', '/api/v1/auth/change-password', { body: { ...body, email: 'nobody@example.com' } })
    expect(visible(unknown)).toEqual(visible(known))
    expect(known.json).toEqual({ statusCode: 400, message: 'Invalid or expired OTP', data: null })
  })
})

describe("setup-password does not reveal another tenant's tokens", () => {
  it("answers another tenant's valid token exactly as an unknown token", async () => {
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const { setupToken } = await createUser(ctx.runtime, { tenantId: other.id, email: 'x@example.com', firstName: 'X', lastName: 'Y' })
    const call = (token: string) => ctx.call('POST', '/api/v1/auth/setup-password', { body: { password: PASSWORD }, headers: { authorization: `Bearer ${token}` } })
    expect(visible(await call(setupToken!.token))).toEqual(visible(await call('A'.repeat(43))))
  })
})
