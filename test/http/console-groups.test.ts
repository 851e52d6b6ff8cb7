// The admin console's groups and access rules (product spec §27, §23, §24), as a browser without
// JavaScript uses them: an admin's journey through both sections, another tenant's ids as
// unknown ones, step-up before a change, a bad input said on its form (never a 500), and each
// console action the same stored change and the same audit event as its admin API twin.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { setForwardAuthDomains } from '../../src/core/forward-auth/domains'
import { addAccessRule } from '../../src/core/forward-auth/rules'
import { addMembers, createGroup } from '../../src/core/groups/groups'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { createUser } from '../../src/core/accounts/users'
import { PASSWORD, type TestContext } from '../helpers'
import { consoleWorld, FROM_AUTHD, signInAdmin, submitPairs as sendPairs } from '../console-journey'
import { fieldError, formOn, noticeText, PageBrowser, problemText, type PageAnswer } from '../pages'

let ctx: TestContext
let browser: PageBrowser
let base: string
let admin: { userId: string; email: string }
beforeEach(async () => {
  ;({ ctx, admin, browser, base } = await consoleWorld())
  await setForwardAuthDomains(ctx.runtime, ctx.tenantId, ['example.com'])
})
afterEach(() => ctx.close())

const adminIn = () => signInAdmin(ctx, browser, base, admin.email)
const submitPairs = (page: PageAnswer, action: string, pairs: [string, string][]) => sendPairs(browser, page, action, pairs)

const groupIdOf = async (tenantId: string, name: string) => (await ctx.runtime.store.groups.findByNames(tenantId, [name]))[0]!.id
const events = async (tenantId: string) => (await ctx.runtime.store.audit.query({ tenantId })).filter((e) => e.type.startsWith('group.') || e.type.startsWith('access_rule.'))

