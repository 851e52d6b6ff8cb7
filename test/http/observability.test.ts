// Request ids, one JSON log line per request (the forgot-password address masked), and
// GET /metrics in the Prometheus text format after a scripted session moves the counters.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { loadConfig } from '../../src/config'
import { setTenantSignup } from '../../src/core/signup/signup'
import { jsonLogger } from '../../src/log'
import { createApp, createMetrics } from '../../src/server/app'
import type { Metrics } from '../../src/server/metrics'
import { startMetricsListener } from '../../src/server/metrics-listener'
import { peerAddresses } from '../../src/server/plugins/client-ip'
import { createTestContext, PASSWORD, toResult, type TestContext } from '../helpers'

let ctx: TestContext
let lines: string[]
let app: ReturnType<typeof createApp>
let metrics: Metrics
beforeEach(async () => {
  ctx = await createTestContext()
  lines = []
  metrics = createMetrics(ctx.runtime)
  app = createApp(ctx.runtime, jsonLogger((line) => lines.push(line)), metrics)
})
afterEach(() => ctx.close())

async function call(method: string, path: string, init: { body?: unknown; headers?: Record<string, string>; peer?: string; app?: ReturnType<typeof createApp> } = {}) {
  const headers: Record<string, string> = { 'x-api-key': ctx.apiKey, ...init.headers }
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  const request = new Request(`http://localhost${path}`, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) })
  peerAddresses.set(request, init.peer ?? '192.0.2.10')
  // (the log line and the metrics are recorded before the answer is handed back: no waiting)
  return toResult(await (init.app ?? app).handle(request))
}

/** Parses the Prometheus text exposition format strictly: every line is a comment or a sample. */
function parsePrometheus(text: string) {
  const samples = new Map<string, number>()
  const types = new Map<string, string>()
  for (const line of text.trimEnd().split('\n')) {
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type) {
      types.set(type[1]!, type[2]!)
      continue
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .+$/.test(line)) continue
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|NaN|\+Inf)$/.exec(line)
    if (!sample) throw new Error(`not Prometheus text format: ${line}`)
    samples.set(sample[1]! + (sample[2] ?? ''), Number(sample[3]))
  }
  return { samples, types }
}

