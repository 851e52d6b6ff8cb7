// Groups under the admin API and the CLI (product spec §23): flat groups of a tenant, members
// added and removed idempotently, pages of members, a user's groups in the admin API's User and
// GET /me; an admin key sees and changes only its own tenant's groups and users (another
// tenant's is a 404); a group an OpenID client admits by is neither deleted nor renamed.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createGroup } from '../../src/core/groups/groups'
import { createClient } from '../../src/core/oidc/clients'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { createUser } from '../../src/core/accounts/users'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createTestContext, databaseEnv, loginFor, queryDatabase, type TestContext } from '../helpers'

let ctx: TestContext
let adminKey: string
beforeEach(async () => {
  ctx = await createTestContext()
  adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })).key
})
afterEach(() => ctx.close())

const admin = (method: string, path: string, body?: unknown, key: string | null = adminKey) => ctx.call(method, `/api/v1/admin${path}`, { body, apiKey: key })

/** The tenant's OpenID client named `name`, admitting members of `groups` only. */
async function clientAdmitting(tenantId: string, name: string, groups: string[]) {
  const { client } = await createClient(ctx.runtime, tenantId, { name, redirectUris: ['https://app.example.com/cb'] })
  await ctx.runtime.store.oidc.updateClient(client.id, { allowedGroups: groups, updatedAt: ctx.clock.now() })
  return client
}

