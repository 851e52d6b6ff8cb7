// Access rules under the admin API and the CLI (product spec §24): ordered per tenant (an
// insert at a position moves the others down, a deletion closes the gap), each refused with a
// sentence naming what is wrong; an admin key sees and removes only its own tenant's rules
// (another tenant's is a 404); the protected domains are the operator's (the CLI), never a
// key's; a group a rule admits by is neither deleted nor renamed.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { setForwardAuthDomains } from '../../src/core/forward-auth/domains'
import { addAccessRule, MAX_RULES } from '../../src/core/forward-auth/rules'
import { createGroup } from '../../src/core/groups/groups'
import { PUBLIC_URL_SETTING } from '../../src/core/store'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createTestContext, databaseEnv, type TestContext } from '../helpers'

const AUTHD = 'http://auth.example.test'
let ctx: TestContext
let adminKey: string
beforeEach(async () => {
  ctx = await createTestContext({ AUTHD_PUBLIC_URL: AUTHD })
  adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })).key
  await setForwardAuthDomains(ctx.runtime, ctx.tenantId, ['example.test'])
})
afterEach(() => ctx.close())

const admin = (method: string, path: string, body?: unknown, key: string | null = adminKey) => ctx.call(method, `/api/v1/admin${path}`, { body, apiKey: key })
const refusal = (res: { status: number; json: { message: string } }) => ({ status: res.status, message: res.json.message })
const order = async () => ((await admin('GET', '/access-rules')).json.data as Array<{ position: number; domain: string }>).map((r) => `${r.position} ${r.domain}`)