describe('the console’s groups', () => {
  it('lists, creates, adds and removes members by address, renames and deletes with the name typed, each audited with the admin as actor', async () => {
    await adminIn()
    const ada = await ctx.addUser({ email: 'ada@example.com' })
    const empty = await browser.get(`${base}/admin/groups`)
    expect(empty.status).toBe(200)
    expect(empty.html).toContain('The tenant has no groups yet.')
    expect(empty.html).toContain('<h1>Groups</h1>')

    const created = await browser.submit(empty, '/admin/groups', { name: 'Staff', description: 'Everyone on the payroll' }, FROM_AUTHD)
    expect(created.status).toBe(303)
    const groupId = await groupIdOf(ctx.tenantId, 'staff')
    expect(created.location).toBe(`${base}/admin/groups/${groupId}?done=created`)
    let page = await browser.get(created.location!)
    expect(noticeText(page.html)).toBe('The group was created.')
    expect(page.html).toContain('<h1>Group staff</h1>')
    expect(page.html).toContain('The group has no members.')
    expect((await browser.get(`${base}/admin/groups`)).html).toContain(`<a href="${base}/admin/groups/${groupId}">staff</a>`)

    const added = await browser.submit(page, `/admin/groups/${groupId}/members`, { email: ' ADA@example.com' }, FROM_AUTHD)
    expect(added.location).toBe(`${base}/admin/groups/${groupId}?done=added`)
    page = await browser.get(added.location!)
    expect(page.html).toContain(`<a href="${base}/admin/users/${ada.userId}">ada@example.com</a>`)
    expect((await ctx.runtime.store.groups.groupNamesOfUser(ada.userId))).toEqual(['staff'])
    // Twice: no error, said so.
    expect((await browser.submit(page, `/admin/groups/${groupId}/members`, { email: 'ada@example.com' }, FROM_AUTHD)).location).toBe(`${base}/admin/groups/${groupId}?done=already`)
    // The user's page shows the group.
    expect((await browser.get(`${base}/admin/users/${ada.userId}`)).html).toContain('staff')

    const removed = await browser.submit(page, `/admin/groups/${groupId}/members/${ada.userId}/remove`, {}, FROM_AUTHD)
    expect(removed.location).toBe(`${base}/admin/groups/${groupId}?done=removed`)
    expect(await ctx.runtime.store.groups.groupNamesOfUser(ada.userId)).toEqual([])

    const renamed = await browser.submit(page, `/admin/groups/${groupId}/rename`, { name: 'team', description: '' }, FROM_AUTHD)
    expect(renamed.location).toBe(`${base}/admin/groups/${groupId}?done=renamed`)
    expect(await ctx.runtime.store.groups.get(groupId)).toMatchObject({ name: 'team', description: null })
    page = await browser.get(renamed.location!)

    const mistyped = await browser.submit(page, `/admin/groups/${groupId}/delete`, { confirm_name: 'staff' }, FROM_AUTHD)
    expect(mistyped.status).toBe(400)
    expect(fieldError(mistyped.html, 'confirm_name')).toBe('Type the group’s name exactly to delete it.')
    expect(await ctx.runtime.store.groups.get(groupId)).not.toBeNull()
    const deleted = await browser.submit(page, `/admin/groups/${groupId}/delete`, { confirm_name: 'Team' }, FROM_AUTHD)
    expect(deleted.location).toBe(`${base}/admin/groups?done=deleted`)
    expect(await ctx.runtime.store.groups.get(groupId)).toBeNull()

    const audited = await events(ctx.tenantId)
    expect(audited.map((e) => [e.type, e.actorUserId])).toEqual([
      ['group.deleted', admin.userId],
      ['group.updated', admin.userId],
      ['group.member_removed', admin.userId],
      ['group.member_added', admin.userId],
      ['group.created', admin.userId],
    ])
  })

  it('says a bad input on its form with a 4xx: an empty or malformed name, a taken one, an unknown or malformed address, a group still in use', async () => {
    await adminIn()
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'staff' })
    const list = await browser.get(`${base}/admin/groups`)
    const blank = await browser.submit(list, '/admin/groups', { name: '  ', description: 'x' }, FROM_AUTHD)
    expect({ status: blank.status, error: fieldError(blank.html, 'name') }).toEqual({ status: 400, error: 'Fill in this field.' })
    const malformed = await browser.submit(list, '/admin/groups', { name: 'no spaces please' }, FROM_AUTHD)
    expect(malformed.status).toBe(400)
    expect(fieldError(malformed.html, 'name')).toContain('name must be 1 to 64 characters')
    expect(malformed.html).toContain('value="no spaces please"')
    const taken = await browser.submit(list, '/admin/groups', { name: 'STAFF' }, FROM_AUTHD)
    expect(taken.status).toBe(409)
    expect(problemText(taken.html)).toContain('The tenant has a group named staff')

    const groupId = await groupIdOf(ctx.tenantId, 'staff')
    const page = await browser.get(`${base}/admin/groups/${groupId}`)
    const unknown = await browser.submit(page, `/admin/groups/${groupId}/members`, { email: 'nobody@example.com' }, FROM_AUTHD)
    expect({ status: unknown.status, error: fieldError(unknown.html, 'email') }).toEqual({ status: 400, error: 'No user of this tenant has this address.' })
    const notAnAddress = await browser.submit(page, `/admin/groups/${groupId}/members`, { email: 'nobody' }, FROM_AUTHD)
    expect({ status: notAnAddress.status, error: fieldError(notAnAddress.html, 'email') }).toEqual({ status: 400, error: 'Enter an e-mail address such as name@example.com.' })
    // A user of another tenant with that address is as unknown as nobody.
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    await createUser(ctx.runtime, { tenantId: other.id, email: 'stranger@example.com', firstName: 'S', lastName: 'T' })
    expect(fieldError((await browser.submit(page, `/admin/groups/${groupId}/members`, { email: 'stranger@example.com' }, FROM_AUTHD)).html, 'email')).toBe('No user of this tenant has this address.')

    // A rule admits by it: neither renamed nor deleted, the domain's reason on the form.
    await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.com', policy: 'one_factor', groups: ['staff'] })
    const rename = await browser.submit(page, `/admin/groups/${groupId}/rename`, { name: 'team', description: '' }, FROM_AUTHD)
    expect(rename.status).toBe(409)
    expect(problemText(rename.html)).toContain('cannot be renamed')
    const remove = await browser.submit(page, `/admin/groups/${groupId}/delete`, { confirm_name: 'staff' }, FROM_AUTHD)
    expect(remove.status).toBe(409)
    expect(problemText(remove.html)).toContain('cannot be deleted')
    expect(await ctx.runtime.store.groups.get(groupId)).toMatchObject({ name: 'staff' })
    expect(await events(ctx.tenantId).then((e) => e.filter((x) => x.actorUserId === admin.userId))).toEqual([])
  })
})