describe('the admin API', () => {
  it('creates, lists, shows, renames and deletes a group; a taken name is a 409', async () => {
    const created = await admin('POST', '/groups', { name: 'Admins', description: 'Who runs things' })
    expect(created.status).toBe(201)
    expect(created.json).toEqual({ statusCode: 201, message: 'Group created', data: { groupId: expect.any(String), name: 'admins', description: 'Who runs things', createdAt: expect.any(String) } })
    const group = created.json.data
    await admin('POST', '/groups', { name: 'editors' })

    const taken = await admin('POST', '/groups', { name: 'ADMINS' })
    expect({ status: taken.status, message: taken.json.message }).toEqual({ status: 409, message: 'The tenant has a group named admins' })
    expect((await admin('GET', '/groups')).json.data.map((g: { name: string }) => g.name)).toEqual(['admins', 'editors'])
    expect((await admin('GET', `/groups/${group.groupId}`)).json.data).toEqual(group)

    const renamed = await admin('PATCH', `/groups/${group.groupId}`, { name: 'ops', description: null })
    expect(renamed.json.data).toEqual({ ...group, name: 'ops', description: null })
    const clash = await admin('PATCH', `/groups/${group.groupId}`, { name: 'editors' })
    expect({ status: clash.status, message: clash.json.message }).toEqual({ status: 409, message: 'The tenant has a group named editors' })

    expect((await admin('DELETE', `/groups/${group.groupId}`)).json.data).toEqual({ groupId: group.groupId })
    expect((await admin('GET', `/groups/${group.groupId}`)).status).toBe(404)
    expect((await admin('DELETE', `/groups/${group.groupId}`)).status).toBe(404)
  })

  it('says what is wrong with a body: a bad name, a long description, an unknown field, nothing to change', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/groups', { name: '-admins' }, 'name must be 1 to 64 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit'],
      ['POST', '/groups', { name: 'a'.repeat(65) }, 'name must be 1 to 64 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit'],
      ['POST', '/groups', { name: 'admins', description: 'x'.repeat(201) }, 'description must be 1 to 200 characters'],
      ['POST', '/groups', { name: 'admins', description: 'one\ntwo' }, 'description must be a single line without control or formatting characters'],
      ['POST', '/groups', { name: 'admins', parent: 'root' }, 'Unknown field parent: this request takes name, description'],
      ['POST', '/groups', { name: 7 }, 'name must be a string'],
    ]
    for (const [method, path, body, message] of cases) {
      const res = await admin(method, path, body)
      expect({ body, status: res.status, message: res.json.message }).toEqual({ body, status: 400, message })
    }
    const long = await admin('POST', '/groups', { name: 'long', description: 'x'.repeat(200) })
    expect({ status: long.status, length: long.json.data.description.length }).toEqual({ status: 201, length: 200 })
    const { groupId } = (await admin('POST', '/groups', { name: 'admins' })).json.data
    const nothing = await admin('PATCH', `/groups/${groupId}`, {})
    expect({ status: nothing.status, message: nothing.json.message }).toEqual({ status: 400, message: 'Nothing to change: give name or description' })
    const members = await admin('PUT', `/groups/${groupId}/members/x`, { role: 'owner' })
    expect(members.status).toBe(404) // (no body taken: the unknown user is what is wrong)
  })

  it('adds and removes members idempotently, pages them, and shows them in the User, GET /users/{id}/groups and GET /me', async () => {
    const { groupId } = (await admin('POST', '/groups', { name: 'staff' })).json.data
    const admins = (await admin('POST', '/groups', { name: 'admins' })).json.data
    const users = [await ctx.addUser(), await ctx.addUser(), await ctx.addUser()]
    for (const u of users) expect((await admin('PUT', `/groups/${groupId}/members/${u.userId}`)).json.data).toEqual({ groupId, userId: u.userId, added: true })
    expect((await admin('PUT', `/groups/${groupId}/members/${users[0]!.userId}`)).json.data).toEqual({ groupId, userId: users[0]!.userId, added: false })
    await admin('PUT', `/groups/${admins.groupId}/members/${users[0]!.userId}`)

    const first = (await admin('GET', `/groups/${groupId}/members?limit=2`)).json.data
    expect(first).toEqual({ items: users.slice(0, 2).map((u) => ({ userId: u.userId, email: u.email, firstName: 'Ada', lastName: 'Lovelace' })), nextCursor: users[1]!.userId })
    const second = (await admin('GET', `/groups/${groupId}/members?limit=2&after=${first.nextCursor}`)).json.data
    expect(second).toEqual({ items: [{ userId: users[2]!.userId, email: users[2]!.email, firstName: 'Ada', lastName: 'Lovelace' }], nextCursor: null })
    const badLimit = await admin('GET', `/groups/${groupId}/members?limit=101`)
    expect({ status: badLimit.status, message: badLimit.json.message }).toEqual({ status: 400, message: 'limit must be an integer from 1 to 100' })

    expect((await admin('GET', `/users/${users[0]!.userId}`)).json.data.groups).toEqual(['admins', 'staff'])
    expect((await admin('GET', `/users/${users[0]!.userId}/groups`)).json.data.map((g: { name: string }) => g.name)).toEqual(['admins', 'staff'])
    const page = (await admin('GET', '/users')).json.data.items as Array<{ userId: string; groups: string[] }>
    expect(page.map((u) => u.groups)).toEqual([['admins', 'staff'], ['staff'], ['staff']])
    const login = await loginFor(ctx, users[0]!.email)
    const me = await ctx.call('GET', '/api/v1/auth/me', { headers: { authorization: `Bearer ${login.json.data.response.accessToken}` } })
    expect(me.json.data.groups).toEqual(['admins', 'staff'])
    // the login answer's User is the interface document's: no groups there
    expect(login.json.data.response.user).not.toHaveProperty('groups')

    expect((await admin('DELETE', `/groups/${groupId}/members/${users[0]!.userId}`)).json.data).toEqual({ groupId, userId: users[0]!.userId, removed: true })
    expect((await admin('DELETE', `/groups/${groupId}/members/${users[0]!.userId}`)).json.data).toEqual({ groupId, userId: users[0]!.userId, removed: false })
    expect((await admin('GET', `/users/${users[0]!.userId}`)).json.data.groups).toEqual(['admins'])
    // deleting a group, and erasing a user, remove their memberships
    await admin('DELETE', `/users/${users[1]!.userId}`)
    await admin('DELETE', `/groups/${admins.groupId}`)
    expect((await admin('GET', `/users/${users[0]!.userId}`)).json.data.groups).toEqual([])
    expect((await admin('GET', `/groups/${groupId}/members`)).json.data.items.map((m: { userId: string }) => m.userId)).toEqual([users[2]!.userId])
    const audit = (await admin('GET', '/audit?type=group.*')).json.data.map((e: { type: string }) => e.type)
    expect(audit).toContain('group.member_added')
    expect(audit).toContain('group.member_removed')
  })

  it("refuses to delete or rename a group an OpenID client admits by, naming the client", async () => {
    const { groupId } = (await admin('POST', '/groups', { name: 'admins' })).json.data
    const client = await clientAdmitting(ctx.tenantId, 'Grafana', ['admins'])
    const message = (change: string) => `Group admins cannot be ${change}: OpenID client Grafana (${client.id}) admits by it`
    const deleted = await admin('DELETE', `/groups/${groupId}`)
    expect({ status: deleted.status, message: deleted.json.message }).toEqual({ status: 409, message: message('deleted') })
    const renamed = await admin('PATCH', `/groups/${groupId}`, { name: 'ops' })
    expect({ status: renamed.status, message: renamed.json.message }).toEqual({ status: 409, message: message('renamed') })
    // its description may change: the name clients admit by stays
    expect((await admin('PATCH', `/groups/${groupId}`, { description: 'Grafana admins' })).status).toBe(200)
    expect((await admin('GET', `/groups/${groupId}`)).json.data.name).toBe('admins')
  })

  it("sees nothing of another tenant's groups or users (404), and refuses a client key", async () => {
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const theirs = await createGroup(ctx.runtime, { tenantId: other.id, name: 'theirs' })
    const { user: stranger } = await createUser(ctx.runtime, { tenantId: other.id, email: 'stranger@example.com', firstName: 'S', lastName: 'T', password: 'a long enough passphrase' })
    const mine = (await admin('POST', '/groups', { name: 'mine' })).json.data
    const me = await ctx.addUser()
    expect((await admin('GET', '/groups')).json.data.map((g: { name: string }) => g.name)).toEqual(['mine'])
    for (const [method, path, body] of [
      ['GET', `/groups/${theirs.id}`],
      ['PATCH', `/groups/${theirs.id}`, { name: 'taken-over' }],
      ['DELETE', `/groups/${theirs.id}`],
      ['GET', `/groups/${theirs.id}/members`],
      ['PUT', `/groups/${theirs.id}/members/${me.userId}`],
      ['DELETE', `/groups/${theirs.id}/members/${me.userId}`],
      ['PUT', `/groups/${mine.groupId}/members/${stranger.id}`],
      ['DELETE', `/groups/${mine.groupId}/members/${stranger.id}`],
      ['GET', `/users/${stranger.id}/groups`],
    ] as Array<[string, string, unknown?]>) {
      const res = await admin(method, path, body)
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 })
    }
    expect(await ctx.runtime.store.groups.get(theirs.id)).toMatchObject({ name: 'theirs' })
    expect(await ctx.runtime.store.groups.groupNamesOfUser(stranger.id)).toEqual([])
    expect(await ctx.runtime.store.groups.groupNamesOfUser(me.userId)).toEqual([])
    expect((await admin('GET', '/groups', undefined, ctx.apiKey)).status).toBe(403)
  })
})

