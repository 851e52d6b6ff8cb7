// Races over a real socket: the server runs in this process on a free port.
import { afterEach, describe, expect, it } from 'bun:test'
import { refreshTokenKey } from '../../src/core/sessions/refresh-tokens'
import { silentLogger } from '../../src/log'
import { startServer, type RunningServer } from '../../src/server/serve'
import { createTestContext, loginFor, toResult, type TestContext } from '../helpers'

let ctx: TestContext
let server: RunningServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
  ctx.close()
})

describe('GET /refresh-token under concurrency', () => {
  it('20 simultaneous refreshes with one cookie: all 201, one successor, nothing revoked', async () => {
    ctx = await createTestContext({ AUTHD_PORT: '0' })
    server = await startServer(ctx.runtime, silentLogger)
    const { email } = await ctx.addUser()
    const cookie = (await loginFor(ctx, email)).refreshCookie!

    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${server!.url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } }).then(toResult),
      ),
    )
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201))
    const successors = new Set(results.map((r) => r.refreshCookie))
    expect(successors.size).toBe(1)
    const [successor] = successors
    expect(successor).not.toBe(cookie)

    // Exactly one successor row exists, and it works: the family was not revoked.
    const found = await ctx.runtime.store.sessions.findToken(refreshTokenKey(successor!))
    expect(found?.token.spentAt).toBeNull()
    expect(found?.family.revokedAt).toBeNull()
    const next = await fetch(`${server.url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${successor}` } })
    expect(next.status).toBe(201)
  })
})

describe('GET /refresh-token within the grace period, concurrently', () => {
  // The 20 simultaneous refreshes above all read the token before the first commit, so none of
  // them meets a spent token. Here the first refresh has committed before the others arrive:
  // all 19 take the grace branch at once.
  it('19 simultaneous refreshes of a token spent just before: all 201 with the same successor, nothing revoked', async () => {
    ctx = await createTestContext({ AUTHD_PORT: '0' })
    server = await startServer(ctx.runtime, silentLogger)
    const { email } = await ctx.addUser()
    const cookie = (await loginFor(ctx, email)).refreshCookie!
    const refresh = (value: string) => fetch(`${server!.url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${value}` } }).then(toResult)

    const first = await refresh(cookie)
    expect(first.status).toBe(201)
    const spent = await ctx.runtime.store.sessions.findToken(refreshTokenKey(cookie))
    expect(spent?.token.spentAt).not.toBeNull()

    const results = await Promise.all(Array.from({ length: 19 }, () => refresh(cookie)))
    expect(results.map((r) => [r.status, r.refreshCookie])).toEqual(Array(19).fill([201, first.refreshCookie]))
    expect((await refresh(first.refreshCookie!)).status).toBe(201)
  })
})

describe('password races', () => {
  it('20 simultaneous change-passwords with one OTP: exactly one 200, the rest 400', async () => {
    const { startSmtp, otpIn } = await import('../smtp')
    const smtp = await startSmtp()
    try {
      ctx = await createTestContext({ AUTHD_PORT: '0', AUTHD_SMTP_URL: smtp.url })
      server = await startServer(ctx.runtime, silentLogger)
      const { email } = await ctx.addUser()
      const api = `${server.url}/api/v1/auth`
      await fetch(`${api}/forgot-password/${email}`, { headers: { 'x-api-key': ctx.apiKey } })
      const otp = otpIn(await smtp.waitFor(() => true))
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          fetch(`${api}/change-password`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': ctx.apiKey },
            body: JSON.stringify({ email, otp, newPassword: `concurrent new passphrase ${i}` }),
          }).then(toResult),
        ),
      )
      const statuses = results.map((r) => r.status).sort()
      expect(statuses).toEqual([200, ...Array(19).fill(400)])
      const winner = results.findIndex((r) => r.status === 200)
      const login = await fetch(`${api}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': ctx.apiKey },
        body: JSON.stringify({ email, password: `concurrent new passphrase ${winner}` }),
      })
      expect(login.status).toBe(201)
    } finally {
      await server?.stop()
      server = undefined
      await smtp.close()
    }
  })

  it('20 simultaneous setup-passwords for one user: exactly one 200, the rest 409', async () => {
    ctx = await createTestContext({ AUTHD_PORT: '0' })
    server = await startServer(ctx.runtime, silentLogger)
    const { createUser } = await import('../../src/core/accounts/users')
    const { setupToken } = await createUser(ctx.runtime, { tenantId: ctx.tenantId, email: 'new@example.com', firstName: 'N', lastName: 'P' })
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${server!.url}/api/v1/auth/setup-password`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': ctx.apiKey, authorization: `Bearer ${setupToken!.token}` },
          body: JSON.stringify({ password: `concurrent setup passphrase ${i}` }),
        }).then(toResult),
      ),
    )
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(19).fill(409)])
    for (const r of results.filter((r) => r.status === 409)) expect(r.json).toEqual({ statusCode: 409, message: 'User already has a password', data: null })
  })
})

describe('the event-loop meter (a busy loop leaves a hashing slot free)', () => {
  /** Keeps this process's event loop busy for `ms`, yielding every 20 ms so timers can run. */
  async function spin(ms: number) {
    const until = performance.now() + ms
    while (performance.now() < until) {
      const chunk = performance.now() + 20
      while (performance.now() < chunk);
      await Bun.sleep(1)
    }
  }

  it.skipIf(process.platform !== 'linux')('samples only once a server runs: a CLI command hashes on every thread however busy it is', async () => {
    ctx = await createTestContext({ AUTHD_PORT: '0' })
    await spin(400)
    expect(ctx.runtime.eventLoop.share).toBe(0)

    server = await startServer(ctx.runtime, silentLogger)
    // (a second of spinning takes the half-second average to ~0.86 of the loop's real share,
    // so the check holds even when a loaded CI machine gives this thread a third of a core)
    await spin(1000)
    expect(ctx.runtime.eventLoop.share).toBeGreaterThan(0.25)
  })
})
