// What every route shares: the envelope on errors Elysia raises itself, CORS, no-store.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { Elysia } from 'elysia'
import { loadConfig } from '../../src/config'
import { badRequest, serviceUnavailable, tooManyRequests } from '../../src/core/errors'
import { silentLogger } from '../../src/log'
import { errors, type RefusalHold } from '../../src/server/errors'
import { createTestContext, type TestContext } from '../helpers'

let ctx: TestContext
beforeEach(async () => {
  ctx = await createTestContext({ AUTHD_CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' })
})
afterEach(() => ctx.close())

describe('every response', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/api/v1/auth/nope'],
    ['DELETE', '/api/v1/auth/login'],
    ['GET', '/api/v1/auth/login'],
    ['POST', '/api/v1/auth/refresh-token'],
  ])('%s %s: 404 envelope for an unknown route', async (method, path) => {
    const res = await ctx.call(method, path)
    expect(res.status).toBe(404)
    expect(res.json).toEqual({ statusCode: 404, message: 'Resource not found', data: null })
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(res.headers.get('cache-control')).toBe('no-store')
  })

  it('413 for a chunked body (no Content-Length) that grows over 16 KiB', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(4096))
    let sent = 0
    const body = new ReadableStream({
      pull(controller) {
        if (sent++ < 8) controller.enqueue(chunk)
        else controller.close()
      },
    })
    const req = new Request('http://localhost/api/v1/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ctx.apiKey },
      body,
    })
    const res = await ctx.app.handle(req)
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({ statusCode: 413, message: 'Payload too large', data: null })
  })

  it('413 for a body over 16 KiB whose Content-Length claims less (read whole, then measured)', async () => {
    const req = new Request('http://localhost/api/v1/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ctx.apiKey, 'content-length': '64' },
      body: JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(20_000) }),
    })
    const res = await ctx.app.handle(req)
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({ statusCode: 413, message: 'Payload too large', data: null })
  })

  it('413 from the declared Content-Length alone, on any route', async () => {
    const res = await ctx.call('POST', '/api/v1/auth/logout', { rawBody: '{}', headers: { 'content-length': String(10 * 1024 * 1024) } })
    expect(res.status).toBe(413)
  })
})

describe('CORS', () => {
  it('answers a preflight from an allowed origin, with credentials', async () => {
    const res = await ctx.call('OPTIONS', '/api/v1/auth/login', {
      apiKey: null,
      headers: { origin: 'https://admin.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-api-key' },
    })
    expect(res.status).toBeLessThan(300)
    expect(res.headers.get('access-control-allow-origin')).toBe('https://admin.example.com')
    expect(res.headers.get('access-control-allow-credentials')).toBe('true')
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-api-key')
  })

  it('tells caches that an answer depends on Origin: the cacheable JWKS allows one origin and not another', async () => {
    const JWKS = '/api/v1/auth/.well-known/jwks.json'
    const allowed = await ctx.call('GET', JWKS, { apiKey: null, headers: { origin: 'https://app.example.com' } })
    const other = await ctx.call('GET', JWKS, { apiKey: null, headers: { origin: 'https://evil.example' } })
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
    for (const res of [allowed, other]) {
      expect(res.headers.get('cache-control')).toBe('public, max-age=60')
      expect(res.headers.get('vary')).toBe('Origin')
    }
  })

  it('gives an origin that is not configured no Access-Control-Allow-Origin', async () => {
    for (const method of ['OPTIONS', 'POST']) {
      const res = await ctx.call(method, '/api/v1/auth/login', {
        body: method === 'POST' ? { email: 'a@example.com', password: 'x' } : undefined,
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      })
      expect(res.headers.get('access-control-allow-origin')).toBeNull()
    }
  })
})

describe('answers that ask the client to come back later', () => {
  // The errors plugin alone, with routes that refuse as the domain does.
  const refusing = (hold: RefusalHold) =>
    new Elysia()
      .use(errors(silentLogger, hold))
      .get('/busy', () => {
        throw serviceUnavailable(1)
      })
      .get('/limited', () => {
        throw tooManyRequests(3000)
      })
      .get('/bad', () => {
        throw badRequest('email is required and must be a string')
      })
  const call = (app: { handle: (r: Request) => Promise<Response> }, path: string) => {
    const result = { answered: false, response: undefined as Response | undefined }
    const done = app.handle(new Request(`http://localhost${path}`)).then((response) => Object.assign(result, { answered: true, response }))
    return Object.assign(result, { done })
  }

  it('holds a 429 or 503 (they carry Retry-After), and answers other errors at once', async () => {
    const app = refusing({ holdMs: 1500, maxHeld: 10 })
    const busy = call(app, '/busy')
    const limited = call(app, '/limited')
    const bad = await call(app, '/bad').done
    expect(bad.response!.status).toBe(400)
    expect([busy.answered, limited.answered]).toEqual([false, false])
    await Promise.all([busy.done, limited.done])
    expect([busy.response!.status, busy.response!.headers.get('retry-after')]).toEqual([503, '1'])
    expect([limited.response!.status, limited.response!.headers.get('retry-after')]).toEqual([429, '3'])
    expect(await limited.response!.json()).toEqual({ statusCode: 429, message: 'Too many requests', data: null })
  })

  it('holds at most maxHeld answers at once: the next one leaves at once, and a released slot is used again', async () => {
    const app = refusing({ holdMs: 1500, maxHeld: 1 })
    const first = call(app, '/busy')
    const second = await call(app, '/busy').done
    expect([second.response!.status, first.answered]).toEqual([503, false])
    await first.done
    const third = call(app, '/busy')
    const fourth = await call(app, '/limited').done
    expect([fourth.response!.status, third.answered]).toEqual([429, false])
    await third.done
  })

  it('answers at once with a hold of 0 (AUTHD_REFUSAL_HOLD_MS=0)', async () => {
    expect(loadConfig({ AUTHD_REFUSAL_HOLD_MS: '0' }).refusalHoldMs).toBe(0)
    expect(loadConfig({}).refusalHoldMs).toBe(250)
    const app = refusing({ holdMs: 0, maxHeld: 10 })
    const busy = call(app, '/busy')
    const bad = await call(app, '/bad').done
    expect(busy.answered).toBe(true)
    await busy.done
    expect([busy.response!.status, bad.response!.status]).toEqual([503, 400])
  })
})
