// The admin API (product spec §14): an admin-scoped API key manages its own tenant's users,
// and nothing of any other tenant's; every call is audited with the key's id.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { createUser } from '../../src/core/accounts/users'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createTestContext, databaseEnv, loginFor, PASSWORD, queryDatabase, type TestContext } from '../helpers'

const ADMIN = '/api/v1/admin'
let ctx: TestContext
let adminKey: string
let adminKeyId: string
beforeEach(async () => {
  ctx = await createTestContext()
  const created = await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })
  adminKey = created.key
  adminKeyId = created.apiKey.id
})
afterEach(() => ctx.close())

const admin = (method: string, path: string, init: { body?: unknown; headers?: Record<string, string>; key?: string | null } = {}) =>
  ctx.call(method, `${ADMIN}${path}`, { body: init.body, headers: init.headers, apiKey: init.key === undefined ? adminKey : init.key })

const newUser = (n: number | string, extra: Record<string, unknown> = {}) => ({ email: `person${n}@example.com`, firstName: 'Grace', lastName: 'Hopper', ...extra })

/** Every admin endpoint, for a user id. */
const endpoints = (userId: string): Array<[string, string, unknown?]> => [
  ['GET', `/users/${userId}`],
  ['PATCH', `/users/${userId}`, { firstName: 'Changed' }],
  ['DELETE', `/users/${userId}`],
  ['POST', `/users/${userId}/invite`],
  ['GET', `/users/${userId}/sessions`],
  ['DELETE', `/users/${userId}/sessions`],
  ['DELETE', `/users/${userId}/mfa`],
  ['GET', `/audit?userId=${userId}`],
]

describe('the admin scope', () => {
  it('refuses a client-scoped key with 403 on every endpoint, and a missing or unknown key with 401', async () => {
    const { userId } = await ctx.addUser()
    const calls: Array<[string, string, unknown?]> = [['POST', '/users', newUser(1)], ['GET', '/users'], ...endpoints(userId)]
    for (const [method, path, body] of calls) {
      const client = await admin(method, path, { body, key: ctx.apiKey })
      expect({ method, path, status: client.status, json: client.json }).toEqual({ method, path, status: 403, json: { statusCode: 403, message: 'API key lacks the admin scope', data: null } })
      for (const key of [null, 'authd_unknown']) expect({ method, path, status: (await admin(method, path, { body, key })).status }).toEqual({ method, path, status: 401 })
    }
    // Nothing happened: the user is as created, and no user was added.
    expect(Number((await queryDatabase<{ n: number }>(ctx, 'SELECT count(*) AS n FROM users'))[0]!.n)).toBe(1)
  })

  it('lets an admin key use the auth API too (admin includes client)', async () => {
    const { email } = await ctx.addUser()
    const res = await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, apiKey: adminKey })
    expect(res.status).toBe(201)
  })
})

