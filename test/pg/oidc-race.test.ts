// The OpenID Provider on two instances sharing one PostgreSQL database (product spec §21:
// every rule holds across instances): a code redeemed by many token requests at once, spread
// over both, gives tokens once; and since every other redemption is a second use, the grant
// the winner started is revoked too (RFC 6749 §4.1.2).
import { afterAll, beforeAll, expect, it } from 'bun:test'
import * as oidc from 'openid-client'
import { silentLogger } from '../../src/log'
import { openRuntime, type Runtime } from '../../src/runtime'
import { startServer, type RunningServer } from '../../src/server/serve'
import { queryDatabase } from '../helpers'
import { authorizationRequest, CALLBACK, freePort, relyingParty, startOidcWorld, UserAgent, type OidcWorld } from '../oidc-journey'
import { createTestDatabase, describePostgres } from '../pg'

describePostgres('OpenID Provider on two instances of one PostgreSQL database', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>
  let world: OidcWorld
  let second: { runtime: Runtime; server: RunningServer }
  beforeAll(async () => {
    db = await createTestDatabase()
    world = await startOidcWorld({ postgresUrl: db.url, databasePath: '' })
    const runtime = await openRuntime({ ...world.ctx.runtime.config, port: freePort() })
    second = { runtime, server: await startServer(runtime, silentLogger) }
  }, 60_000)
  afterAll(async () => {
    await second.server.stop()
    second.runtime.close()
    await world.close()
    await db.drop()
  })

  it('a code redeemed by 10 requests racing over both instances gives tokens once, and that grant is then revoked', async () => {
    await world.ctx.addUser({ email: 'ada@example.com' })
    const { client, clientSecret, config } = await relyingParty(world)
    const request = await authorizationRequest(config)
    const browser = new UserAgent(world.server.url)
    const login = await browser.follow(request.url.href)
    const callback = new URL((await browser.signIn(login, 'ada@example.com')).location!)
    const code = callback.searchParams.get('code')!
    const instances = [world.server.url, second.server.url]
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        fetch(`${instances[i % 2]}/t/${world.ctx.tenantId}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${client.id}:${clientSecret}`)}` },
          body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: request.verifier }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: string; access_token?: string } })),
      ),
    )
    const won = answers.filter((a) => a.status === 200)
    expect(won.length).toBe(1)
    expect(answers.filter((a) => a.status === 400).map((a) => a.body.error)).toEqual(Array(9).fill('invalid_grant'))
    const grants = await queryDatabase<{ revoked_reason: string | null }>(world.ctx, 'SELECT revoked_reason FROM refresh_families WHERE client_id = $1', [client.id])
    expect(grants).toEqual([{ revoked_reason: 'code-reused' }])
    expect(await oidc.fetchUserInfo(config, won[0]!.body.access_token!, oidc.skipSubjectCheck).catch((e) => e.status ?? e.cause?.status)).toBe(401)
  })
})