describe('the console’s access rules', () => {
  it('shows the protected domains, lists rules in order, adds at a position and deletes, each audited with the admin as actor', async () => {
    await adminIn()
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'staff' })
    let page = await browser.get(`${base}/admin/rules`)
    expect(page.status).toBe(200)
    expect(page.html).toContain('<li>example.com</li>')
    expect(page.html).toContain('Session cookie domain: example.com')
    expect(page.html).toContain('The tenant has no access rules: every request is denied.')
    // Protected domains are the operator's: no form changes them.
    expect(page.html).not.toContain('forward-auth-domain"')

    const first = await submitPairs(page, '/admin/rules', [['domain', 'App.Example.com'], ['paths', '/admin, /api'], ['methods.GET', 'on'], ['methods.POST', 'on'], ['policy', 'one_factor'], ['groups.staff', 'on'], ['position', '']])
    expect(first.location).toBe(`${base}/admin/rules?done=created&position=1`)
    page = await browser.get(first.location!)
    expect(noticeText(page.html)).toBe('The rule was added at position 1.')
    const second = await submitPairs(page, '/admin/rules', [['domain', '*.example.com'], ['paths', ''], ['policy', 'deny'], ['position', '']])
    expect(second.location).toBe(`${base}/admin/rules?done=created&position=2`)
    const top = await submitPairs(page, '/admin/rules', [['domain', 'app.example.com'], ['paths', '/health'], ['policy', 'bypass'], ['position', '1']])
    expect(top.location).toBe(`${base}/admin/rules?done=created&position=1`)

    const rules = await ctx.runtime.store.accessRules.list(ctx.tenantId)
    expect(rules.map((r) => ({ position: r.position, domain: r.domain, paths: r.paths, methods: r.methods, policy: r.policy, groups: r.groups }))).toEqual([
      { position: 1, domain: 'app.example.com', paths: ['/health'], methods: [], policy: 'bypass', groups: [] },
      { position: 2, domain: 'app.example.com', paths: ['/admin', '/api'], methods: ['GET', 'POST'], policy: 'one_factor', groups: ['staff'] },
      { position: 3, domain: '*.example.com', paths: [], methods: [], policy: 'deny', groups: [] },
    ])
    // In their order on the page.
    page = await browser.get(`${base}/admin/rules`)
    const shown = [...page.html.matchAll(/<tr><td>(\d+)<\/td><td>([^<]+)<\/td>/g)].map((m) => `${m[1]} ${m[2]}`)
    expect(shown).toEqual(['1 app.example.com', '2 app.example.com', '3 *.example.com'])
    expect(page.html).toContain('Rules cannot be moved')

    const deleted = await browser.submit(page, `/admin/rules/${rules[0]!.id}/delete`, {}, FROM_AUTHD)
    expect(deleted.location).toBe(`${base}/admin/rules?done=deleted`)
    expect((await ctx.runtime.store.accessRules.list(ctx.tenantId)).map((r) => `${r.position} ${r.policy}`)).toEqual(['1 one_factor', '2 deny'])

    const audited = (await events(ctx.tenantId)).filter((e) => e.type.startsWith('access_rule.'))
    expect(audited.map((e) => [e.type, e.actorUserId])).toEqual([
      ['access_rule.deleted', admin.userId],
      ['access_rule.created', admin.userId],
      ['access_rule.created', admin.userId],
      ['access_rule.created', admin.userId],
    ])
  })

  it('says an invalid rule on its form with a 400, keeping what was typed', async () => {
    await adminIn()
    const page = await browser.get(`${base}/admin/rules`)
    const cases: Array<{ pairs: [string, string][]; field?: string; says: string }> = [
      { pairs: [['domain', ''], ['policy', 'one_factor']], field: 'domain', says: 'Fill in this field.' },
      { pairs: [['domain', 'app.elsewhere.org'], ['policy', 'one_factor']], says: 'is not inside the tenant&#39;s forward-auth domains' },
      { pairs: [['domain', 'app.example.com'], ['policy', 'sometimes']], field: 'policy', says: 'policy must be one of' },
      { pairs: [['domain', 'app.example.com'], ['paths', 'admin'], ['policy', 'one_factor']], field: 'paths', says: 'paths must be path prefixes' },
      { pairs: [['domain', 'app.example.com'], ['methods.BREW', 'on'], ['policy', 'one_factor']], field: 'methods', says: 'methods must be HTTP methods' },
      { pairs: [['domain', 'app.example.com'], ['policy', 'one_factor'], ['groups.ghosts', 'on']], says: 'No group named ghosts' },
      { pairs: [['domain', 'app.example.com'], ['policy', 'one_factor'], ['position', 'first']], field: 'position', says: 'position must be a whole number' },
    ]
    for (const { pairs, field, says } of cases) {
      const answer = await submitPairs(page, '/admin/rules', pairs)
      expect({ pairs, status: answer.status }).toEqual({ pairs, status: 400 })
      expect(field ? fieldError(answer.html, field) : problemText(answer.html)).toContain(says)
    }
    const kept = await submitPairs(page, '/admin/rules', [['domain', 'app.example.com'], ['paths', '/ok nope'], ['methods.PUT', 'on'], ['policy', 'two_factor']])
    expect(kept.html).toContain('value="/ok nope"')
    expect(kept.html).toMatch(/name="methods.PUT" type="checkbox" value="on" checked/)
    expect(kept.html).toMatch(/<option value="two_factor" selected>/)
    expect(await ctx.runtime.store.accessRules.list(ctx.tenantId)).toEqual([])
  })
})

