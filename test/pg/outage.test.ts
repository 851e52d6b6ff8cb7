// The database going away is not a crash. authd reaches PostgreSQL through a TCP relay that the
// test cuts and restores (stopping the machine's real server would take every other test down
// with it): meanwhile requests that need the database answer 503 with Retry-After, /readyz
// answers 503, /healthz still 200; afterwards service comes back by itself.
import { afterAll, beforeAll, expect, it } from 'bun:test'
import type { Socket, TCPSocketListener } from 'bun'
import { loadConfig } from '../../src/config'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { createUser } from '../../src/core/accounts/users'
import { silentLogger } from '../../src/log'
import { openRuntime } from '../../src/runtime'
import { startServer, type RunningServer } from '../../src/server/serve'
import { FAST_HASHING, PASSWORD, tempDir, toResult } from '../helpers'
import { createTestDatabase, describePostgres, PG_ADMIN_URL } from '../pg'

/** A TCP relay to PostgreSQL on a fixed port, that can be cut (every connection dropped) and restored. */
function relay(firstPort: number) {
  let port = firstPort
  const target = new URL(PG_ADMIN_URL)
  let listener: TCPSocketListener<{ upstream?: Socket<unknown>; pending: Uint8Array[] }> | undefined
  const open = new Set<Socket<unknown>>()
  const start = () => {
    listener = Bun.listen<{ upstream?: Socket<unknown>; pending: Uint8Array[] }>({
      hostname: '127.0.0.1',
      port,
      socket: {
        async open(client) {
          client.data = { pending: [] }
          open.add(client)
          const upstream = await Bun.connect({
            hostname: target.hostname,
            port: Number(target.port || 5432),
            socket: {
              data: (_, chunk) => {
                client.write(chunk)
              },
              close: () => {
                client.end()
              },
              error: () => {
                client.end()
              },
            },
          })
          open.add(upstream)
          client.data.upstream = upstream
          for (const chunk of client.data.pending) upstream.write(chunk)
        },
        data(client, chunk) {
          if (client.data.upstream) client.data.upstream.write(chunk)
          else client.data.pending.push(new Uint8Array(chunk))
        },
        close: (client) => {
          client.data.upstream?.end()
        },
        error: (client) => {
          client.data.upstream?.end()
        },
      },
    })
    port = listener.port // the same port again when restored
  }
  start()
  return {
    port: listener!.port,
    cut() {
      listener?.stop(true)
      listener = undefined
      for (const socket of open) socket.terminate()
      open.clear()
    },
    restore() {
      if (!listener) start()
    },
  }
}

describePostgres('PostgreSQL going away while authd serves', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>
  let server: RunningServer
  let link: ReturnType<typeof relay>
  let key: string
  beforeAll(async () => {
    db = await createTestDatabase()
    link = relay(0)
    const url = new URL(db.url)
    url.hostname = '127.0.0.1'
    url.port = String(link.port)
    const config = { ...loadConfig({ AUTHD_PORT: '0' }, { dataDir: tempDir(), databaseUrl: url.toString() }), ...FAST_HASHING }
    const runtime = await openRuntime(config)
    const tenant = await createTenant(runtime, { name: 'Acme' })
    key = (await createApiKey(runtime, { tenantId: tenant.id })).key
    await createUser(runtime, { tenantId: tenant.id, email: 'ada@example.com', firstName: 'Ada', lastName: 'L', password: PASSWORD })
    server = await startServer(runtime, silentLogger)
  })
  afterAll(async () => {
    link.restore()
    await server.stop()
    await db.drop()
  })

  const login = () =>
    fetch(`${server.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD }),
    }).then(toResult)

  it('answers 503 with Retry-After meanwhile, and resumes by itself', async () => {
    const before = await login()
    expect(before.status).toBe(201)
    link.cut()
    const during = await login()
    expect(during.json).toEqual({ statusCode: 503, message: 'Service unavailable', data: null })
    expect(during.headers.get('retry-after')).toBe('5')
    const refresh = await fetch(`${server.url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${before.refreshCookie}` } })
    expect(refresh.status).toBe(503)
    expect((await fetch(`${server.url}/readyz`)).status).toBe(503)
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    link.restore()
    let status = 0
    for (let i = 0; i < 50 && status !== 201; i++) {
      status = (await login()).status
      if (status !== 201) await Bun.sleep(200)
    }
    expect(status).toBe(201)
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
  }, 30_000)
})
