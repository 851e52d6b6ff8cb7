// Several `authd serve` processes (the compiled binary) on one PostgreSQL database, started at
// the same moment on an empty one: every rule holds across them.
import { afterAll, beforeAll, expect, it } from 'bun:test'
import { decodeProtectedHeader } from 'jose'
import { BINARY, serveBinary, setUpAccount, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD, toResult, type CallResult } from '../helpers'
import { createTestDatabase, describePostgres } from '../pg'
import { sentTo, startSmtp, type TestSmtp } from '../smtp'

const dir = useBinaryAndTempDir()

describePostgres('three instances on one PostgreSQL database', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>
  let smtp: TestSmtp
  let instances: Array<Awaited<ReturnType<typeof serveBinary>>>
  let key: string
  let authd: ReturnType<typeof cliRunner>
  beforeAll(async () => {
    db = await createTestDatabase()
    smtp = await startSmtp()
    const env = { AUTHD_DATABASE_URL: db.url, AUTHD_SMTP_URL: smtp.url, AUTHD_REFRESH_GRACE: '1s', AUTHD_TRUSTED_PROXIES: '127.0.0.1' }
    // Started together on the empty database: migrations applied once, one signing key of each algorithm.
    instances = await Promise.all([serveBinary(dir(), env), serveBinary(dir(), env), serveBinary(dir(), env)])
    authd = cliRunner([BINARY], dir(), env)
    key = (await setUpAccount(authd, 'ada@example.com', PASSWORD)).key
  }, 60_000)
  afterAll(async () => {
    for (const { proc } of instances) proc.kill('SIGTERM')
    await Promise.all(instances.map(({ proc }) => proc.exited))
    await smtp.close()
    await db.drop()
  })

  const on = (i: number) => instances[i % instances.length]!.url
  const login = (i: number, password = PASSWORD, ip = '198.51.100.1') =>
    fetch(`${on(i)}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'x-forwarded-for': ip },
      body: JSON.stringify({ email: 'ada@example.com', password }),
    }).then(toResult)
  const refresh = (i: number, cookie: string) => fetch(`${on(i)}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } }).then(toResult)

  it('all come up, ready, with migrations applied once and one signing key of each algorithm', async () => {
    for (let i = 0; i < 3; i++) expect((await fetch(`${on(i)}/readyz`)).status).toBe(200)
    expect((await authd(['--json', 'migrate', '--status'])).json.pending).toEqual([])
    // (not one made by each instance and two retired: one of each was ever made)
    const keys = (await authd(['--json', 'keys', 'list'])).json
    expect(keys.map((k: { alg: string; active: boolean }) => [k.alg, k.active]).sort()).toEqual([['ES256', true], ['RS256', true]])
  })

  it('give one successor to 21 concurrent refreshes of one cookie spread over the instances', async () => {
    const cookie = (await login(0)).refreshCookie!
    const results = await Promise.all(Array.from({ length: 21 }, (_, i) => refresh(i, cookie)))
    expect(results.map((r) => r.status)).toEqual(Array(21).fill(201))
    expect(new Set(results.map((r) => r.refreshCookie)).size).toBe(1)
    expect((await refresh(1, results[0]!.refreshCookie!)).status).toBe(201)
  })

  it('detect reuse across instances: a token spent on one and replayed on another revokes the family', async () => {
    const cookie = (await login(0)).refreshCookie!
    const rotated = await refresh(0, cookie)
    await Bun.sleep(1500)
    expect((await refresh(1, cookie)).status).toBe(401)
    expect((await refresh(2, rotated.refreshCookie!)).status).toBe(401)
  })

  it('share the login back-off: failures on one instance are counted on the others', async () => {
    const ip = '203.0.113.50'
    for (let i = 0; i < 5; i++) expect((await login(i, 'a wrong guess here', ip)).status).toBe(401)
    const limited: CallResult[] = await Promise.all([0, 1, 2].map((i) => login(i, PASSWORD, ip)))
    expect(limited.map((r) => r.status)).toEqual([429, 429, 429])
  })

  it('deliver each mail exactly once with three workers', async () => {
    const addresses = Array.from({ length: 6 }, (_, i) => `member${i}@example.com`)
    for (const email of addresses) {
      await authd(['users', 'create', '--tenant', (await authd(['--json', 'tenants', 'list'])).json[0].tenantId, '--email', email, '--first-name', 'M', '--last-name', 'N', '--password-stdin'], { stdin: PASSWORD })
    }
    await Promise.all(addresses.map((email, i) => fetch(`${on(i)}/api/v1/auth/forgot-password/${email}`, { headers: { 'x-api-key': key, 'x-forwarded-for': `192.0.2.${i}` } })))
    for (const email of addresses) await smtp.waitFor(sentTo(email))
    await Bun.sleep(1500) // a second copy would have arrived by now
    for (const email of addresses) expect(smtp.messages.filter(sentTo(email)).length).toBe(1)
  }, 30_000)

  it('sign with a key rotated by the CLI on every instance within 15 s', async () => {
    const { kid } = (await authd(['--json', 'keys', 'rotate'])).json
    await Bun.sleep(6000) // the key ring re-reads the store every 5 s
    for (let i = 0; i < 3; i++) expect(decodeProtectedHeader((await login(i)).json.data.response.accessToken).kid).toBe(kid)
  }, 30_000)

  it('lose no acknowledged rotation when one instance is killed (-9) under load', async () => {
    // Ten sessions each rotate in a loop against the instance about to die.
    const chains = await Promise.all(Array.from({ length: 10 }, () => login(0).then((r) => r.refreshCookie!)))
    const victim = instances[2]!
    let running = true
    const acknowledged: string[] = []
    const loops = chains.map(async (start) => {
      let cookie = start
      while (running) {
        const r = await fetch(`${victim.url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } }).then(toResult, () => null)
        if (!r || r.status !== 201) break
        cookie = r.refreshCookie!
        acknowledged.push(cookie)
      }
      return cookie
    })
    await Bun.sleep(700)
    victim.proc.kill('SIGKILL')
    running = false
    const lastAcknowledged = await Promise.all(loops)
    expect(acknowledged.length).toBeGreaterThan(10)
    // Every session goes on from its last acknowledged cookie on a surviving instance.
    const after = await Promise.all(lastAcknowledged.map((cookie) => refresh(0, cookie)))
    expect(after.map((r) => r.status)).toEqual(Array(10).fill(201))
  }, 30_000)
})