describe('the console’s groups and rules, guarded', () => {
  it('never shows or changes another tenant’s group, member or rule: a 404, and nothing changed', async () => {
    await adminIn()
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    await setForwardAuthDomains(ctx.runtime, other.id, ['example.com'])
    const theirs = await createGroup(ctx.runtime, { tenantId: other.id, name: 'theirs' })
    const stranger = (await createUser(ctx.runtime, { tenantId: other.id, email: 'x@other.example', firstName: 'X', lastName: 'Y' })).user
    await addMembers(ctx.runtime, theirs.id, [stranger.id])
    const rule = await addAccessRule(ctx.runtime, other.id, { domain: 'app.example.com', policy: 'one_factor' })
    const mine = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'mine' })

    expect((await browser.get(`${base}/admin/groups/${theirs.id}`)).status).toBe(404)
    const hidden = formOn((await browser.get(`${base}/admin/groups`)).html, '/admin/groups').hidden
    const posts: Array<[string, Record<string, string>]> = [
      [`/admin/groups/${theirs.id}/rename`, { name: 'renamed' }],
      [`/admin/groups/${theirs.id}/delete`, { confirm_name: 'theirs' }],
      [`/admin/groups/${theirs.id}/members`, { email: 'x@other.example' }],
      [`/admin/groups/${theirs.id}/members/${stranger.id}/remove`, {}],
      // Their user in my group: as unknown as a missing one.
      [`/admin/groups/${mine.id}/members/${stranger.id}/remove`, {}],
      [`/admin/rules/${rule.id}/delete`, {}],
    ]
    for (const [path, fields] of posts) expect({ path, status: (await browser.post(`${base}${path}`, { ...hidden, ...fields }, FROM_AUTHD)).status }).toEqual({ path, status: 404 })
    expect(await ctx.runtime.store.groups.get(theirs.id)).toMatchObject({ name: 'theirs' })
    expect(await ctx.runtime.store.groups.groupNamesOfUser(stranger.id)).toEqual(['theirs'])
    expect(await ctx.runtime.store.accessRules.get(rule.id)).not.toBeNull()
    expect(await events(other.id).then((e) => e.filter((x) => x.actorUserId !== null))).toEqual([])
    // Their rules and groups are not on my pages either.
    const rules = await browser.get(`${base}/admin/rules`)
    expect(rules.html).toContain('The tenant has no access rules')
    expect((await browser.get(`${base}/admin/groups`)).html).not.toContain('theirs')
  })

  it('asks for a fresh confirmation before a change once 5 minutes have passed', async () => {
    await adminIn()
    const group = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'staff' })
    const rule = await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.com', policy: 'one_factor' })
    ctx.clock.advance(6 * 60)
    const list = await browser.get(`${base}/admin/groups`)
    const asked = await browser.submit(list, '/admin/groups', { name: 'team' }, FROM_AUTHD)
    expect({ status: asked.status, confirm: asked.html.includes('Confirm it is you') }).toEqual({ status: 403, confirm: true })
    expect(formOn(asked.html, '/admin/confirm').hidden.return_to).toBe(`${base}/admin/groups`)
    const groupPage = await browser.get(`${base}/admin/groups/${group.id}`)
    const rename = await browser.submit(groupPage, `/admin/groups/${group.id}/rename`, { name: 'team' }, FROM_AUTHD)
    expect(rename.status).toBe(403)
    expect(formOn(rename.html, '/admin/confirm').hidden.return_to).toBe(`${base}/admin/groups/${group.id}`)
    const rules = await browser.get(`${base}/admin/rules`)
    expect((await submitPairs(rules, '/admin/rules', [['domain', 'wiki.example.com'], ['policy', 'deny']])).status).toBe(403)
    expect((await browser.submit(rules, `/admin/rules/${rule.id}/delete`, {}, FROM_AUTHD)).status).toBe(403)
    expect((await ctx.runtime.store.groups.list(ctx.tenantId)).map((g) => g.name)).toEqual(['staff'])
    expect((await ctx.runtime.store.accessRules.list(ctx.tenantId)).length).toBe(1)
    // Confirmed: the change goes through.
    await browser.submit(asked, '/admin/confirm', { password: PASSWORD }, FROM_AUTHD)
    expect((await browser.submit(list, '/admin/groups', { name: 'team' }, FROM_AUTHD)).status).toBe(303)
  })
})