describe('POST /users', () => {
  it('creates a user with a password who can log in at once', async () => {
    const res = await admin('POST', '/users', { body: newUser(1, { password: 'a long enough passphrase' }) })
    expect(res.status).toBe(201)
    expect(res.json).toEqual({
      statusCode: 201,
      message: 'User created',
      data: { userId: expect.any(String), email: 'person1@example.com', firstName: 'Grace', lastName: 'Hopper', type: 'user', tenant: { tenantId: ctx.tenantId, name: 'Acme' }, emailVerifiedAt: null, groups: [] },
    })
    const login = await ctx.call('POST', '/api/v1/auth/login', { body: { email: 'person1@example.com', password: 'a long enough passphrase' } })
    expect(login.status).toBe(201)
  })

  it('returns a setup token without password or invite, and mails it (returning none) with invite', async () => {
    const plain = await admin('POST', '/users', { body: newUser(1) })
    const { setupToken, setupTokenExpiresAt } = plain.json.data
    expect({ setupToken: typeof setupToken, at: Date.parse(setupTokenExpiresAt) > ctx.clock.now() }).toEqual({ setupToken: 'string', at: true })
    const setup = await ctx.call('POST', '/api/v1/auth/setup-password', { headers: { authorization: `Bearer ${setupToken}` }, body: { password: 'another long passphrase' } })
    expect(setup.status).toBe(200)

    const invited = await admin('POST', '/users', { body: newUser(2, { invite: true }) })
    expect(invited.status).toBe(201)
    expect(invited.json.data.setupToken).toBeUndefined()
    const mails = await queryDatabase<{ kind: string; recipient: string }>(ctx, "SELECT kind, recipient FROM mail_outbox WHERE kind = 'invitation'")
    expect(mails).toEqual([{ kind: 'invitation', recipient: 'person2@example.com' }])
  })

  it('answers bad input with a 400 naming the problem, and a taken address with 409', async () => {
    const cases: Array<[unknown, number, string]> = [
      [newUser('x', { email: 'not-an-address' }), 400, 'email must be a valid e-mail address'],
      [newUser(1, { password: 'short' }), 400, expect.stringContaining('Password') as unknown as string],
      [newUser(1, { type: 'root' }), 400, 'type must be one of admin, user, tenant'],
      [newUser(1, { password: 'a long enough passphrase', invite: true }), 400, 'invite and password exclude each other'],
      [{ email: 'a@example.com' }, 400, expect.any(String) as unknown as string],
    ]
    for (const [body, status, message] of cases) {
      const res = await admin('POST', '/users', { body })
      expect({ body, status: res.status, message: res.json.message, data: res.json.data }).toEqual({ body, status, message, data: null })
    }
    expect((await admin('POST', '/users', { body: newUser(1) })).status).toBe(201)
    const taken = await admin('POST', '/users', { body: newUser(1) })
    expect(taken.status).toBe(409)
  })
})

describe('Idempotency-Key on POST /users', () => {
  it('returns the first answer to a retry, with Idempotent-Replayed, and creates one user', async () => {
    const headers = { 'idempotency-key': 'create-person-1' }
    const first = await admin('POST', '/users', { body: newUser(1), headers })
    const retry = await admin('POST', '/users', { body: newUser(1), headers })
    expect(first.status).toBe(201)
    expect(retry.status).toBe(201)
    expect(retry.json).toEqual(first.json)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    expect(Number((await queryDatabase<{ n: number }>(ctx, "SELECT count(*) AS n FROM users WHERE email = 'person1@example.com'"))[0]!.n)).toBe(1)
    // The first answer carried a setup token: it is kept sealed, never in clear.
    const rows = await queryDatabase<{ sealed_response: string }>(ctx, 'SELECT sealed_response FROM idempotency_keys')
    expect(rows).toHaveLength(1)
    expect(rows[0]!.sealed_response).not.toContain(first.json.data.setupToken)
    expect(rows[0]!.sealed_response).not.toContain('person1')
  })

  it('does not replay the answer of a user since deleted: the same request again creates a new user', async () => {
    const headers = { 'idempotency-key': 'create-person-1' }
    const first = await admin('POST', '/users', { body: newUser(1), headers })
    expect(first.status).toBe(201)
    expect((await admin('DELETE', `/users/${first.json.data.userId}`)).status).toBe(200)
    // A replay would hand back the erased user's address, names and id.
    const again = await admin('POST', '/users', { body: newUser(1), headers })
    expect({ status: again.status, replayed: again.headers.get('idempotent-replayed') }).toEqual({ status: 201, replayed: null })
    expect(again.json.data.userId).not.toBe(first.json.data.userId)
    expect((await admin('GET', `/users/${again.json.data.userId}`)).json.data).toMatchObject({ email: 'person1@example.com', firstName: 'Grace' })
  })

  it('refuses the same key with a different body (409), and keys of another tenant do not collide', async () => {
    const headers = { 'idempotency-key': 'k1' }
    expect((await admin('POST', '/users', { body: newUser(1), headers })).status).toBe(201)
    const other = await admin('POST', '/users', { body: newUser(2), headers })
    expect(other.status).toBe(409)
    expect(other.json.message).toBe('This Idempotency-Key was used for a different request')
    const tenantB = await createTenant(ctx.runtime, { name: 'Beta' })
    const keyB = (await createApiKey(ctx.runtime, { tenantId: tenantB.id, scope: 'admin' })).key
    expect((await admin('POST', '/users', { body: newUser(1), headers, key: keyB })).status).toBe(201)
  })

  it('answers a retry after 24 hours as a new request', async () => {
    const headers = { 'idempotency-key': 'k1' }
    expect((await admin('POST', '/users', { body: newUser(1), headers })).status).toBe(201)
    ctx.clock.advance(24 * 3600 + 1)
    const late = await admin('POST', '/users', { body: newUser(1), headers })
    expect(late.status).toBe(409)
    expect(late.json.message).toBe('A user with e-mail person1@example.com already exists in this tenant')
  })

  it('frees the key when the create fails, so a corrected retry runs', async () => {
    const headers = { 'idempotency-key': 'k1' }
    expect((await admin('POST', '/users', { body: newUser(1, { password: 'short' }), headers })).status).toBe(400)
    expect((await admin('POST', '/users', { body: newUser(1, { password: 'short' }), headers })).status).toBe(400)
    // A different body is allowed only because the failed request left no answer behind.
    expect((await admin('POST', '/users', { body: newUser(1), headers })).status).toBe(201)
  })

  it('creates one user for 20 concurrent copies of one request', async () => {
    const headers = { 'idempotency-key': 'burst' }
    const answers = await Promise.all(Array.from({ length: 20 }, () => admin('POST', '/users', { body: newUser(1), headers })))
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1)
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true)
    for (const a of answers.filter((a) => a.status === 409)) expect(a.json.message).toBe('A request with this Idempotency-Key is still in progress; retry later')
    const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.json.data.userId))
    expect(ids.size).toBe(1)
    expect(Number((await queryDatabase<{ n: number }>(ctx, 'SELECT count(*) AS n FROM users'))[0]!.n)).toBe(1)
  })

  it('refuses a malformed key with 400', async () => {
    const res = await admin('POST', '/users', { body: newUser(1), headers: { 'idempotency-key': 'x'.repeat(256) } })
    expect(res.status).toBe(400)
    expect(res.json.message).toBe('Idempotency-Key must be 1 to 255 visible ASCII characters')
  })
})

