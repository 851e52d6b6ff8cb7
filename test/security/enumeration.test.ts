// No answer tells whether an account exists: bodies, statuses, headers and the work done are
// the same for registered and unknown addresses (login, forgot-password, change-password),
// and for setup tokens of another tenant and unknown ones.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { hashParameters } from '../../src/core/accounts/passwords'
import { setTenantSignup } from '../../src/core/signup/signup'
import { createTenant } from '../../src/core/tenants/tenants'
import { createUser } from '../../src/core/accounts/users'
import { createTestContext, PASSWORD, recordStoreCalls, type CallResult, type TestContext } from '../helpers'

let ctx: TestContext
beforeEach(async () => {
  ctx = await createTestContext()
})
afterEach(() => ctx.close())

/** Everything a client sees but the Date and X-Request-Id headers (different on every response). */
const visible = (r: CallResult) => ({ status: r.status, body: r.text, headers: [...r.headers.entries()].filter(([k]) => k !== 'date' && k !== 'x-request-id').sort() })


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

describe('login after the argon2 parameters change', () => {
  /** The parameters of the hash each verification used. */
  function spyOnVerifications() {
    const seen: string[] = []
    const verify = ctx.runtime.hasher.verify.bind(ctx.runtime.hasher)
    ctx.runtime.hasher.verify = (password, hash) => {
      seen.push(hashParameters(hash)!)
      return verify(password, hash)
    }
    return seen
  }
  const OLD = 'm=128,t=2,p=1'
  const storeOldHash = async (userId: string) =>
    ctx.runtime.store.users.setPasswordHash(userId, await Bun.password.hash(PASSWORD, { algorithm: 'argon2id', memoryCost: 128, timeCost: 2 }), Date.now())
  const wrongLogin = (email: string) => ctx.call('POST', '/api/v1/auth/login', { body: { email, password: 'a wrong password here' }, peer: `192.0.2.${email.length}` })

  it('costs an unknown address what a stored hash costs, while stored hashes keep the old parameters', async () => {
    for (let i = 0; i < 3; i++) await storeOldHash((await ctx.addUser()).userId)
    const seen = spyOnVerifications()
    await wrongLogin('user1@example.com')
    await wrongLogin('nobody@example.com')
    // The configured parameters (m=64,t=1) are on no stored hash yet: the dummy uses the old ones.
    expect(seen).toEqual([OLD, OLD])
  })

  it('draws the dummy parameters per address in the proportions of the stored hashes', async () => {
    for (let i = 0; i < 2; i++) await storeOldHash((await ctx.addUser()).userId)
    for (let i = 0; i < 2; i++) await ctx.addUser()
    const seen = spyOnVerifications()
    for (let i = 0; i < 40; i++) await wrongLogin(`stranger${i}@example.com`)
    const old = seen.filter((p) => p === OLD).length
    expect(seen.filter((p) => p !== OLD).every((p) => p === 'm=64,t=1,p=1')).toBe(true)
    expect(old).toBeGreaterThan(8)
    expect(old).toBeLessThan(32)
    // ...and the same address always gets the same parameters.
    const first = [...seen]
    const again = spyOnVerifications()
    for (let i = 0; i < 40; i++) await wrongLogin(`stranger${i}@example.com`)
    expect(again).toEqual(first)
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

describe('sign-up does not reveal whether an address is registered or refused', () => {
  const signupBody = (email: string) => ({ email, password: 'a sign-up passphrase of mine', firstName: 'Grace', lastName: 'Hopper' })
  const signup = (email: string, peer: string) => ctx.call('POST', '/api/v1/auth/signup', { body: signupBody(email), peer })

  it('answers byte for byte the same (but for the echoed address) for new, registered and refused addresses', async () => {
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'domains:example.com')
    await ctx.addUser({ email: 'ada@example.com' })
    const fresh = await signup('new@example.com', '192.0.2.1')
    const registered = await signup('ada@example.com', '192.0.2.2')
    const refused = await signup('new@elsewhere.org', '192.0.2.3')
    const as = (r: CallResult, email: string) => ({ ...visible(r), body: r.text.replace(email, 'ADDRESS') })
    expect(fresh.status).toBe(202)
    expect(as(registered, 'ada@example.com')).toEqual(as(fresh, 'new@example.com'))
    expect(as(refused, 'new@elsewhere.org')).toEqual(as(fresh, 'new@example.com'))
    // What differs is only what reaches the mailbox: a code, a notice, nothing.
    const queued = await ctx.runtime.store.outbox.list({})
    expect(queued.map((m) => [m.recipient, m.kind]).sort()).toEqual([['ada@example.com', 'signup-attempt'], ['new@example.com', 'signup-code']])
  })

  it('does the same work: one password hash, the same store calls, one write transaction each', async () => {
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'domains:example.com')
    await ctx.addUser({ email: 'ada@example.com' })
    await ctx.runtime.hasher.warmUp()
    const hashes: string[] = []
    const hash = ctx.runtime.hasher.hash.bind(ctx.runtime.hasher)
    ctx.runtime.hasher.hash = (password) => {
      hashes.push('hash')
      return hash(password)
    }
    const verify = ctx.runtime.hasher.verify.bind(ctx.runtime.hasher)
    ctx.runtime.hasher.verify = (password, stored) => (hashes.push('check'), verify(password, stored))
    const calls = recordStoreCalls(ctx.runtime.store)
    const work = async (email: string, peer: string) => {
      await signup(email, peer)
      return { hashes: hashes.splice(0), calls: calls.splice(0) }
    }
    // A pending sign-up for the new address already: replacing it is no more work than none.
    await signup('new@example.com', '192.0.2.9')
    calls.splice(0)
    hashes.splice(0)
    const fresh = await work('new@example.com', '192.0.2.1')
    const registered = await work('ada@example.com', '192.0.2.2')
    const refused = await work('new@elsewhere.org', '192.0.2.3')
    // The API key, the client IP's budget (read, then spent), the look-up, and one write transaction.
    expect(fresh.calls.map((c) => c.name)).toEqual(['apiKeys.findActiveByHash', 'limits.get', 'limits.apply', 'users.findByEmail', 'signups.request'])
    for (const other of [registered, refused]) {
      expect(other.calls.map((c) => c.name)).toEqual(fresh.calls.map((c) => c.name))
      expect(other.hashes).toEqual(['hash'])
    }
    expect(fresh.hashes).toEqual(['hash'])
    // The one write differs only in what it carries: a pending sign-up and its code (in both
    // forms, the store choosing), a notice, nothing.
    const writes = [fresh, registered, refused].map((w) => w.calls[4]!.args[0] as any)
    expect(writes.map((w) => [Boolean(w.pending), w.mail?.kind ?? null, w.replacingMail?.kind ?? null])).toEqual([
      [true, 'signup-code', 'signup-code'],
      [false, 'signup-attempt', null],
      [false, null, null],
    ])
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

  it('does the same work for a wrong code whatever the address: the same store calls, the try counted before the code is compared', async () => {
    const { email } = await ctx.addUser({ email: 'ada@example.com' })
    const { email: idle } = await ctx.addUser({ email: 'bob@example.com' })
    // ada has a live OTP, nobody@ asked for one too (and got none), bob never asked.
    for (const address of [email, 'nobody@example.com']) await ctx.call('GET', `/api/v1/auth/forgot-password/${address}`)
    const calls = recordStoreCalls(ctx.runtime.store)
    const wrong = async (address: string) => {
      await ctx.call('POST', '/api/v1/auth/change-password', { body: { email: address, otp: '000000', newPassword: 'a new passphrase of mine' } })
      return calls.splice(0).map((c) => c.name)
    }
    const liveOtp = await wrong(email)
    expect(liveOtp).toEqual(['apiKeys.findActiveByHash', 'limits.get', 'limits.apply', 'users.findByEmail', 'passwordResets.findOtp', 'passwordResets.reserveTry', 'audit.record'])
    expect(await wrong('nobody@example.com')).toEqual(liveOtp)
    expect(await wrong(idle)).toEqual(liveOtp)
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
