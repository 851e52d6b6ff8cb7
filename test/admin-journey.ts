// The admin API through the compiled binary, on whichever engine the caller set up: an admin
// key made with the CLI, users managed over HTTP, and the CLI reading the same things back in
// the same shapes (the two share one domain function per operation).
import { expect } from 'bun:test'
import type { cliRunner } from './cli-runner'
import { toResult } from './helpers'

export async function adminJourney(authd: ReturnType<typeof cliRunner>, url: string, tenantId: string) {
  const adminKey = (await authd(['--json', 'api-keys', 'create', '--tenant', tenantId, '--name', 'backend', '--scope', 'admin'])).json
  expect(adminKey.scope).toBe('admin')
  const admin = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}/api/v1/admin${path}`, {
      method,
      headers: { 'x-api-key': adminKey.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(toResult)

  const body = { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', password: 'a long enough passphrase' }
  const created = await admin('POST', '/users', body, { 'idempotency-key': 'grace-1' })
  expect(created.status).toBe(201)
  const retried = await admin('POST', '/users', body, { 'idempotency-key': 'grace-1' })
  expect({ status: retried.status, replayed: retried.headers.get('idempotent-replayed'), data: retried.json.data }).toEqual({ status: 201, replayed: 'true', data: created.json.data })
  const userId = created.json.data.userId as string

  // The same user, the same shape, over HTTP and from the CLI.
  const viewed = await admin('GET', `/users/${userId}`)
  const identities = await admin('GET', `/users/${userId}/identities`)
  // (`users show` is GET /users/ID with the user's upstream identities, GET /users/ID/identities)
  expect((await authd(['--json', 'users', 'show', userId])).json).toEqual({ ...viewed.json.data, identities: identities.json.data })
  const page = await admin('GET', '/users?limit=100')
  expect((await authd(['--json', 'users', 'list', '--tenant', tenantId])).json).toEqual(page.json.data)
  expect(page.json.data.items.map((u: { email: string }) => u.email)).toContain('grace@example.com')

  const login = await fetch(`${url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': adminKey.key, 'user-agent': 'journey' },
    body: JSON.stringify({ email: body.email, password: body.password }),
  }).then(toResult)
  expect(login.status).toBe(201)
  const sessions = await admin('GET', `/users/${userId}/sessions`)
  expect(sessions.json.data.map((s: { userAgent: string }) => s.userAgent)).toEqual(['journey'])
  expect((await authd(['--json', 'sessions', 'list', '--user', userId])).json).toEqual(sessions.json.data)

  expect((await admin('DELETE', `/users/${userId}`)).json).toEqual({ statusCode: 200, message: 'User deleted', data: { userId } })
  expect((await fetch(`${url}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${login.refreshCookie}` } })).status).toBe(401)
  // `authd audit` shows the admin calls with the key as their actor.
  const events = (await authd(['--json', 'audit', '--user', userId])).json as Array<{ type: string; apiKeyId: string | null }>
  expect(events[0]).toMatchObject({ type: 'user.deleted', apiKeyId: adminKey.keyId })
  expect(events.filter((e) => e.type === 'user.created')).toEqual([expect.objectContaining({ apiKeyId: adminKey.keyId })])
  // A client key is refused; the CLI's users list no longer has the address.
  const clientKey = (await authd(['--json', 'api-keys', 'create', '--tenant', tenantId])).json.key
  const refused = await fetch(`${url}/api/v1/admin/users`, { headers: { 'x-api-key': clientKey } }).then(toResult)
  expect(refused.json).toEqual({ statusCode: 403, message: 'API key lacks the admin scope', data: null })
  expect(JSON.stringify((await authd(['--json', 'users', 'list', '--tenant', tenantId])).json)).not.toContain('grace@example.com')
}