describe('the admin API', () => {
  it('adds rules at their positions, lists them in order, shows one, and deletes one closing the gap', async () => {
    const first = await admin('POST', '/access-rules', { domain: 'app.example.test', policy: 'one_factor' })
    expect(first.status).toBe(201)
    expect(first.json).toEqual({
      statusCode: 201,
      message: 'Access rule created',
      data: { ruleId: expect.any(String), position: 1, domain: 'app.example.test', paths: [], methods: [], policy: 'one_factor', groups: [], createdAt: expect.any(String) },
    })
    expect(new Date(first.json.data.createdAt).toISOString()).toBe(first.json.data.createdAt)
    await admin('POST', '/access-rules', { domain: '*.example.test', policy: 'deny' })
    // At the top: the others move down. Domain and methods as stored (lower-case host, upper-case methods).
    const bypass = await admin('POST', '/access-rules', { domain: 'App.Example.TEST', paths: ['/public', '/health'], methods: ['get', 'HEAD'], policy: 'bypass', position: 1 })
    expect(bypass.json.data).toMatchObject({ position: 1, domain: 'app.example.test', paths: ['/public', '/health'], methods: ['GET', 'HEAD'], policy: 'bypass' })
    // Past the end: last.
    expect((await admin('POST', '/access-rules', { domain: 'wiki.example.test', policy: 'two_factor', position: 99 })).json.data.position).toBe(4)
    expect(await order()).toEqual(['1 app.example.test', '2 app.example.test', '3 *.example.test', '4 wiki.example.test'])
    const listed = (await admin('GET', '/access-rules')).json
    expect({ statusCode: listed.statusCode, message: listed.message, second: listed.data[1] }).toEqual({ statusCode: 200, message: 'Access rules', second: { ...first.json.data, position: 2 } })

    const shown = await admin('GET', `/access-rules/${bypass.json.data.ruleId}`)
    expect(shown.json).toEqual({ statusCode: 200, message: 'Access rule', data: bypass.json.data })

    const deleted = await admin('DELETE', `/access-rules/${bypass.json.data.ruleId}`)
    expect(deleted.json).toEqual({ statusCode: 200, message: 'Access rule deleted', data: { ruleId: bypass.json.data.ruleId } })
    expect(await order()).toEqual(['1 app.example.test', '2 *.example.test', '3 wiki.example.test'])
    expect(refusal(await admin('GET', `/access-rules/${bypass.json.data.ruleId}`))).toEqual({ status: 404, message: 'Resource not found' })
    expect(refusal(await admin('DELETE', `/access-rules/${bypass.json.data.ruleId}`))).toEqual({ status: 404, message: 'Resource not found' })

    const audit = (await admin('GET', '/audit?type=access_rule.*')).json.data as Array<{ type: string; apiKeyId: string | null; detail: Record<string, unknown> }>
    expect(audit.map((e) => e.type)).toEqual(['access_rule.deleted', 'access_rule.created', 'access_rule.created', 'access_rule.created', 'access_rule.created'])
    expect(audit[0]).toMatchObject({ apiKeyId: expect.any(String), detail: { ruleId: bypass.json.data.ruleId, domain: 'app.example.test', policy: 'bypass' } })
  })

  it('says what is wrong with a rule, and adds none', async () => {
    await admin('POST', '/groups', { name: 'admins' })
    const rule = { domain: 'app.example.test', policy: 'one_factor' }
    const cases: Array<[unknown, string]> = [
      [{ ...rule, policy: 'allow' }, 'policy must be one of bypass, one_factor, two_factor, deny'],
      [{ domain: 'app.example.test' }, 'policy is required and must be a string'],
      [{ ...rule, methods: ['GET', 'FETCH'] }, 'methods must be HTTP methods (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, CONNECT, TRACE): "FETCH"'],
      [{ ...rule, groups: ['admins', 'ghosts'] }, 'No group named ghosts in the tenant'],
      [{ ...rule, policy: 'bypass', groups: ['admins'] }, 'groups apply to one_factor and two_factor rules, not to bypass'],
      [{ ...rule, policy: 'deny', groups: ['admins'] }, 'groups apply to one_factor and two_factor rules, not to deny'],
      [{ ...rule, domain: 'app.example.org' }, "app.example.org is not inside the tenant's forward-auth domains (example.test)"],
      [{ ...rule, domain: '*.example.org' }, "*.example.org is not inside the tenant's forward-auth domains (example.test)"],
      [{ ...rule, domain: 'http://app.example.test/' }, '"http://app.example.test/" is not a host or *.domain: give a DNS name such as example.com'],
      [{ ...rule, domain: '' }, 'domain is required: a host such as app.example.com, or *.example.com for every host under a domain'],
      [{ ...rule, paths: ['admin'] }, 'paths must be path prefixes starting with / (at most 200 characters, no query): "admin"'],
      [{ ...rule, paths: '/admin' }, 'paths must be an array'],
      [{ ...rule, position: 0 }, `position must be a whole number from 1 (first) to ${MAX_RULES}`],
      [{ ...rule, position: MAX_RULES + 1 }, `position must be a whole number from 1 (first) to ${MAX_RULES}`],
      [{ ...rule, position: 1.5 }, `position must be a whole number from 1 (first) to ${MAX_RULES}`],
      [{ ...rule, position: '2' }, 'position must be a number'],
      [{ ...rule, priority: 1 }, 'Unknown field priority: this request takes domain, paths, methods, policy, groups, position'],
    ]
    for (const [body, message] of cases) {
      const res = await admin('POST', '/access-rules', body)
      expect({ body, ...refusal(res), data: res.json.data }).toEqual({ body, status: 400, message, data: null })
    }
    expect((await admin('GET', '/access-rules')).json.data).toEqual([])
    expect((await admin('GET', '/audit?type=access_rule.*')).json.data).toEqual([])
  })

  it('refuses a rule while the tenant protects no domain, and says who adds one', async () => {
    await setForwardAuthDomains(ctx.runtime, ctx.tenantId, [])
    const res = await admin('POST', '/access-rules', { domain: 'app.example.test', policy: 'one_factor' })
    expect(refusal(res)).toEqual({ status: 400, message: 'The tenant protects no domain yet: the operator adds one with authd tenants update --forward-auth-domain' })
  })

  it(`refuses a ${MAX_RULES + 1}st rule with a 409, writing nothing`, async () => {
    // (straight into the store, several at a time: 500 requests would take a while)
    const insert = (i: number) => ctx.runtime.store.accessRules.insert({ id: Bun.randomUUIDv7(), tenantId: ctx.tenantId, domain: `app${i}.example.test`, paths: [], methods: [], policy: 'one_factor', groups: [], createdAt: ctx.clock.now() }, null, MAX_RULES)
    for (let i = 0; i < MAX_RULES; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => insert(i + j)))
    const res = await admin('POST', '/access-rules', { domain: 'one.more.example.test', policy: 'deny', position: 1 })
    expect(refusal(res)).toEqual({ status: 409, message: `The tenant has ${MAX_RULES} access rules, the most it may have` })
    const rules = (await admin('GET', '/access-rules')).json.data as Array<{ position: number; domain: string }>
    expect({ count: rules.length, positions: rules.every((r, i) => r.position === i + 1), refused: rules.some((r) => r.domain === 'one.more.example.test') }).toEqual({ count: MAX_RULES, positions: true, refused: false })
  })

  it("sees nothing of another tenant's rules (404), changes none of them, and refuses a client key", async () => {
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    await setForwardAuthDomains(ctx.runtime, other.id, ['example.test'])
    const theirs = await addAccessRule(ctx.runtime, other.id, { domain: 'theirs.example.test', policy: 'bypass' })
    const theirKey = (await createApiKey(ctx.runtime, { tenantId: other.id, name: 'theirs', scope: 'admin' })).key
    const mine = (await admin('POST', '/access-rules', { domain: 'mine.example.test', policy: 'one_factor' })).json.data

    expect(await order()).toEqual(['1 mine.example.test'])
    for (const method of ['GET', 'DELETE']) {
      const res = await admin(method, `/access-rules/${theirs.id}`)
      expect({ method, ...refusal(res) }).toEqual({ method, status: 404, message: 'Resource not found' })
    }
    // Theirs is still there, first of their tenant's; and their key sees theirs only, not mine.
    expect((await admin('GET', '/access-rules', undefined, theirKey)).json.data.map((r: { ruleId: string; position: number }) => [r.ruleId, r.position])).toEqual([[theirs.id, 1]])
    expect((await admin('GET', `/access-rules/${mine.ruleId}`, undefined, theirKey)).status).toBe(404)
    expect((await admin('DELETE', `/access-rules/${mine.ruleId}`, undefined, theirKey)).status).toBe(404)
    expect((await admin('GET', `/access-rules/${mine.ruleId}`)).json.data).toEqual(mine)
    expect(refusal(await admin('GET', '/access-rules', undefined, ctx.apiKey))).toEqual({ status: 403, message: 'API key lacks the admin scope' })
    expect((await admin('POST', '/access-rules', { domain: 'x.example.test', policy: 'deny' }, ctx.apiKey)).status).toBe(403)
  })

  it("shows the tenant's forward-auth domains and cookie domain, and refuses to set them (the operator's, with the CLI)", async () => {
    const shown = (await admin('GET', '/tenant')).json.data
    expect({ forwardAuthDomains: shown.forwardAuthDomains, cookieDomain: shown.cookieDomain }).toEqual({ forwardAuthDomains: ['example.test'], cookieDomain: 'example.test' })
    for (const body of [{ forwardAuthDomains: ['evil.example'] }, { displayName: 'Acme', forwardAuthDomains: [] }]) {
      const res = await admin('PATCH', '/tenant', body)
      expect({ body, ...refusal(res) }).toEqual({ body, status: 400, message: 'forwardAuthDomains is set by the operator (authd tenants update --forward-auth-domain), not through the admin API' })
    }
    expect((await admin('GET', '/tenant')).json.data).toEqual(shown)
    expect((await admin('PATCH', '/tenant', { displayName: 'Acme Corp' })).json.data).toMatchObject({ displayName: 'Acme Corp', forwardAuthDomains: ['example.test'] })
  })

  it('refuses to delete or rename a group an access rule admits by, naming the rule; frees it once the rule is gone', async () => {
    const { groupId } = (await admin('POST', '/groups', { name: 'admins' })).json.data
    await admin('POST', '/access-rules', { domain: 'open.example.test', policy: 'bypass' })
    const rule = (await admin('POST', '/access-rules', { domain: 'grafana.example.test', policy: 'two_factor', groups: ['Admins'] })).json.data
    expect(rule.groups).toEqual(['admins'])
    const message = (change: string) => `Group admins cannot be ${change}: access rule 2 for grafana.example.test (${rule.ruleId}) admits by it`
    expect(refusal(await admin('DELETE', `/groups/${groupId}`))).toEqual({ status: 409, message: message('deleted') })
    expect(refusal(await admin('PATCH', `/groups/${groupId}`, { name: 'ops' }))).toEqual({ status: 409, message: message('renamed') })
    expect((await admin('GET', `/groups/${groupId}`)).json.data.name).toBe('admins')
    await admin('DELETE', `/access-rules/${rule.ruleId}`)
    expect((await admin('PATCH', `/groups/${groupId}`, { name: 'ops' })).json.data.name).toBe('ops')
  })
})