describe('request logs', () => {
  it('give every response a request id of their own, whatever id the caller sends', async () => {
    const fresh = await call('GET', '/healthz')
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const claimed = await call('POST', '/api/v1/auth/login', { body: { email: 'nobody@example.com', password: 'a wrong password here' }, headers: { 'x-request-id': 'lb-1234abcd' } })
    expect(claimed.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(JSON.parse(lines.find((l) => l.includes('"msg":"request"'))!).requestId).toBe(claimed.headers.get('x-request-id'))
  })

  it("keep a trusted proxy's request id when it looks like one, and only a trusted proxy's", async () => {
    const behindProxy = createApp({ ...ctx.runtime, config: { ...ctx.runtime.config, trustedProxies: loadConfig({ AUTHD_TRUSTED_PROXIES: '10.0.0.0/8' }).trustedProxies } }, jsonLogger((line) => lines.push(line)), metrics)
    const viaProxy = (headers: Record<string, string>, peer = '10.1.2.3') => call('GET', '/healthz', { app: behindProxy, headers, peer }).then((res) => res.headers.get('x-request-id'))
    expect(await viaProxy({ 'x-request-id': 'lb-1234abcd' })).toBe('lb-1234abcd')
    expect(await viaProxy({ 'x-request-id': 'bad id\n' })).toMatch(/^[0-9a-f-]{36}$/)
    expect(await viaProxy({ 'x-request-id': 'lb-1234abcd' }, '192.0.2.10')).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('log one JSON line per request with id, method, path, status, duration and client IP; addresses masked', async () => {
    await ctx.addUser({ email: 'grace@example.com' })
    const res = await call('GET', '/api/v1/auth/forgot-password/Grace%40Example.com')
    const entry = JSON.parse(lines.find((l) => l.includes('"msg":"request"'))!)
    expect(entry).toEqual({
      time: expect.any(String),
      level: 'info',
      msg: 'request',
      requestId: res.headers.get('x-request-id'),
      method: 'GET',
      path: '/api/v1/auth/forgot-password/G***@Example.com',
      status: 200,
      durationMs: expect.any(Number),
      ip: '192.0.2.10',
    })
    expect(lines.join('\n')).not.toContain('grace@')
    expect(lines.join('\n')).not.toContain('Grace%40')
  })

  it("name a failed request's stable error code", async () => {
    await call('POST', '/api/v1/auth/login', { body: { email: 'nobody@example.com', password: 'a wrong password here' } })
    const entry = JSON.parse(lines.find((l) => l.includes('"msg":"request"'))!)
    expect(entry).toMatchObject({ status: 401, error: 'unauthorized' })
    await call('GET', '/api/v1/auth/forgot-password/nobody@example.com')
    const success = JSON.parse(lines.filter((l) => l.includes('"msg":"request"'))[1]!)
    expect(success.status).toBe(200)
    expect('error' in success).toBe(false)
  })

  it('include answers made before routing, with their error code: a body over the limit, an unknown path', async () => {
    const body = JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(17 * 1024) })
    const tooLarge = await call('POST', '/api/v1/auth/login', { body: JSON.parse(body), headers: { 'content-length': String(body.length) } })
    const unknown = await call('GET', '/nope')
    expect([tooLarge.status, unknown.status]).toEqual([413, 404])
    const entries = lines.filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l))
    expect(entries.map(({ status, error, path, requestId }) => ({ status, error, path, requestId }))).toEqual([
      { status: 413, error: 'payload_too_large', path: '/api/v1/auth/login', requestId: tooLarge.headers.get('x-request-id') },
      { status: 404, error: 'not_found', path: '/nope', requestId: unknown.headers.get('x-request-id') },
    ])
    const { samples } = parsePrometheus(await metrics.render())
    // (refused before routing: counted under the label unmatched paths share)
    expect(samples.get('authd_http_requests_total{route="unmatched",method="POST",status="413"}')).toBe(1)
    expect(samples.get('authd_errors_total{code="payload_too_large"}')).toBe(1)
  })

  it('carry the request id of a response that sets several cookies (a login)', async () => {
    const { email } = await ctx.addUser()
    const res = await call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })
    expect(res.status).toBe(201)
    expect(res.headers.getSetCookie().length).toBe(2)
    const entry = JSON.parse(lines.find((l) => l.includes('"msg":"request"'))!)
    expect(entry.requestId).toBe(res.headers.get('x-request-id'))
    expect(entry.requestId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('leave out health probes that pass (a load balancer sends one every few seconds)', async () => {
    expect((await call('GET', '/healthz')).status).toBe(200)
    expect((await call('GET', '/readyz')).status).toBe(200)
    expect(lines.filter((l) => l.includes('"msg":"request"'))).toEqual([])
    expect((await call('GET', '/healthz/nope')).status).toBe(404)
    expect(lines.filter((l) => l.includes('"msg":"request"')).length).toBe(1)
  })

  it('mask an address in any path segment, routed or not', async () => {
    expect((await call('GET', '/zz/api/v1/auth/forgot-password/grace%40example.com')).status).toBe(404)
    const entry = JSON.parse(lines.find((l) => l.includes('"msg":"request"'))!)
    expect(entry.path).toBe('/zz/api/v1/auth/forgot-password/g***@example.com')
    expect(lines.join('\n')).not.toContain('grace')
  })
})

describe('per-request work', () => {
  // Elysia parses a request's cookies, query, headers and body only when some hook or handler
  // reads them, which it infers from the code (sucrose). A hook that hands its whole context
  // to a function defeats that, and every request pays for all of it: /healthz ran at 0.76x a
  // bare route. Routes that read them still get them (their own inference).
  it('no app-wide hook makes every request parse its cookies, query, headers or body', () => {
    const inference = (app as unknown as { inference: Record<string, boolean> }).inference
    expect({ cookie: inference.cookie, query: inference.query, headers: inference.headers, body: inference.body }).toEqual({ cookie: false, query: false, headers: false, body: false })
  })

  // The client (IP, user agent) is a derive: a transform step in every route registered after
  // it. The probes act on nothing, so they come before it and skip that step.
  it('works out no client for the health probes, and does for the API', () => {
    const routes = (app as unknown as { routes: Array<{ method: string; path: string; hooks: { transform?: unknown[] } }> }).routes
    const transforms = (path: string, method = 'GET') => routes.find((route) => route.path === path && route.method === method)?.hooks.transform?.length ?? 0
    expect({ healthz: transforms('/healthz'), readyz: transforms('/readyz'), login: transforms('/api/v1/auth/login', 'POST') }).toEqual({ healthz: 0, readyz: 0, login: 1 })
  })

  // Elysia runs a route as an async function when it guesses that any step may be async: a
  // body parser (even on a GET), a handler whose source looks like it returns a call, an
  // after-response hook. Each costs a promise (or a setImmediate) per request. The liveness
  // probe needs none, so it is answered in the same turn, counted and all.
  it('answers the liveness probe without a promise, and has counted it by then', () => {
    const answer = app.fetch(new Request('http://localhost/healthz'))
    expect(answer).toBeInstanceOf(Response)
    expect((answer as Response).status).toBe(200)
    expect(metrics.requests.series({ route: '/healthz', method: 'GET', status: '200' }).value).toBe(1)
  })

  // Bun builds a request's Headers the first time one is read, at a cost that grows with the
  // headers sent (bench/README.md, session 9). Nothing about a probe needs one unless the
  // operator configured CORS origins or a trusted proxy; a GET's body is never read, so its
  // declared length is not checked either.
  it('reads no request header for a probe without CORS origins or trusted proxies', () => {
    const request = new Request('http://localhost/healthz', { headers: { origin: 'https://elsewhere.example', 'x-request-id': 'lb-1234abcd', 'content-length': String(10 * 1024 * 1024) } })
    const read: string[] = []
    const headers = request.headers
    Object.defineProperty(request, 'headers', {
      get: () => {
        read.push(new Error().stack!.split('\n')[2]!.trim())
        return headers
      },
    })
    const answer = app.fetch(request) as Response
    expect({ status: answer.status, read }).toEqual({ status: 200, read: [] })
  })
})

