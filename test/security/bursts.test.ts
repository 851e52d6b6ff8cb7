// Every guess of a secret is counted before it is judged (product spec §18): a burst of N
// concurrent guesses, spread over two instances of authd on one database, is answered exactly
// as the same N guesses in a row. Runs on SQLite and, in the second pass, on PostgreSQL.
import { afterEach, describe, expect, it } from 'bun:test'
import { setTenantSignup } from '../../src/core/signup/signup'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { silentLogger } from '../../src/log'
import { openRuntime } from '../../src/runtime'
import { createApp } from '../../src/server/app'
import { peerAddresses } from '../../src/server/plugins/client-ip'
import { createTestContext, PASSWORD, queryDatabase, requestOtp, toResult, type CallInit, type CallResult, type TestContext } from '../helpers'

// Refusals leave at once: the hold before a 429 is sent is tested in http/app.
const AT_ONCE = { AUTHD_REFUSAL_HOLD_MS: '0', AUTHD_PASSWORD_IP_PER_10MIN: '1000' }

let ctx: TestContext
let closeSecond: (() => void) | undefined
afterEach(async () => {
  closeSecond?.()
  await ctx?.close()
})

/** A second instance of authd on the test's database: its own runtime (connection, limits, turns). */
async function secondInstance(): Promise<(method: string, path: string, init?: CallInit) => Promise<CallResult>> {
  const runtime = await openRuntime(ctx.runtime.config, { clock: ctx.clock })
  closeSecond = () => runtime.close()
  const app = createApp(runtime, silentLogger)
  return async (method, path, init = {}) => {
    const headers: Record<string, string> = { 'x-api-key': ctx.apiKey, ...init.headers }
    if (init.body !== undefined) headers['content-type'] = 'application/json'
    const request = new Request(`http://localhost${path}`, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) })
    peerAddresses.set(request, init.peer ?? '127.0.0.1')
    return toResult(await app.handle(request))
  }
}

/** The statuses of `count` calls made one after another, and of the same calls made at once
 *  over both instances (on another account, set up alike). */
async function inARowAndAtOnce(setUp: () => Promise<(i: number) => [string, string, CallInit]>, count: number) {
  const other = await secondInstance()
  // Every request of a run falls inside one second of back-off, however slow the machine.
  ctx.clock.freeze()
  const sequential = await setUp()
  const inARow: number[] = []
  for (let i = 0; i < count; i++) inARow.push((await ctx.call(...sequential(i))).status)
  const burst = await setUp()
  const atOnce = await Promise.all(Array.from({ length: count }, (_, i) => (i % 2 ? other : ctx.call)(...burst(i)).then((r) => r.status)))
  return { inARow, atOnce: atOnce.sort() }
}

