// A client's allowed groups and groups claim (product spec §23) through the admin API
// (/api/v1/admin/clients: allowedGroups, groupsClaim) and the CLI (--allowed-groups,
// --groups-claim): names of the tenant's own groups only (an unknown one is a 400 naming it,
// another tenant's group is as unknown), sorted, cleared with null or "".
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createGroup } from '../../src/core/groups/groups'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createTestContext, databaseEnv, type TestContext } from '../helpers'

let ctx: TestContext
let adminKey: string
beforeEach(async () => {
  ctx = await createTestContext()
  adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })).key
  for (const name of ['staff', 'admins']) await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name })
})
afterEach(() => ctx.close())

const admin = (method: string, path: string, body?: unknown) => ctx.call(method, `/api/v1/admin${path}`, { apiKey: adminKey, body })

describe('/api/v1/admin/clients: allowedGroups and groupsClaim', () => {
  it('takes names of the tenant’s groups (sorted, any case), null for anyone, and scope or always', async () => {
    const created = await admin('POST', '/clients', { name: 'Grafana', redirectUris: ['https://grafana.example/cb'], allowedGroups: ['Staff', 'admins', 'staff'], groupsClaim: 'always' })
    expect(created.status).toBe(201)
    const client = created.json.data.client
    expect(client).toMatchObject({ allowedGroups: ['admins', 'staff'], groupsClaim: 'always' })
    const plain = (await admin('POST', '/clients', { name: 'Wiki', redirectUris: ['https://wiki.example/cb'] })).json.data.client
    expect(plain).toMatchObject({ allowedGroups: null, groupsClaim: 'scope' })
    expect((await admin('PATCH', `/clients/${client.clientId}`, { allowedGroups: ['admins'], groupsClaim: 'scope' })).json.data).toMatchObject({ allowedGroups: ['admins'], groupsClaim: 'scope' })
    expect((await admin('PATCH', `/clients/${client.clientId}`, { allowedGroups: null })).json.data.allowedGroups).toBeNull()
    expect((await admin('GET', `/clients/${client.clientId}`)).json.data).toMatchObject({ allowedGroups: null, groupsClaim: 'scope' })
  })

  it('refuses an unknown group (naming it), another tenant’s group, an empty list and a wrong groupsClaim, changing nothing', async () => {
    const beta = await createTenant(ctx.runtime, { name: 'Beta' })
    await createGroup(ctx.runtime, { tenantId: beta.id, name: 'beta-only' })
    const client = (await admin('POST', '/clients', { name: 'Wiki', redirectUris: ['https://wiki.example/cb'], allowedGroups: ['staff'] })).json.data.client
    for (const [allowedGroups, message] of [
      [['admins', 'ghosts'], 'No group named ghosts in the tenant'],
      [['beta-only'], 'No group named beta-only in the tenant'],
      [[], expect.stringContaining('allowedGroups')],
      ['staff', expect.stringContaining('allowedGroups')],
      [[1], expect.stringContaining('allowedGroups')],
    ] as const) {
      for (const [method, path] of [['POST', '/clients'], ['PATCH', `/clients/${client.clientId}`]] as const) {
        const refused = await admin(method, path, { name: 'Bad', redirectUris: ['https://bad.example/cb'], allowedGroups })
        expect({ status: refused.status, message: refused.json.message }).toEqual({ status: 400, message })
      }
    }
    const wrongClaim = await admin('PATCH', `/clients/${client.clientId}`, { groupsClaim: 'never' })
    expect({ status: wrongClaim.status, message: wrongClaim.json.message }).toEqual({ status: 400, message: 'groupsClaim must be scope or always' })
    expect((await admin('GET', `/clients/${client.clientId}`)).json.data).toMatchObject({ name: 'Wiki', allowedGroups: ['staff'], groupsClaim: 'scope' })
    expect((await admin('GET', '/clients')).json.data).toHaveLength(1)
  })
})

describe('authd clients --allowed-groups, --groups-claim', () => {
  it('sets, shows and clears them; an unknown group or claim mode is refused', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, { ...databaseEnv(ctx), AUTHD_PUBLIC_URL: ctx.runtime.config.publicUrl })
    const created = await authd(['clients', 'create', '--tenant', ctx.tenantId, '--name', 'Grafana', '--redirect-uri', 'https://grafana.example/cb', '--allowed-groups', 'staff,admins', '--groups-claim', 'always'])
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' })
    expect(created.stdout).toContain('only for members of admins, staff, groups claim always')
    const clientId = /\(([0-9a-f-]{36})\)/.exec(created.stdout)![1]!
    expect((await authd(['clients', 'list', '--tenant', ctx.tenantId])).stdout).toMatch(new RegExp(`${clientId}.*admins,staff`))
    expect((await authd(['--json', 'clients', 'update', clientId, '--allowed-groups', 'admins', '--groups-claim', 'scope'])).json).toMatchObject({ allowedGroups: ['admins'], groupsClaim: 'scope' })
    expect((await authd(['--json', 'clients', 'update', clientId, '--allowed-groups', ''])).json.allowedGroups).toBeNull()
    const unknown = await authd(['clients', 'update', clientId, '--allowed-groups', 'admins,ghosts'])
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({ code: 1, stderr: 'authd: No group named ghosts in the tenant\n' })
    const wrong = await authd(['clients', 'update', clientId, '--groups-claim', 'never'])
    expect({ code: wrong.code, stderr: wrong.stderr }).toEqual({ code: 2, stderr: 'authd: --groups-claim must be scope or always, not "never"\n' })
    // An empty list at creation (an unset variable in a script) would make an open client.
    const empty = await authd(['clients', 'create', '--tenant', ctx.tenantId, '--name', 'Open', '--redirect-uri', 'https://open.example/cb', '--allowed-groups', ''])
    expect({ code: empty.code, stderr: empty.stderr }).toEqual({ code: 2, stderr: 'authd: --allowed-groups must name at least one group (leave it out for a client anyone may use)\n' })
  })
})