describe('authd access-rules', () => {
  it('adds (repeated and comma-separated lists, a position), lists in order as a table or JSON, and removes', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, { ...databaseEnv(ctx), AUTHD_PUBLIC_URL: AUTHD })
    for (const name of ['admins', 'ops']) await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name })
    const added = await authd(['--json', 'access-rules', 'add', '--tenant', ctx.tenantId, '--domain', 'app.example.test', '--path', '/admin,/ops', '--path', '/metrics', '--method', 'get,post', '--policy', 'one_factor', '--groups', 'admins', '--groups', 'ops'])
    expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: '' })
    expect(added.json).toEqual({ ruleId: expect.any(String), position: 1, domain: 'app.example.test', paths: ['/admin', '/ops', '/metrics'], methods: ['GET', 'POST'], policy: 'one_factor', groups: ['admins', 'ops'], createdAt: expect.any(String) })
    const top = await authd(['access-rules', 'add', '--tenant', ctx.tenantId, '--domain', '*.example.test', '--policy', 'bypass', '--position', '1'])
    const topId = /\(([0-9a-f-]{36})\)/.exec(top.stdout)![1]!
    expect({ code: top.code, stdout: top.stdout }).toEqual({ code: 0, stdout: `added access rule 1 (${topId}) in tenant ${ctx.tenantId}: *.example.test: bypass\n` })

    const listed = await authd(['--json', 'access-rules', 'list', '--tenant', ctx.tenantId])
    expect(listed.json).toEqual([
      { ruleId: topId, position: 1, domain: '*.example.test', paths: [], methods: [], policy: 'bypass', groups: [], createdAt: expect.any(String) },
      { ...added.json, position: 2 },
    ])
    // (the admin API shows the same rules in the same shape)
    expect((await admin('GET', '/access-rules')).json.data).toEqual(listed.json)
    const table = await authd(['access-rules', 'list', '--tenant', ctx.tenantId])
    expect(table.stdout.split('\n').map((line) => line.split(/\s{2,}/))).toEqual([
      ['position', 'ruleId', 'domain', 'paths', 'methods', 'policy', 'groups'],
      ['1', topId, '*.example.test', '*', '*', 'bypass', '-'],
      ['2', added.json.ruleId, 'app.example.test', '/admin,/ops,/metrics', 'GET,POST', 'one_factor', 'admins,ops'],
      [''],
    ])

    const removed = await authd(['--json', 'access-rules', 'remove', topId])
    expect({ code: removed.code, json: removed.json }).toEqual({ code: 0, json: { ruleId: topId } })
    expect((await authd(['--json', 'access-rules', 'list', '--tenant', ctx.tenantId])).json).toEqual([{ ...added.json, position: 1 }])
    const text = await authd(['access-rules', 'remove', added.json.ruleId])
    expect(text.stdout).toBe(`removed access rule 1 (${added.json.ruleId}): app.example.test /admin, /ops, /metrics (GET, POST): one_factor for members of admins, ops\n`)
    expect((await authd(['access-rules', 'list', '--tenant', ctx.tenantId])).stdout).toBe('(none)\n')
  })

  it('says a usage error in one line with exit 2, and what the domain refuses in one line with exit 1', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, { ...databaseEnv(ctx), AUTHD_PUBLIC_URL: AUTHD })
    const add = ['access-rules', 'add', '--tenant', ctx.tenantId, '--domain', 'app.example.test']
    for (const [args, lines] of [
      [['access-rules', 'add', '--domain', 'app.example.test', '--policy', 'deny'], ['authd: missing required option --tenant']],
      [add, ['authd: missing required option --policy']],
      [[...add, '--policy', 'one_factor', '--groups', ''], ["authd: --groups '' names nothing: leave --groups out for a rule that admits any signed-in user"]],
      [[...add, '--policy', 'bypass', '--path', ','], ["authd: --path '' names nothing: leave --path out for a rule on every path"]],
      [[...add, '--policy', 'deny', '--position', '0'], ['authd: --position must be an integer from 1 to 500 (got "0")', 'run authd access-rules add --help for usage']],
      [[...add, '--policy', 'deny', '--position', 'first'], ['authd: --position must be an integer from 1 to 500 (got "first")', 'run authd access-rules add --help for usage']],
      [['access-rules', 'remove'], ["authd: missing required argument 'ruleId'", 'run authd access-rules remove --help for usage']],
      [['access-rules'], ['authd: missing command: give one of add, list, remove', 'run authd access-rules --help for usage']],
    ] as Array<[string[], string[]]>) {
      const run = await authd(args)
      expect({ args, code: run.code, stderr: run.stderr, stdout: run.stdout }).toEqual({ args, code: 2, stderr: lines.map((line) => `${line}\n`).join(''), stdout: '' })
    }
    for (const [args, line] of [
      [[...add, '--policy', 'allow'], 'policy must be one of bypass, one_factor, two_factor, deny'],
      [[...add, '--policy', 'one_factor', '--groups', 'ghosts'], 'No group named ghosts in the tenant'],
      [['access-rules', 'add', '--tenant', ctx.tenantId, '--domain', 'app.example.org', '--policy', 'deny'], "app.example.org is not inside the tenant's forward-auth domains (example.test)"],
      [['access-rules', 'list', '--tenant', 'nope'], 'Tenant not found: nope'],
      [['access-rules', 'remove', 'nope'], 'Access rule not found: nope'],
    ] as Array<[string[], string]>) {
      const run = await authd(args)
      expect({ args, code: run.code, stderr: run.stderr, stdout: run.stdout }).toEqual({ args, code: 1, stderr: `authd: ${line}\n`, stdout: '' })
    }
    expect((await admin('GET', '/access-rules')).json.data).toEqual([])
  })
})