describe('a burst of guesses is answered as the same guesses in a row', () => {
  it('wrong passwords: 5 answers of 401, then the back-off, over two instances', async () => {
    ctx = await createTestContext(AT_ONCE)
    const { inARow, atOnce } = await inARowAndAtOnce(async () => {
      const { email } = await ctx.addUser()
      return () => ['POST', '/api/v1/auth/login', { body: { email, password: 'a wrong guess at it' }, peer: '203.0.113.9' }]
    }, 40)
    expect(inARow).toEqual([...Array(5).fill(401), ...Array(35).fill(429)])
    expect(atOnce).toEqual(inARow)
  })

  it('wrong passwords from 250 addresses at once: the account-wide budget of 100, then the back-off', async () => {
    ctx = await createTestContext(AT_ONCE)
    const { inARow, atOnce } = await inARowAndAtOnce(async () => {
      const { email } = await ctx.addUser()
      return (i) => ['POST', '/api/v1/auth/login', { body: { email, password: 'a wrong guess at it' }, peer: `10.77.${i >> 8}.${i & 255}` }]
    }, 250)
    expect(inARow).toEqual([...Array(100).fill(401), ...Array(150).fill(429)])
    expect(atOnce).toEqual(inARow)
  }, 60_000)

  it("does not keep the owner's trusted browser waiting behind a flood of guesses at the account", async () => {
    ctx = await createTestContext(AT_ONCE)
    const { email } = await ctx.addUser()
    const device = /authdDevice=([^;]*)/.exec((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).setCookie ?? '')![1]!
    const flood = Array.from({ length: 300 }, (_, i) => ctx.call('POST', '/api/v1/auth/login', { body: { email, password: 'a wrong guess at it' }, peer: `10.78.${i >> 8}.${i & 255}` }))
    const owner = ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, cookie: `authdDevice=${device}`, peer: '192.0.2.50' })
    expect((await owner).status).toBe(201)
    const statuses = new Set((await Promise.all(flood)).map((r) => r.status))
    expect([...statuses].sort()).toEqual([401, 429])
  }, 60_000)

  it('right passwords: every one logs in, however many at once', async () => {
    ctx = await createTestContext(AT_ONCE)
    const { inARow, atOnce } = await inARowAndAtOnce(async () => {
      const { email } = await ctx.addUser()
      return () => ['POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, peer: '203.0.113.9' }]
    }, 12)
    expect(inARow).toEqual(Array(12).fill(201))
    expect(atOnce).toEqual(inARow)
  })

  it('wrong TOTP codes over twelve login challenges: the account back-off counts them as they arrive', async () => {
    ctx = await createTestContext(AT_ONCE)
    const { inARow, atOnce } = await inARowAndAtOnce(async () => {
      const { email } = await ctx.addUser()
      const token = (await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).json.data.response.accessToken
      const bearer = { authorization: `Bearer ${token}` }
      const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer })).json.data
      expect((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: totpCode(secret, totpStep(ctx.clock.now())) } })).status).toBe(200)
      // Twelve challenges opened with the password from twelve addresses, then a code that is
      // never the current one guessed against them from one address.
      const challenges: string[] = []
      for (let i = 0; i < 12; i++) challenges.push((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, peer: `198.51.100.${i}` })).json.data.response.challengeToken)
      const wrong = String((Number(totpCode(secret, totpStep(ctx.clock.now()))) + 500_000) % 1_000_000).padStart(6, '0')
      return (i) => ['POST', '/api/v1/auth/mfa/verify', { body: { challengeToken: challenges[i % 12], code: wrong }, peer: '203.0.113.9' }]
    }, 60)
    expect(inARow).toEqual([...Array(5).fill(400), ...Array(55).fill(429)])
    expect(atOnce).toEqual(inARow)
  })

  it("wrong OTPs: the account's lock (20 wrong codes across OTPs) counts them as they arrive", async () => {
    ctx = await createTestContext(AT_ONCE)
    const { inARow, atOnce } = await inARowAndAtOnce(async () => {
      const { email } = await ctx.addUser()
      const change = (otp: string): [string, string, CallInit] => ['POST', '/api/v1/auth/change-password', { body: { email, otp, newPassword: 'a brand new passphrase' }, peer: '203.0.113.9' }]
      const wrongFor = (right: string) => (right === '000000' ? '000001' : '000000')
      // Three codes with five wrong tries each: fifteen of the twenty, one by one.
      for (let round = 0; round < 3; round++) {
        const wrong = wrongFor(await requestOtp(ctx, email))
        for (let i = 0; i < 5; i++) expect((await ctx.call(...change(wrong))).status).toBe(400)
      }
      const wrong = wrongFor(await requestOtp(ctx, email))
      return () => change(wrong)
    }, 12)
    expect(inARow).toEqual([...Array(5).fill(400), ...Array(7).fill(429)])
    expect(atOnce).toEqual(inARow)
  })

  it('wrong sign-up codes: a burst spends the five tries of a pending sign-up, and its right code is refused after', async () => {
    ctx = await createTestContext(AT_ONCE)
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'open')
    const other = await secondInstance()
    for (const [round, email] of ['x1@example.com', 'x2@example.com', 'x3@example.com'].entries()) {
      await ctx.call('POST', '/api/v1/auth/signup', { body: { email, password: 'a long enough passphrase', firstName: 'X', lastName: 'Y' }, peer: `192.0.2.${round}` })
      const [mail] = await queryDatabase<{ text_body: string }>(ctx, "SELECT text_body FROM mail_outbox WHERE kind = 'signup-code' AND recipient = $1", [email])
      const right = /\b(\d{6})\b/.exec(mail!.text_body)![1]!
      const wrong = right === '000000' ? '000001' : '000000'
      const verify = (otp: string) => ['POST', '/api/v1/auth/verify-email', { body: { email, otp } }] as [string, string, CallInit]
      const burst = await Promise.all(Array.from({ length: 11 }, (_, i) => (i % 2 ? other : ctx.call)(...verify(wrong)).then((r) => r.status)))
      expect(burst).toEqual(Array(11).fill(400))
      expect((await ctx.call(...verify(right))).status).toBe(400)
    }
  })
})
