// Thousands of malformed requests at the real server (a socket, not app.handle): no 5xx,
// always the envelope, never an echo of what was sent. Seeded, so a failure replays.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { silentLogger } from '../../src/log'
import { startServer, type RunningServer } from '../../src/server/serve'
import { setTenantSignup } from '../../src/core/signup/signup'
import { createTestContext, type TestContext } from '../helpers'

const REQUESTS = 3000
let ctx: TestContext
let server: RunningServer
beforeAll(async () => {
  // Generous limits: this test is about parsing and validation, not throttling.
  ctx = await createTestContext({ AUTHD_PORT: '0', AUTHD_FORGOT_IP_PER_HOUR: '100000', AUTHD_PASSWORD_IP_PER_10MIN: '100000', AUTHD_LOGIN_IP_FAILURES: '100000', AUTHD_SIGNUP_IP_PER_HOUR: '100000' })
  await setTenantSignup(ctx.runtime, ctx.tenantId, 'open')
  server = await startServer(ctx.runtime, silentLogger)
  await ctx.addUser({ email: 'ada@example.com' })
})
afterAll(async () => {
  await server.stop()
  ctx.close()
})

/** mulberry32: a tiny seeded PRNG. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function generator(seed: number, apiKey: string) {
  const random = prng(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  return (n: number) => {
    const marker = `ECHOCANARY${n}X`
    const paths = [
      '/api/v1/auth/login', '/api/v1/auth/change-password', '/api/v1/auth/setup-password', '/api/v1/auth/logout',
      '/api/v1/auth/refresh-token', `/api/v1/auth/forgot-password/${marker}`, `/api/v1/auth/forgot-password/%ZZ${marker}`,
      '/api/v1/auth/forgot-password/', `/api/v1/auth/../auth/login`, `/api/v1/auth/login/${marker}`, `/%00${marker}`,
      `/api/v1/auth/${'a'.repeat(3000)}`, '/api/v1/auth/.well-known/jwks.json', '/healthz', `/api/v1/auth/forgot-password/${marker}%00@x.io`,
      `/api/v1/auth/login?__proto__[x]=${marker}`, '/api/v2/auth/login', '/API/V1/AUTH/LOGIN', '/api/v1/auth/signup', '/api/v1/auth/verify-email',
    ] as const
    const bodies = [
      undefined, '', '{', '[]', 'null', '"str"', '42', `{"email":"${marker}"}`, `{"email":1,"password":["${marker}"]}`,
      `{"__proto__":{"polluted":"${marker}"},"email":"a@example.com","password":"x"}`,
      `{"constructor":{"prototype":{"x":"${marker}"}},"email":"a@example.com","password":"${marker}"}`,
      `${'['.repeat(5000)}${']'.repeat(5000)}`, `{"a":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}`,
      `{"email":"ada@example.com\\u0000${marker}","password":"\\u0000${marker}","rememberMe":"yes"}`,
      `{"email":"ada@example.com","password":"${marker}","rememberMe":true,"extra":"${marker}"}`,
      `{"email":"ada@example.com","otp":"${marker}","newPassword":"${marker}${'x'.repeat(200)}"}`,
      `{"password":${1e309}}`, `{"password":"\\ud800${marker}"}`, `\u0000\u0001${marker}`, `${marker}=1&email=x`,
      JSON.stringify({ email: 'a@example.com', password: marker.repeat(900) }),
      `{"email":"new@example.com","password":"a passphrase ${marker}","firstName":"${marker}","lastName":{"x":1}}`,
      `{"email":"new@example.com","password":"a passphrase ${marker}","firstName":"${'x'.repeat(200)}","lastName":"${marker}"}`,
      `{"email":"new@example.com","otp":${1e309}}`,
    ] as const
    const contentTypes = [undefined, 'application/json', 'application/json; charset=utf-16', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', `application/${marker}+json`] as const
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'] as const
    const headers: Record<string, string> = {}
    const contentType = pick(contentTypes)
    if (contentType) headers['content-type'] = contentType
    if (random() < 0.5) headers['x-api-key'] = pick([apiKey, `authd_${marker}`, marker, ''])
    if (random() < 0.3) headers.cookie = pick([`refreshToken=${marker}`, `refreshToken={"${marker}":1}`, 'refreshToken=%E0%A4%A', `refreshToken=${marker}; refreshToken=x`])
    if (random() < 0.2) headers.authorization = pick([`Bearer ${marker}`, `Basic ${marker}`, 'Bearer', `bearer  ${marker} extra`])
    if (random() < 0.2) headers.origin = pick(['https://evil.example', 'null', marker])
    const method = pick(methods)
    const body = method === 'GET' || method === 'HEAD' ? undefined : pick(bodies)
    return { marker, method, path: pick(paths), headers, body }
  }
}

describe('fuzzing the real server', () => {
  it(`${REQUESTS} malformed requests: no 5xx, always the envelope, never an echo`, async () => {
    const next = generator(20261122, ctx.apiKey)
    const problems: string[] = []
    for (let start = 0; start < REQUESTS; start += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const { marker, method, path, headers, body } = next(start + i)
          const response = await fetch(`${server.url}${path}`, { method, headers, body })
          const text = await response.text()
          const where = `${method} ${path.slice(0, 80)} ${JSON.stringify(headers).slice(0, 120)} ${String(body).slice(0, 60)} -> ${response.status} ${text.slice(0, 120)}`
          if (response.status >= 500) problems.push(`5xx: ${where}`)
          if (text.includes(marker)) problems.push(`echo: ${where}`)
          if (method === 'HEAD' || response.status === 204 || path.endsWith('jwks.json')) return
          let json: any
          try {
            json = JSON.parse(text)
          } catch {
            return problems.push(`not JSON: ${where}`)
          }
          if (json?.statusCode !== response.status || typeof json.message !== 'string' || !('data' in json)) problems.push(`not the envelope: ${where}`)
        }),
      )
    }
    expect(problems.slice(0, 10)).toEqual([])
    // Prototype pollution would show up on every object in this process.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  }, 120_000)
})

describe('a body of any size on the socket', () => {
  // (Bun's own cap answered bodies over 1 MiB with a bare 413: no envelope, no page)
  it('over 1 MiB is refused by authd itself: the envelope at the API, the page at the pages, and the connection is not read to its end', async () => {
    const big = new Uint8Array(8 * 1024 * 1024).fill(97)
    const api = await fetch(`${server.url}/api/v1/auth/login`, { method: 'POST', body: big, headers: { 'content-type': 'application/json', 'x-api-key': ctx.apiKey } })
    expect({ status: api.status, body: await api.json() }).toEqual({ status: 413, body: { statusCode: 413, message: 'Payload too large', data: null } })
    const page = await fetch(`${server.url}/t/${ctx.tenantId}/login`, { method: 'POST', body: big, headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url } })
    expect({ status: page.status, type: page.headers.get('content-type') }).toEqual({ status: 413, type: 'text/html; charset=utf-8' })
    expect(await page.text()).toContain('<html')
  })
})