describe('GET /metrics', () => {
  it('is not served on the public port', async () => {
    expect((await call('GET', '/metrics')).status).toBe(404)
  })

  it('serves Prometheus text on its own listener, whose counters follow a scripted session', async () => {
    const { email } = await ctx.addUser()
    await call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })
    await call('POST', '/api/v1/auth/login', { body: { email, password: 'a wrong password here' } })
    await call('GET', `/api/v1/auth/forgot-password/${email}`)
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'open')
    await call('POST', '/api/v1/auth/signup', { body: { email: 'grace@example.com', password: 'a sign-up passphrase of mine', firstName: 'Grace', lastName: 'Hopper' } })
    await call('GET', '/nope')
    await call('DELETE', '/nope')
    const listener = startMetricsListener({ host: '127.0.0.1', port: 0 }, metrics)
    const res = await toResult(await fetch(`${listener.url}/metrics`)).finally(() => listener.stop())
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const { samples, types } = parsePrometheus(res.text)
    expect(types.get('authd_http_requests_total')).toBe('counter')
    expect(types.get('authd_http_request_duration_seconds')).toBe('histogram')
    expect(samples.get('authd_http_requests_total{route="/api/v1/auth/login",method="POST",status="201"}')).toBe(1)
    expect(samples.get('authd_http_requests_total{route="/api/v1/auth/login",method="POST",status="401"}')).toBe(1)
    expect(samples.get('authd_http_requests_total{route="unmatched",method="GET",status="404"}')).toBe(1)
    expect(samples.get('authd_http_requests_total{route="unmatched",method="DELETE",status="404"}')).toBe(1)
    expect(samples.get('authd_logins_total{outcome="succeeded"}')).toBe(1)
    expect(samples.get('authd_logins_total{outcome="failed"}')).toBe(1)
    expect(samples.get('authd_password_reset_requests_total')).toBe(1)
    expect(samples.get('authd_signups_total{outcome="requested"}')).toBe(1)
    expect(samples.get('authd_errors_total{code="unauthorized"}')).toBe(1)
    expect(samples.get('authd_errors_total{code="not_found"}')).toBe(2)
    expect(samples.get('authd_http_request_duration_seconds_count{route="/api/v1/auth/login",method="POST"}')).toBe(2)
    expect(samples.get('authd_http_request_duration_seconds_bucket{route="/api/v1/auth/login",method="POST",le="+Inf"}')).toBe(2)
    // Buckets are cumulative: each holds at least the one before it, +Inf all of them.
    const buckets = [...samples].filter(([name]) => name.startsWith('authd_http_request_duration_seconds_bucket{route="/api/v1/auth/login"')).map(([, v]) => v)
    expect(buckets.length).toBe(12)
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b))
    expect(buckets.at(-1)).toBe(2)
    expect(samples.get('authd_mail_outbox_messages{status="pending"}')).toBe(2)
    expect(samples.get('authd_password_hashing{state="waiting"}')).toBe(0)
    // All of AUTHD_HASH_CONCURRENCY: nothing samples the event loop until a server starts
    // (http/concurrency.test.ts), so this runtime never reads it busy.
    const { hashConcurrency } = ctx.runtime.config
    expect(samples.get('authd_password_hashing_slots')).toBe(hashConcurrency)
  })
})