describe('the console and the admin API stay one', () => {
  it('makes the same stored change and the same audit event for each console action as its admin API twin', async () => {
    await adminIn()
    // The console acts on this tenant, the admin API on a twin tenant set up the same way.
    const twin = await createTenant(ctx.runtime, { name: 'Twin' })
    await setForwardAuthDomains(ctx.runtime, twin.id, ['example.com'])
    const key = (await createApiKey(ctx.runtime, { tenantId: twin.id, name: 'backend', scope: 'admin' })).key
    const api = async (method: string, path: string, body?: unknown) => {
      const answer = await ctx.call(method, `/api/v1/admin${path}`, { body, apiKey: key })
      expect({ method, path, status: answer.status }).toEqual({ method, path, status: method === 'POST' ? 201 : 200 })
    }
    for (const tenantId of [ctx.tenantId, twin.id]) await createUser(ctx.runtime, { tenantId, email: 'ada@example.com', firstName: 'Ada', lastName: 'L' })
    const userOf = async (tenantId: string) => (await ctx.runtime.store.users.findByEmail(tenantId, 'ada@example.com'))!.id
    const ruleAt = async (tenantId: string, position: number) => (await ctx.runtime.store.accessRules.list(tenantId))[position - 1]!.id
    const groupPage = async (name: string) => browser.get(`${base}/admin/groups/${await groupIdOf(ctx.tenantId, name)}`)

    const steps: Array<{ name: string; console: () => Promise<PageAnswer>; api: () => Promise<void>; event: string }> = [
      {
        name: 'create a group',
        console: async () => browser.submit(await browser.get(`${base}/admin/groups`), '/admin/groups', { name: 'Staff', description: 'The staff' }, FROM_AUTHD),
        api: () => api('POST', '/groups', { name: 'Staff', description: 'The staff' }),
        event: 'group.created',
      },
      {
        name: 'add a member',
        console: async () => browser.submit(await groupPage('staff'), '/members', { email: 'ada@example.com' }, FROM_AUTHD),
        api: async () => api('PUT', `/groups/${await groupIdOf(twin.id, 'staff')}/members/${await userOf(twin.id)}`),
        event: 'group.member_added',
      },
      {
        name: 'remove a member',
        console: async () => browser.submit(await groupPage('staff'), `/members/${await userOf(ctx.tenantId)}/remove`, {}, FROM_AUTHD),
        api: async () => api('DELETE', `/groups/${await groupIdOf(twin.id, 'staff')}/members/${await userOf(twin.id)}`),
        event: 'group.member_removed',
      },
      {
        name: 'rename a group',
        console: async () => browser.submit(await groupPage('staff'), '/rename', { name: 'team', description: '' }, FROM_AUTHD),
        api: async () => api('PATCH', `/groups/${await groupIdOf(twin.id, 'staff')}`, { name: 'team', description: '' }),
        event: 'group.updated',
      },
      {
        name: 'add a rule',
        console: async () => submitPairs(await browser.get(`${base}/admin/rules`), '/admin/rules', [['domain', 'App.example.com'], ['paths', '/admin /api'], ['methods.get', 'on'], ['methods.POST', 'on'], ['policy', 'two_factor'], ['groups.team', 'on']]),
        api: () => api('POST', '/access-rules', { domain: 'App.example.com', paths: ['/admin', '/api'], methods: ['get', 'POST'], policy: 'two_factor', groups: ['team'] }),
        event: 'access_rule.created',
      },
      {
        name: 'add a rule at a position',
        console: async () => submitPairs(await browser.get(`${base}/admin/rules`), '/admin/rules', [['domain', '*.example.com'], ['policy', 'bypass'], ['position', '1']]),
        api: () => api('POST', '/access-rules', { domain: '*.example.com', policy: 'bypass', position: 1 }),
        event: 'access_rule.created',
      },
      {
        name: 'delete a rule',
        console: async () => browser.submit(await browser.get(`${base}/admin/rules`), `/admin/rules/${await ruleAt(ctx.tenantId, 2)}/delete`, {}, FROM_AUTHD),
        api: async () => api('DELETE', `/access-rules/${await ruleAt(twin.id, 2)}`),
        event: 'access_rule.deleted',
      },
      {
        name: 'delete a group',
        console: async () => browser.submit(await groupPage('team'), '/delete', { confirm_name: 'team' }, FROM_AUTHD),
        api: async () => api('DELETE', `/groups/${await groupIdOf(twin.id, 'team')}`),
        event: 'group.deleted',
      },
    ]

    /** What a tenant holds, without its ids and times: its groups with their members, its rules in order. */
    const stored = async (tenantId: string) => {
      const groups = await ctx.runtime.store.groups.list(tenantId)
      const rules = await ctx.runtime.store.accessRules.list(tenantId)
      return {
        groups: await Promise.all(groups.map(async (g) => ({ name: g.name, description: g.description, members: (await ctx.runtime.store.groups.members(g.id, null, 100)).length }))),
        rules: rules.map((r) => ({ position: r.position, domain: r.domain, paths: r.paths, methods: r.methods, policy: r.policy, groups: r.groups })),
      }
    }
    /** The newest event of a tenant, without ids: its type, and its detail's words. */
    const newest = async (tenantId: string) => {
      const [event] = await events(tenantId)
      const { groupId: _g, ruleId: _r, userIds, ...detail } = (event?.detail ?? {}) as Record<string, unknown>
      return { type: event?.type, detail, userIds: Array.isArray(userIds) ? userIds.length : undefined }
    }

    for (const step of steps) {
      const answer = await step.console()
      expect({ step: step.name, status: answer.status }).toEqual({ step: step.name, status: 303 })
      await step.api()
      expect({ step: step.name, stored: await stored(ctx.tenantId) }).toEqual({ step: step.name, stored: await stored(twin.id) })
      const [byConsole, byApi] = [await newest(ctx.tenantId), await newest(twin.id)]
      expect({ step: step.name, ...byConsole }).toEqual({ step: step.name, ...byApi })
      expect(byConsole.type).toBe(step.event)
      const [consoleEvent] = await events(ctx.tenantId)
      const [apiEvent] = await events(twin.id)
      expect({ actorUserId: consoleEvent!.actorUserId, apiKey: apiEvent!.apiKeyId !== null }).toEqual({ actorUserId: admin.userId, apiKey: true })
    }
  })
})
