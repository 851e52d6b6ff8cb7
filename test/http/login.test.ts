import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createLocalJWKSet, jwtVerify } from 'jose'
import { createApiKey, revokeApiKey } from '../../src/core/tenants/api-keys'
import { createTenant, setTenantDisabled } from '../../src/core/tenants/tenants'
import { setUserDisabled } from '../../src/core/accounts/users'
import { createTestContext, loginFor, PASSWORD, recordStoreCalls, type TestContext } from '../helpers'

const LOGIN = '/api/v1/auth/login'
let ctx: TestContext
beforeEach(async () => {
  ctx = await createTestContext()
})
afterEach(() => ctx.close())

describe('POST /login', () => {
  it('answers 201 with the access token and the full user with its tenant', async () => {
    const { userId, email } = await ctx.addUser()
    const res = await loginFor(ctx, email)
    expect(res.status).toBe(201)
    expect(res.json).toEqual({
      statusCode: 201,
      message: 'Login successful',
      data: {
        response: {
          accessToken: expect.any(String),
          user: { userId, email, firstName: 'Ada', lastName: 'Lovelace', type: 'user', tenant: { tenantId: ctx.tenantId, name: 'Acme' } },
        },
      },
    })
    expect(res.headers.get('cache-control')).toBe('no-store')
  })

  it('issues an ES256 access token with a kid that verifies against the JWKS', async () => {
    const { userId, email } = await ctx.addUser()
    const res = await loginFor(ctx, email)
    const jwks = (await ctx.call('GET', '/api/v1/auth/.well-known/jwks.json')).json
    const { payload, protectedHeader } = await jwtVerify(res.json.data.response.accessToken, createLocalJWKSet(jwks), {
      issuer: ctx.runtime.config.issuer,
      audience: `urn:authd:tenant:${ctx.tenantId}`,
    })
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: jwks.keys[0].kid })
    expect(payload).toMatchObject({ sub: userId, tid: ctx.tenantId, type: 'user', email, amr: ['pwd'] })
    expect(payload.exp! - payload.iat!).toBe(15 * 60)
    expect(payload.jti).toEqual(expect.any(String))
  })

  it.each([
    [false, 86400],
    [true, 30 * 86400],
  ])('sets the refresh cookie with the required attributes (rememberMe %p: Max-Age %p)', async (rememberMe, maxAge) => {
    const { email } = await ctx.addUser()
    const res = await loginFor(ctx, email, rememberMe)
    expect(res.refreshCookie).toMatch(/^[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/)
    const attributes = res.setCookie!.split(';').map((s) => s.trim())
    expect(attributes).toEqual(
      expect.arrayContaining([`Max-Age=${maxAge}`, 'Path=/api/v1/auth', 'HttpOnly', 'Secure', 'SameSite=None']),
    )
  })

  it('treats rememberMe as false when it is left out', async () => {
    const { email } = await ctx.addUser()
    const res = await ctx.call('POST', LOGIN, { body: { email, password: PASSWORD } })
    expect(res.status).toBe(201)
    expect(res.setCookie).toContain('Max-Age=86400')
  })

  it('matches the e-mail case-insensitively and ignores surrounding spaces', async () => {
    await ctx.addUser({ email: 'Grace.Hopper@Example.com' })
    const res = await ctx.call('POST', LOGIN, { body: { email: '  GRACE.hopper@example.COM ', password: PASSWORD } })
    expect(res.status).toBe(201)
    expect(res.json.data.response.user.email).toBe('grace.hopper@example.com')
  })

  it('accepts the password in another Unicode normalisation form (NFKC)', async () => {
    const { email } = await ctx.addUser({ password: 'ｆｕｌｌｗｉｄｔｈ　ｐａｓｓｗｏｒｄ' })
    const res = await ctx.call('POST', LOGIN, { body: { email, password: 'fullwidth password' } })
    expect(res.status).toBe(201)
  })

  describe('401 Unauthorized', () => {
    const unauthorized = { statusCode: 401, message: 'Unauthorized', data: null }

    it.each([
      ['a wrong password', (email: string) => ({ body: { email, password: 'not the password at all' } })],
      ['an unknown e-mail', () => ({ body: { email: 'nobody@example.com', password: PASSWORD } })],
      ['no API key', (email: string) => ({ body: { email, password: PASSWORD }, apiKey: null })],
      ['an unknown API key', (email: string) => ({ body: { email, password: PASSWORD }, apiKey: 'authd_' + 'x'.repeat(43) })],
      ['a key without the authd_ prefix', (email: string) => ({ body: { email, password: PASSWORD }, apiKey: 'garbage' })],
    ])('for %s', async (_, init) => {
      const { email } = await ctx.addUser()
      const res = await ctx.call('POST', LOGIN, init(email))
      expect(res.status).toBe(401)
      expect(res.json).toEqual(unauthorized)
      expect(res.setCookie).toBeNull()
      expect(res.headers.get('cache-control')).toBe('no-store')
    })

    it('for a user who has no password yet', async () => {
      const { email } = await ctx.addUser({ password: undefined })
      const res = await ctx.call('POST', LOGIN, { body: { email, password: PASSWORD } })
      expect(res.json).toEqual(unauthorized)
    })

    it('for a user of another tenant in the same database (the key selects the tenant)', async () => {
      // Tenant A's user, with the right password, presented with tenant B's key.
      const { email } = await ctx.addUser()
      const tenantB = await createTenant(ctx.runtime, { name: 'Beta' })
      const { key: keyB } = await createApiKey(ctx.runtime, { tenantId: tenantB.id })
      const res = await ctx.call('POST', LOGIN, { body: { email, password: PASSWORD }, apiKey: keyB })
      expect({ status: res.status, json: res.json, cookie: res.refreshCookie }).toEqual({ status: 401, json: unauthorized, cookie: undefined })
      // (and with A's own key the same credentials work: the refusal is the tenant's doing)
      expect((await loginFor(ctx, email)).status).toBe(201)
    })

    it('for a revoked key, from the next request on', async () => {
      const { email } = await ctx.addUser()
      expect((await loginFor(ctx, email)).status).toBe(201)
      const [key] = await ctx.runtime.store.apiKeys.list(ctx.tenantId)
      await revokeApiKey(ctx.runtime, key!.id)
      expect((await loginFor(ctx, email)).json).toEqual(unauthorized)
    })

    it("for a disabled tenant's key", async () => {
      const { email } = await ctx.addUser()
      await setTenantDisabled(ctx.runtime, ctx.tenantId, true)
      expect((await loginFor(ctx, email)).json).toEqual(unauthorized)
      await setTenantDisabled(ctx.runtime, ctx.tenantId, false)
      expect((await loginFor(ctx, email)).status).toBe(201)
    })
  })

  it('answers 403 for a disabled user who gives the right password', async () => {
    const { userId, email } = await ctx.addUser()
    await setUserDisabled(ctx.runtime, userId, true)
    const res = await loginFor(ctx, email)
    expect(res.status).toBe(403)
    expect(res.json).toEqual({ statusCode: 403, message: 'User is disabled', data: null })
  })

  describe('400 for malformed requests, never echoing what was sent', () => {
    it.each([
      ['malformed JSON', { rawBody: '{"email": "a@example.com", "password": "hunter2hunter2', headers: { 'content-type': 'application/json' } }, 'Request body must be valid JSON'],
      ['a missing password', { body: { email: 'a@example.com' } }, 'password is required and must be a string'],
      ['an e-mail that is a number', { body: { email: 42, password: 'hunter2hunter2' } }, 'email must be a string'],
      ['rememberMe that is a string', { body: { email: 'a@example.com', password: 'hunter2hunter2', rememberMe: 'yes' } }, 'rememberMe must be a boolean'],
      ['a JSON array', { body: ['hunter2hunter2'] }, 'Request body must be a JSON object'],
      ['an invalid e-mail', { body: { email: 'not-an-address', password: 'hunter2hunter2' } }, 'email must be a valid e-mail address'],
      ['a form-encoded body', { rawBody: 'email=a&password=hunter2hunter2', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 'Request body must be JSON (Content-Type: application/json)'],
      ['no body', {}, 'email is required and must be a string'],
    ])('%s', async (_, init, message) => {
      const res = await ctx.call('POST', LOGIN, init)
      expect(res.json).toEqual({ statusCode: 400, message, data: null })
      expect(res.status).toBe(400)
      expect(res.text).not.toContain('hunter2')
    })
  })

  it('answers 413 before parsing a body over 16 KiB', async () => {
    const body = JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(17 * 1024) })
    const res = await ctx.call('POST', LOGIN, { rawBody: body, headers: { 'content-type': 'application/json', 'content-length': String(body.length) } })
    expect(res.status).toBe(413)
    expect(res.json).toEqual({ statusCode: 413, message: 'Payload too large', data: null })
  })

  it('re-hashes a password made with older argon2 parameters at the next login', async () => {
    const { userId, email } = await ctx.addUser()
    const oldHash = await Bun.password.hash(PASSWORD, { algorithm: 'argon2id', memoryCost: 128, timeCost: 2 })
    await ctx.runtime.store.users.setPasswordHash(userId, oldHash, Date.now())
    expect((await loginFor(ctx, email)).status).toBe(201)
    const rehashed = (await ctx.runtime.store.users.get(userId))!.passwordHash!
    expect(rehashed).not.toBe(oldHash)
    expect(ctx.runtime.hasher.needsRehash(rehashed)).toBe(false)
    expect((await loginFor(ctx, email)).status).toBe(201)
  })

  /** A hasher whose one slot is taken by a hash expected to last 2 s: a login would wait past 1 s. */
  async function saturatedHasher() {
    const { PasswordHasher } = await import('../../src/core/accounts/passwords')
    const hasher = new PasswordHasher({ memoryKib: 64, timeCost: 1, concurrency: 1, maxWaitMs: 1000, initialEstimateMs: 2000 })
    let release!: () => void
    const blocker = hasher['limited'](() => new Promise<void>((resolve) => (release = resolve)))
    return { hasher, release: () => (release(), blocker) }
  }

  it('answers 503 with Retry-After when the password-hashing queue is full', async () => {
    const { email } = await ctx.addUser()
    const { hasher, release } = await saturatedHasher()
    ctx.runtime.hasher.verify = hasher.verify.bind(hasher)
    const res = await loginFor(ctx, email)
    await release()
    expect(res.status).toBe(503)
    expect(res.json).toEqual({ statusCode: 503, message: 'Service unavailable', data: null })
    expect(res.headers.get('retry-after')).toBe('2')
  })

  it('sheds a login at a full hashing queue before any database work', async () => {
    const { email } = await ctx.addUser()
    const { hasher, release } = await saturatedHasher()
    ;(ctx.runtime as { hasher: unknown }).hasher = hasher
    const calls = recordStoreCalls(ctx.runtime.store)
    const res = await loginFor(ctx, email)
    await release()
    expect(res.status).toBe(503)
    // Decided as the request arrives: not even the API key guard read the store.
    expect(calls.map((c) => c.name)).toEqual([])
  })

  it('sheds a login at a full hashing queue before reading its API key or body, and only the login', async () => {
    const { hasher, release } = await saturatedHasher()
    ;(ctx.runtime as { hasher: unknown }).hasher = hasher
    const noKey = await ctx.call('POST', LOGIN, { rawBody: '{not json', apiKey: null, headers: { 'content-type': 'application/json' } })
    const withQuery = await ctx.call('POST', `${LOGIN}?next=/`, { body: { email: 'a@example.com', password: PASSWORD } })
    const forgot = await ctx.call('GET', '/api/v1/auth/forgot-password/a%40example.com')
    const health = await ctx.call('GET', '/healthz')
    await release()
    expect([noKey.status, noKey.headers.get('retry-after')]).toEqual([503, '2'])
    expect(noKey.json).toEqual({ statusCode: 503, message: 'Service unavailable', data: null })
    expect(noKey.headers.get('x-request-id')).toBeTruthy()
    expect(withQuery.status).toBe(503)
    expect(forgot.status).toBe(200)
    expect(health.status).toBe(200)
    // Once the queue drains, the same malformed request gets its real answer.
    expect((await ctx.call('POST', LOGIN, { rawBody: '{not json', apiKey: null, headers: { 'content-type': 'application/json' } })).status).toBe(400)
  })

  it('holds a refused login before answering it, while other requests are answered meanwhile', async () => {
    const held = await createTestContext({}, { refusalHoldMs: 2000 })
    try {
      const { hasher, release } = await saturatedHasher()
      ;(held.runtime as { hasher: unknown }).hasher = hasher
      let answered = false
      const refused = held.call('POST', LOGIN, { body: { email: 'a@example.com', password: PASSWORD } }).finally(() => (answered = true))
      const health = await held.call('GET', '/healthz')
      const forgot = await held.call('GET', '/api/v1/auth/forgot-password/a%40example.com')
      // A client that retries at once, ignoring Retry-After, cannot ask again before this.
      expect([health.status, forgot.status, answered]).toEqual([200, 200, false])
      const res = await refused
      await release()
      expect([res.status, res.headers.get('retry-after')]).toEqual([503, '2'])
      expect(res.json).toEqual({ statusCode: 503, message: 'Service unavailable', data: null })
    } finally {
      await held.close()
    }
  })
})