describe('authd groups', () => {
  it('creates, lists, shows with members, updates, adds, removes and deletes; usage errors are one line and exit 2', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, databaseEnv(ctx))
    const created = await authd(['--json', 'groups', 'create', '--tenant', ctx.tenantId, '--name', 'Admins', '--description', 'Who runs things'])
    expect(created.code).toBe(0)
    expect(created.json).toEqual({ groupId: expect.any(String), name: 'admins', description: 'Who runs things', createdAt: expect.any(String) })
    const { groupId } = created.json
    const [a, b] = [await ctx.addUser(), await ctx.addUser()]

    const added = await authd(['groups', 'add', groupId, '--user', a.userId, '--user', b.userId])
    expect({ code: added.code, stdout: added.stdout.trim() }).toEqual({ code: 0, stdout: `added 2 user(s) to group ${groupId}` })
    expect((await authd(['--json', 'groups', 'add', groupId, '--user', a.userId])).json).toEqual({ groupId, added: 0 })

    const shown = await authd(['--json', 'groups', 'show', groupId])
    expect(shown.json).toEqual({ ...created.json, members: [a, b].map((u) => ({ userId: u.userId, email: u.email, firstName: 'Ada', lastName: 'Lovelace' })) })
    const text = await authd(['groups', 'show', groupId])
    expect(text.stdout).toContain('members (2):')
    expect(text.stdout).toContain(a.email)

    const user = await authd(['--json', 'users', 'show', a.userId])
    expect(user.json.groups).toEqual(['admins'])
    expect((await authd(['users', 'show', a.userId])).stdout).toMatch(/groups\n.*admins$/m)
    expect((await authd(['--json', 'users', 'list', '--tenant', ctx.tenantId])).json.items.map((u: { groups: string[] }) => u.groups)).toEqual([['admins'], ['admins']])

    expect((await authd(['--json', 'groups', 'remove', groupId, '--user', b.userId, '--user', b.userId])).json).toEqual({ groupId, removed: 1 })
    expect((await authd(['--json', 'groups', 'update', groupId, '--name', 'ops'])).json).toMatchObject({ groupId, name: 'ops' })
    expect((await authd(['--json', 'groups', 'list', '--tenant', ctx.tenantId])).json).toEqual([{ ...created.json, name: 'ops' }])
    expect((await authd(['--json', 'groups', 'delete', groupId])).json).toEqual({ groupId })
    expect((await authd(['--json', 'groups', 'list', '--tenant', ctx.tenantId])).json).toEqual([])

    for (const [args, line] of [
      [['groups', 'add', groupId], 'authd: missing required option --user (repeat it for several users)'],
      [['groups', 'update', groupId], 'authd: nothing to change: give --name or --description'],
      [['groups', 'create', '--tenant', ctx.tenantId], 'authd: missing required option --name'],
      [['groups', 'frobnicate'], "authd: unknown command 'frobnicate'"],
    ] as Array<[string[], string]>) {
      const run = await authd(args)
      expect({ args, code: run.code, first: run.stderr.split('\n')[0] }).toEqual({ args, code: 2, first: line })
    }
    const unknown = await authd(['groups', 'show', groupId])
    expect({ code: unknown.code, stderr: unknown.stderr.trim() }).toEqual({ code: 1, stderr: `authd: Group not found: ${groupId}` })
  })

  it('imports users with a groups column, all or nothing: an unknown group fails the whole import, naming it', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, databaseEnv(ctx))
    for (const name of ['admins', 'staff']) await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name })
    const file = join(ctx.dir, 'people.csv')
    writeFileSync(file, 'email,firstName,lastName,groups\nann@example.com,Ann,A,staff|Admins\nbob@example.com,Bob,B,\ncid@example.com,Cid,C,staff|nobody\n')
    const refused = await authd(['users', 'import', file, '--tenant', ctx.tenantId])
    expect({ code: refused.code, stderr: refused.stderr.trim() }).toEqual({ code: 1, stderr: 'authd: nothing imported, 1 invalid row(s): row 3: no group named nobody in the tenant' })
    expect(await queryDatabase(ctx, 'SELECT id FROM users WHERE email = $1', ['ann@example.com'])).toEqual([])

    writeFileSync(file, 'email,firstName,lastName,groups\nann@example.com,Ann,A,staff|Admins\nbob@example.com,Bob,B,\n')
    const imported = await authd(['--json', 'users', 'import', file, '--tenant', ctx.tenantId])
    expect(imported.code).toBe(0)
    expect(imported.json.created.map((c: { email: string; groups: string[] }) => [c.email, c.groups])).toEqual([['ann@example.com', ['admins', 'staff']], ['bob@example.com', []]])
    const ann = imported.json.created[0].userId
    expect((await admin('GET', `/users/${ann}`)).json.data.groups).toEqual(['admins', 'staff'])
  })
})