describe('GET /users', () => {
  it('pages through every user exactly once in creation order, and finds one address', async () => {
    const created: string[] = []
    for (let i = 0; i < 7; i++) created.push((await ctx.addUser()).userId)
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const res = await admin('GET', `/users?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
      expect(res.status).toBe(200)
      expect(res.json.data.items.length).toBeLessThanOrEqual(3)
      seen.push(...res.json.data.items.map((u: { userId: string }) => u.userId))
      cursor = res.json.data.nextCursor
      pages++
      // A user added mid-way shows up at the end, never twice.
      if (pages === 1) created.push((await ctx.addUser()).userId)
    } while (cursor)
    expect(seen).toEqual(created)
    expect(pages).toBe(3)

    const one = await admin('GET', '/users?email=USER2@example.com')
    expect(one.json.data).toEqual({ items: [expect.objectContaining({ email: 'user2@example.com', hasPassword: true, disabled: false })], nextCursor: null })
  })

  it('answers a bad limit or cursor with 400', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'limit=-1', 'cursor=nonsense', 'cursor=%00', 'email=not-an-address']) {
      const res = await admin('GET', `/users?${query}`)
      expect({ query, status: res.status }).toEqual({ query, status: 400 })
    }
  })
})

describe('one user', () => {
  it('GET, PATCH and DELETE a user; disabling ends their sessions at once', async () => {
    const { userId, email } = await ctx.addUser()
    const viewed = await admin('GET', `/users/${userId}`)
    expect(viewed.json.data).toMatchObject({ userId, email, hasPassword: true, disabled: false, createdAt: expect.any(String), updatedAt: expect.any(String) })

    const renamed = await admin('PATCH', `/users/${userId}`, { body: { firstName: 'Ada M.', type: 'admin' } })
    expect(renamed.json.data).toMatchObject({ firstName: 'Ada M.', type: 'admin', disabled: false })

    const cookie = (await loginFor(ctx, email)).refreshCookie!
    const disabled = await admin('PATCH', `/users/${userId}`, { body: { disabled: true } })
    expect(disabled.json.data.disabled).toBe(true)
    expect((await ctx.call('GET', '/api/v1/auth/refresh-token', { apiKey: null, cookie: `refreshToken=${cookie}` })).status).toBe(401)

    for (const body of [{}, { type: 'root' }, { firstName: '' }, { disabled: 'yes' }]) expect({ body, status: (await admin('PATCH', `/users/${userId}`, { body })).status }).toEqual({ body, status: 400 })

    expect((await admin('DELETE', `/users/${userId}`)).json).toEqual({ statusCode: 200, message: 'User deleted', data: { userId } })
    expect((await admin('GET', `/users/${userId}`)).status).toBe(404)
    expect((await admin('DELETE', `/users/${userId}`)).status).toBe(404)
  })

  it('lists and ends a user\'s sessions', async () => {
    const { userId, email } = await ctx.addUser()
    const cookie = (await loginFor(ctx, email)).refreshCookie!
    await loginFor(ctx, email)
    const listed = await admin('GET', `/users/${userId}/sessions`)
    expect(listed.json.data).toHaveLength(2)
    expect(listed.json.data.every((s: { current: boolean }) => s.current === false)).toBe(true)
    expect(JSON.stringify(listed.json)).not.toContain(cookie)
    expect((await admin('DELETE', `/users/${userId}/sessions`)).json.data).toEqual({ userId, revoked: 2 })
    expect((await ctx.call('GET', '/api/v1/auth/refresh-token', { apiKey: null, cookie: `refreshToken=${cookie}` })).status).toBe(401)
    expect((await admin('GET', `/users/${userId}/sessions`)).json.data).toEqual([])
  })

  it('invites a user without a password again, and refuses one who has a password', async () => {
    const created = await admin('POST', '/users', { body: newUser(1) })
    const invited = await admin('POST', `/users/${created.json.data.userId}/invite`)
    expect(invited.status).toBe(201)
    expect(invited.json.data).toEqual({ userId: created.json.data.userId, setupToken: expect.any(String), expiresAt: expect.any(String) })
    // The first token stopped working; the new one works.
    const old = await ctx.call('POST', '/api/v1/auth/setup-password', { headers: { authorization: `Bearer ${created.json.data.setupToken}` }, body: { password: 'another long passphrase' } })
    expect(old.status).toBe(401)
    const fresh = await ctx.call('POST', '/api/v1/auth/setup-password', { headers: { authorization: `Bearer ${invited.json.data.setupToken}` }, body: { password: 'another long passphrase' } })
    expect(fresh.status).toBe(200)
    const { userId } = await ctx.addUser()
    expect((await admin('POST', `/users/${userId}/invite`)).status).toBe(409)
  })
})

describe('tenant confinement', () => {
  it("answers every endpoint given another tenant's user with 404, and changes nothing there", async () => {
    const tenantB = await createTenant(ctx.runtime, { name: 'Beta' })
    const { user: userB } = await createUser(ctx.runtime, { tenantId: tenantB.id, email: 'b@example.com', firstName: 'Bea', lastName: 'B', password: PASSWORD })
    const cookieB = (await ctx.call('POST', '/api/v1/auth/login', { body: { email: 'b@example.com', password: PASSWORD }, apiKey: (await createApiKey(ctx.runtime, { tenantId: tenantB.id })).key })).refreshCookie!
    for (const [method, path, body] of endpoints(userB.id)) {
      const res = await admin(method, path, { body })
      expect({ method, path, status: res.status, data: res.json.data }).toEqual({ method, path, status: 404, data: null })
    }
    // B's user is as it was: same name, a live session, and in no list of A's.
    const [row] = await queryDatabase<{ first_name: string; disabled_at: number | null }>(ctx, 'SELECT first_name, disabled_at FROM users WHERE id = $1', [userB.id])
    expect(row).toEqual({ first_name: 'Bea', disabled_at: null })
    expect((await ctx.call('GET', '/api/v1/auth/refresh-token', { apiKey: null, cookie: `refreshToken=${cookieB}` })).status).toBe(201)
    expect((await admin('GET', '/users?email=b@example.com')).json.data.items).toEqual([])
    // A's audit read shows none of B's events.
    const events = (await admin('GET', '/audit?limit=1000')).json.data as Array<{ tenantId: string }>
    expect(events.length).toBeGreaterThan(0)
    expect(events.every((e) => e.tenantId === ctx.tenantId)).toBe(true)
  })
})

describe('the same shapes as the CLI', () => {
  it('answers DELETE /users/{id}/mfa and DELETE /users/{id}/sessions as users mfa-reset and sessions revoke print', async () => {
    const { userId } = await ctx.addUser()
    const authd = cliRunner(SOURCE_CLI, ctx.dir, databaseEnv(ctx))
    const cli = async (args: string[]) => (await authd(['--json', ...args, userId])).json
    expect((await admin('DELETE', `/users/${userId}/mfa`)).json.data).toEqual(await cli(['users', 'mfa-reset']))
    expect((await admin('DELETE', `/users/${userId}/sessions`)).json.data).toEqual(await cli(['sessions', 'revoke', '--user']))
  })
})

describe('404s repeat nothing of the path', () => {
  it('answers an unknown id, of any length and content, with Resource not found on every endpoint', async () => {
    const sent = `hello<script>alert(1)</script>${'x'.repeat(3000)}`
    for (const id of ['01a2b3c4-0000-7000-8000-000000000000', encodeURIComponent(sent)]) {
      // (an unknown userId in the audit query is no error: a deleted user's events are still found)
      for (const [method, path, body] of endpoints(id).filter(([, path]) => !path.startsWith('/audit'))) {
        const res = await admin(method, path, { body })
        expect({ method, path: path.slice(0, 60), status: res.status, json: res.json }).toEqual({ method, path: path.slice(0, 60), status: 404, json: { statusCode: 404, message: 'Resource not found', data: null } })
      }
    }
  })
})

describe('audit', () => {
  it('records every admin call with the API key id as its actor, readable over the API', async () => {
    const created = await admin('POST', '/users', { body: newUser(1) })
    const userId = created.json.data.userId
    await admin('GET', `/users/${userId}`)
    await admin('PATCH', `/users/${userId}`, { body: { lastName: 'H.' } })
    const res = await admin('GET', `/audit?userId=${userId}`)
    expect(res.status).toBe(200)
    expect(res.json.data.map((e: { type: string; apiKeyId: string }) => [e.type, e.apiKeyId])).toEqual([
      ['user.updated', adminKeyId],
      ['user.viewed', adminKeyId],
      ['user.created', adminKeyId],
    ])
    const reads = (await admin('GET', '/audit?type=audit.read')).json.data
    expect(reads[0]).toMatchObject({ type: 'audit.read', apiKeyId: adminKeyId, tenantId: ctx.tenantId })
    for (const query of ['since=yesterday', 'limit=0', 'limit=1001']) expect({ query, status: (await admin('GET', `/audit?${query}`)).status }).toEqual({ query, status: 400 })
  })

  it('keeps audit rows of a deleted user with the id only', async () => {
    const { userId, email } = await ctx.addUser()
    await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: 'wrong password here' }, headers: { 'user-agent': 'Firefox/140' } })
    expect((await admin('DELETE', `/users/${userId}`)).status).toBe(200)
    const rows = await queryDatabase<{ type: string; ip: string | null; user_agent: string | null; detail: string | null }>(ctx, 'SELECT type, ip, user_agent, detail FROM audit_events WHERE user_id = $1 AND type <> $2', [userId, 'user.deleted'])
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) expect({ ip: row.ip, user_agent: row.user_agent, detail: row.detail }).toEqual({ ip: null, user_agent: null, detail: null })
    const events = (await admin('GET', `/audit?userId=${userId}`)).json.data
    expect(events[0]).toMatchObject({ type: 'user.deleted', userId, apiKeyId: adminKeyId })
  })
})