describe('authd tenants update --forward-auth-domain', () => {
  it('sets the domains (repeatable and comma-separated, replacing the list; \'\' clears), and show and update say them with the cookie domain', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, { ...databaseEnv(ctx), AUTHD_PUBLIC_URL: 'https://auth.example.com' })
    const set = await authd(['--json', 'tenants', 'update', ctx.tenantId, '--forward-auth-domain', 'Example.com,apps.example.com', '--forward-auth-domain', '.intra.example.com'])
    expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: '' })
    expect(set.json).toMatchObject({ tenantId: ctx.tenantId, forwardAuthDomains: ['example.com', 'apps.example.com', 'intra.example.com'], cookieDomain: 'example.com' })
    expect((await authd(['--json', 'tenants', 'show', ctx.tenantId])).json).toEqual(set.json)
    expect((await authd(['--json', 'tenants', 'list'])).json.map((t: { forwardAuthDomains: string[] }) => t.forwardAuthDomains)).toEqual([set.json.forwardAuthDomains])
    expect((await authd(['tenants', 'show', ctx.tenantId])).stdout).toContain('\nforward authentication for example.com, apps.example.com, intra.example.com: session cookie for example.com\n')
    const human = await authd(['tenants', 'update', ctx.tenantId, '--forward-auth-domain', 'example.com'])
    expect(human.stdout).toEndWith(', forward authentication for example.com: session cookie for example.com\n')
    // Each refused, naming why; the list stays as it was.
    for (const [domain, line] of [
      ['example.org', "authd's public URL (https://auth.example.com) must be on a host inside a forward-auth domain, so that its session cookie reaches the applications: set AUTHD_PUBLIC_URL to an address such as https://auth.example.org"],
      ['example.com,example.org', "example.org is outside example.com, the domain of authd's host auth.example.com: a browser would never send it authd's session cookie"],
      ['127.0.0.1', '"127.0.0.1" is not a forward-auth domain: give a DNS name such as example.com'],
    ]) {
      const refused = await authd(['tenants', 'update', ctx.tenantId, '--forward-auth-domain', domain!])
      expect({ domain, code: refused.code, stderr: refused.stderr, stdout: refused.stdout }).toEqual({ domain, code: 1, stderr: `authd: ${line}\n`, stdout: '' })
    }
    expect((await authd(['--json', 'tenants', 'show', ctx.tenantId])).json.forwardAuthDomains).toEqual(['example.com'])
    const cleared = await authd(['--json', 'tenants', 'update', ctx.tenantId, '--forward-auth-domain', ''])
    expect({ forwardAuthDomains: cleared.json.forwardAuthDomains, cookieDomain: cleared.json.cookieDomain }).toEqual({ forwardAuthDomains: [], cookieDomain: null })
    expect((await authd(['tenants', 'show', ctx.tenantId])).stdout).toEndWith('\nforward authentication off (no --forward-auth-domain)\n')
    // The admin API shows what the operator set.
    expect((await admin('GET', '/tenant')).json.data.forwardAuthDomains).toEqual([])
  })

  it('checks the domains against the public URL authd serve recorded when AUTHD_PUBLIC_URL is unset, and says so', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, databaseEnv(ctx))
    const assumed = (url: string, why: string) => `authd: AUTHD_PUBLIC_URL is not set: links assume ${url}, ${why}; set AUTHD_PUBLIC_URL to the address people reach authd at\n`
    // No server has recorded one: the CLI's default (127.0.0.1) is inside no domain.
    const before = await authd(['tenants', 'update', ctx.tenantId, '--forward-auth-domain', 'example.test'])
    expect({ code: before.code, stderr: before.stderr }).toEqual({
      code: 1,
      stderr: "authd: authd's public URL (http://127.0.0.1:3000) must be on a host inside a forward-auth domain, so that its session cookie reaches the applications: set AUTHD_PUBLIC_URL to an address such as https://auth.example.test\n",
    })
    await ctx.runtime.store.serverSettings.set(PUBLIC_URL_SETTING, 'https://login.corp.example.net', ctx.clock.now())
    const after = await authd(['--json', 'tenants', 'update', ctx.tenantId, '--forward-auth-domain', 'corp.example.net'])
    expect({ code: after.code, stderr: after.stderr }).toEqual({ code: 0, stderr: assumed('https://login.corp.example.net', 'the address authd serve recorded at its last start') })
    expect(after.json).toMatchObject({ forwardAuthDomains: ['corp.example.net'], cookieDomain: 'corp.example.net', pagesUrl: `https://login.corp.example.net/t/${ctx.tenantId}` })
  })
})
