// Races over a real socket: the server runs in this process on a free port.
import { afterEach, describe, expect, it } from 'bun:test'
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
    const found = await ctx.runtime.store.sessions.findToken(new Bun.CryptoHasher('sha256').update(successor!).digest('base64url'))
    expect(found?.token.spentAt).toBeNull()
    expect(found?.family.revokedAt).toBeNull()
    const next = await fetch(`${server.url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${successor}` } })
    expect(next.status).toBe(201)
  })
})
