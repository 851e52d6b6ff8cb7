// The OpenID Provider on two `authd serve` processes (the compiled binary) sharing one
// PostgreSQL database behind one public URL (product spec §21: every rule holds across
// instances): a code redeemed by many token requests at once, spread over both, gives tokens
// once; and since every other redemption is a second use, the grant the winner started is
// revoked too (RFC 6749 §4.1.2).
import { afterAll, beforeAll, expect, it } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { BINARY, serveBinary, setUpAccount, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD } from '../helpers'
import { CALLBACK, UserAgent } from '../oidc-journey'
import { createTestDatabase, describePostgres } from '../pg'

const dir = useBinaryAndTempDir()
const PUBLIC_URL = 'http://authd.test'

describePostgres('OpenID Provider on two instances of one PostgreSQL database', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>
  let instances: Array<Awaited<ReturnType<typeof serveBinary>>>
  let authd: ReturnType<typeof cliRunner>
  beforeAll(async () => {
    db = await createTestDatabase()
    const env = { AUTHD_DATABASE_URL: db.url, AUTHD_PUBLIC_URL: PUBLIC_URL }
    instances = await Promise.all([serveBinary(dir(), env), serveBinary(dir(), env)])
    authd = cliRunner([BINARY], dir(), env)
  }, 60_000)
  afterAll(async () => {
    for (const { proc } of instances) proc.kill('SIGTERM')
    await Promise.all(instances.map(({ proc }) => proc.exited))
    await db.drop()
  })

  it('a code redeemed by 10 requests racing over both instances gives tokens once, and that grant is then revoked', async () => {
    const { tenantId } = await setUpAccount(authd, 'ada@example.com', PASSWORD)
    const created = (await authd(['--json', 'clients', 'create', '--tenant', tenantId, '--name', 'Wiki', '--redirect-uri', CALLBACK, '--first-party'])).json
    const basic = `Basic ${btoa(`${created.client.clientId}:${created.clientSecret}`)}`
    const verifier = randomBytes(32).toString('base64url')
    const query = new URLSearchParams({ response_type: 'code', client_id: created.client.clientId, redirect_uri: CALLBACK, scope: 'openid', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', state: 's' })
    // Signed in through the first instance, as a browser behind the load balancer.
    const browser = new UserAgent(instances[0]!.url, PUBLIC_URL)
    const login = await browser.follow(`/t/${tenantId}/authorize?${query}`)
    const signedIn = await browser.signIn(login, 'ada@example.com')
    const callback = new URL(signedIn.location!)
    const code = callback.searchParams.get('code')!
    expect(callback.searchParams.get('iss')).toBe(`${PUBLIC_URL}/t/${tenantId}`)

    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        fetch(`${instances[i % 2]!.url}/t/${tenantId}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
          body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: string; access_token?: string } })),
      ),
    )
    const won = answers.filter((a) => a.status === 200)
    expect(won.length).toBe(1)
    expect(answers.filter((a) => a.status === 400).map((a) => a.body.error)).toEqual(Array(9).fill('invalid_grant'))
    // The other nine were second uses: the grant is revoked, on either instance.
    for (const instance of instances) {
      const info = await fetch(`${instance.url}/t/${tenantId}/userinfo`, { headers: { authorization: `Bearer ${won[0]!.body.access_token}` } })
      expect(info.status).toBe(401)
    }
    const reused = (await authd(['--json', 'audit', '--type', 'oidc.code_reused'])).json
    expect(reused.length).toBe(9)
  }, 60_000)
})
