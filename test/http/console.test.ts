// The admin console's door and its users section (product spec §27), as a browser without
// JavaScript uses them: who gets in (an admin of the tenant with a second factor in this
// session, while the console is on), step-up before every change, another tenant's ids as
// unknown ones, and each change the same domain function (and audit event) as its admin API twin.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { setTenantConsole, createTenant } from '../../src/core/tenants/tenants'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createUser } from '../../src/core/accounts/users'
import { PASSWORD, type TestContext } from '../helpers'
import { consoleWorld, currentCode as codeAt, enrolTotp, FROM_AUTHD } from '../console-journey'
import { fieldError, formOn, noticeText, PageBrowser, problemText, type PageAnswer } from '../pages'

let ctx: TestContext
let browser: PageBrowser
let base: string
let admin: { userId: string; email: string }
beforeEach(async () => {
  ;({ ctx, admin, browser, base } = await consoleWorld())
})
afterEach(() => ctx.close())

const currentCode = (secret: string) => codeAt(ctx, secret)
const withTotp = (email: string) => enrolTotp(ctx, email)

/** Signs the browser in on the login page (with the second factor when `secret` is given). */
async function signIn(email: string, secret?: string): Promise<PageAnswer> {
  let answer = await browser.submit(await browser.get(`${base}/login`), '/login', { email, password: PASSWORD }, FROM_AUTHD)
  if (secret) answer = await browser.submit(answer, '/login/second-factor', { code: currentCode(secret) }, FROM_AUTHD)
  return answer
}

/** An admin signed in with TOTP: the console open. */
async function adminIn(): Promise<string> {
  const secret = await withTotp(admin.email)
  await signIn(admin.email, secret)
  return secret
}

describe('the console’s door', () => {
  it('sends a browser that is not signed in to the login page, and back to the console after it', async () => {
    const answer = await browser.get(`${base}/admin/users?email=a%40example.com`)
    expect(answer.status).toBe(303)
    expect(answer.location).toBe(`${base}/login?${new URLSearchParams({ return_to: `${base}/admin/users?email=a%40example.com` })}`)
  })

  it('refuses a user of type user with a way to switch accounts; an admin of another tenant too', async () => {
    const user = await ctx.addUser({ email: 'ada@example.com' })
    await signIn(user.email)
    const refused = await browser.get(`${base}/admin`)
    expect(refused.status).toBe(403)
    expect(refused.html).toContain('who is not an administrator')
    expect(formOn(refused.html, '/logout').hidden.return_to).toBe(`${base}/admin`)
    // An admin of another tenant, signed in there, is not signed in here at all.
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    await createUser(ctx.runtime, { tenantId: other.id, email: 'boss@other.example', firstName: 'B', lastName: 'O', type: 'admin', password: PASSWORD })
    const elsewhere = new PageBrowser(ctx)
    await elsewhere.submit(await elsewhere.get(`/t/${other.id}/login`), '/login', { email: 'boss@other.example', password: PASSWORD }, FROM_AUTHD)
    expect((await elsewhere.get(`${base}/admin`)).status).toBe(303)
  })

  it('sends an admin without a second factor to set one up, and asks one who signed in without it to prove it', async () => {
    await signIn(admin.email)
    const setUp = await browser.get(`${base}/admin`)
    expect({ status: setUp.status, link: setUp.html.includes(`href="${base}/account"`) }).toEqual({ status: 403, link: true })
    // TOTP set up on the account page in this very session (which keeps it, signed in with the password alone): proved here.
    const setup = await browser.submit(await browser.get(`${base}/account`), '/account/totp', {}, FROM_AUTHD)
    const secret = /<code>([A-Z2-7 ]+)<\/code>/.exec(setup.html)![1]!.replace(/ /g, '')
    expect((await browser.submit(setup, '/account/totp/confirm', { code: currentCode(secret) }, FROM_AUTHD)).status).toBe(200)
    ctx.clock.advance(30)
    const prove = await browser.get(`${base}/admin/users`)
    expect(prove.status).toBe(403)
    const wrong = await browser.submit(prove, '/admin/factor', { code: '000000' }, FROM_AUTHD)
    expect(fieldError(wrong.html, 'code')).toBeString()
    const proved = await browser.submit(prove, '/admin/factor', { code: currentCode(secret) }, FROM_AUTHD)
    expect(proved.location).toBe(`${base}/admin/users`)
    expect((await browser.get(`${base}/admin/users`)).status).toBe(200)
  })

  it('is a 404 when the operator turned it off, for everyone, forms too (with or without their token)', async () => {
    await adminIn()
    const users = await browser.get(`${base}/admin/users`)
    expect(users.status).toBe(200)
    await setTenantConsole(ctx.runtime, ctx.tenantId, false)
    expect((await browser.get(`${base}/admin`)).status).toBe(404)
    expect((await browser.get(`${base}/admin/users`)).status).toBe(404)
    const token = formOn(users.html, '/admin/users').hidden
    expect((await browser.post(`${base}/admin/users`, { email: 'x@example.com', firstName: 'X', lastName: 'Y' }, FROM_AUTHD)).status).toBe(404)
    expect((await browser.post(`${base}/admin/factor`, { ...token, code: '123456' }, FROM_AUTHD)).status).toBe(404)
    expect((await new PageBrowser(ctx).post(`${base}/admin/factor`, { code: '123456' }, FROM_AUTHD)).status).toBe(404)
    expect((await browser.post(`${base}/admin/confirm`, { ...token, password: PASSWORD }, FROM_AUTHD)).status).toBe(404)
  })

  it('sends the browser back only to one of the console’s pages, as a browser reads it: never a 500 for a return_to no header can carry', async () => {
    await adminIn()
    const page = await browser.get(`${base}/admin/users`)
    const hidden = formOn(page.html, '/admin/users').hidden
    const back = async (returnTo: string) => (await browser.post(`${base}/admin/confirm`, { ...hidden, password: PASSWORD, return_to: returnTo }, FROM_AUTHD)).location
    expect(await back(`${base}/admin/users?email=a%40b.example`)).toBe(`${base}/admin/users?email=a%40b.example`)
    expect(await back(`${base}/admin/\r\nX-Injected: 1`)).toBe(`${base}/admin`)
    expect(await back(`${base}/admin/\u2028x`)).toBe(`${base}/admin/%E2%80%A8x`)
    expect(await back(`${base}/admin/../../../evil`)).toBe(`${base}/admin`)
    expect(await back(`${base}/admin/..\t/..\t/..\t/\t/evil.example`)).toBe(`${base}/admin`)
    expect(await back('//evil.example/t/x/admin')).toBe(`${base}/admin`)
    expect(await back('https://evil.example/')).toBe(`${base}/admin`)
  })

  it('refuses a form without this browser’s token or from another origin', async () => {
    await adminIn()
    const page = await browser.get(`${base}/admin/users`)
    const forged = await browser.post(`${base}/admin/users`, { email: 'x@example.com', firstName: 'X', lastName: 'Y' }, FROM_AUTHD)
    expect(forged.status).toBe(403)
    const crossSite = await browser.submit(page, '/admin/users', { email: 'x@example.com', firstName: 'X', lastName: 'Y' }, { origin: 'https://evil.example' })
    expect(crossSite.status).toBe(403)
    expect(await ctx.runtime.store.users.findByEmail(ctx.tenantId, 'x@example.com')).toBeNull()
  })
})

describe('the console’s users', () => {
  it('creates a user with an invitation, audited with the admin as actor, and finds them by address', async () => {
    await adminIn()
    const created = await browser.submit(await browser.get(`${base}/admin/users`), '/admin/users', { email: 'New.Person@example.com', firstName: 'New', lastName: 'Person', type: 'user' }, FROM_AUTHD)
    expect(created.status).toBe(303)
    const userId = /\/admin\/users\/([^?]+)\?done=created$/.exec(created.location ?? '')?.[1]
    expect(userId).toBeString()
    const page = await browser.get(created.location!)
    expect(noticeText(page.html)).toBe('The user was created and invited.')
    expect(page.html).toContain('new.person@example.com')
    const [event] = await ctx.runtime.store.audit.query({ tenantId: ctx.tenantId, type: 'user.created' }).then((events) => events.filter((e) => e.userId === userId))
    expect(event).toMatchObject({ actorUserId: admin.userId, detail: { invited: true } })
    const found = await browser.get(`${base}/admin/users?email=${encodeURIComponent('new.person@example.com')}`)
    expect(found.html).toContain(`href="${base}/admin/users/${userId}"`)
    // A taken address is the domain's refusal on the form, nothing created.
    const again = await browser.submit(await browser.get(`${base}/admin/users`), '/admin/users', { email: 'new.person@example.com', firstName: 'N', lastName: 'P' }, FROM_AUTHD)
    expect(again.status).toBe(409)
    expect(problemText(again.html)).toContain('already')
  })

  it('asks for a fresh confirmation before a change once 5 minutes have passed, then makes it', async () => {
    await adminIn()
    const user = await ctx.addUser({ email: 'ada@example.com' })
    ctx.clock.advance(6 * 60)
    const profile = await browser.get(`${base}/admin/users/${user.userId}`)
    expect(profile.html).toContain('You will be asked to confirm it is you')
    const asked = await browser.submit(profile, `/admin/users/${user.userId}/disable`, {}, FROM_AUTHD)
    expect(asked.status).toBe(403)
    expect(asked.html).toContain('Confirm it is you')
    expect((await ctx.runtime.store.users.get(user.userId))?.disabledAt).toBeNull()
    const wrong = await browser.submit(asked, '/admin/confirm', { password: 'not the password' }, FROM_AUTHD)
    expect(fieldError(wrong.html, 'password')).toBe('The password is wrong.')
    const confirmed = await browser.submit(asked, '/admin/confirm', { password: PASSWORD }, FROM_AUTHD)
    expect(confirmed.location).toBe(`${base}/admin/users/${user.userId}`)
    const disabled = await browser.submit(await browser.get(confirmed.location!), `/admin/users/${user.userId}/disable`, {}, FROM_AUTHD)
    expect(disabled.location).toBe(`${base}/admin/users/${user.userId}?done=disabled`)
    expect((await ctx.runtime.store.users.get(user.userId))?.disabledAt).not.toBeNull()
    const [event] = await ctx.runtime.store.audit.query({ tenantId: ctx.tenantId, type: 'user.disabled' })
    expect(event).toMatchObject({ userId: user.userId, actorUserId: admin.userId })
  })

  it('never shows another tenant’s user: a 404, and nothing changed', async () => {
    await adminIn()
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const stranger = (await createUser(ctx.runtime, { tenantId: other.id, email: 'x@other.example', firstName: 'X', lastName: 'Y' })).user
    expect((await browser.get(`${base}/admin/users/${stranger.id}`)).status).toBe(404)
    const profile = await browser.get(`${base}/admin/users/${admin.userId}`)
    const hidden = formOn(profile.html, `/admin/users/${admin.userId}/sessions/end`).hidden
    expect((await browser.post(`${base}/admin/users/${stranger.id}/disable`, hidden, FROM_AUTHD)).status).toBe(404)
    expect((await browser.post(`${base}/admin/users/${stranger.id}/delete`, { ...hidden, confirm_email: 'x@other.example' }, FROM_AUTHD)).status).toBe(404)
    expect((await ctx.runtime.store.users.get(stranger.id))?.disabledAt).toBeNull()
  })

  it('deletes a user only with their address typed', async () => {
    await adminIn()
    const user = await ctx.addUser({ email: 'ada@example.com' })
    const profile = await browser.get(`${base}/admin/users/${user.userId}`)
    const mistyped = await browser.submit(profile, `/admin/users/${user.userId}/delete`, { confirm_email: 'ad@example.com' }, FROM_AUTHD)
    expect(mistyped.status).toBe(400)
    expect(problemText(mistyped.html)).toContain('Type the user’s e-mail address exactly')
    expect(await ctx.runtime.store.users.get(user.userId)).not.toBeNull()
    const deleted = await browser.submit(profile, `/admin/users/${user.userId}/delete`, { confirm_email: 'ADA@example.com ' }, FROM_AUTHD)
    expect(deleted.location).toBe(`${base}/admin/users?done=deleted`)
    expect(await ctx.runtime.store.users.get(user.userId)).toBeNull()
  })
})

describe('the console’s users and the admin API stay one', () => {
  it('makes the same stored change and the same audit event for each console action as its admin API twin', async () => {
    await adminIn()
    // The console acts on this tenant, the admin API on a twin tenant set up the same way.
    const twin = await createTenant(ctx.runtime, { name: 'Twin' })
    const key = (await createApiKey(ctx.runtime, { tenantId: twin.id, name: 'backend', scope: 'admin' })).key
    const api = async (method: string, path: string, body?: unknown) => {
      const answer = await ctx.call(method, `/api/v1/admin${path}`, { body, apiKey: key })
      expect({ method, path, status: answer.status }).toEqual({ method, path, status: method === 'POST' ? 201 : 200 })
    }
    const idOf = async (tenantId: string) => (await ctx.runtime.store.users.findByEmail(tenantId, 'grace@example.com'))?.id ?? ''
    const profile = async () => browser.get(`${base}/admin/users/${await idOf(ctx.tenantId)}`)
    const steps: Array<{ name: string; console: () => Promise<PageAnswer>; api: () => Promise<void>; event: string }> = [
      {
        name: 'create with an invitation',
        console: async () => browser.submit(await browser.get(`${base}/admin/users`), '/admin/users', { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', type: 'user' }, FROM_AUTHD),
        api: () => api('POST', '/users', { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', type: 'user', invite: true }),
        event: 'user.created',
      },
      { name: 'invite again', console: async () => browser.submit(await profile(), '/invite', {}, FROM_AUTHD), api: async () => api('POST', `/users/${await idOf(twin.id)}/invite`), event: 'user.invited' },
      // (a user with no session has no End button: the form is sent as the button would send it)
      { name: 'end sessions', console: async () => browser.post(`${base}/admin/users/${await idOf(ctx.tenantId)}/sessions/end`, formOn((await profile()).html, '/delete').hidden, FROM_AUTHD), api: async () => api('DELETE', `/users/${await idOf(twin.id)}/sessions`), event: 'sessions.revoked' },
      { name: 'disable', console: async () => browser.submit(await profile(), '/disable', {}, FROM_AUTHD), api: async () => api('PATCH', `/users/${await idOf(twin.id)}`, { disabled: true }), event: 'user.disabled' },
      { name: 'enable', console: async () => browser.submit(await profile(), '/enable', {}, FROM_AUTHD), api: async () => api('PATCH', `/users/${await idOf(twin.id)}`, { disabled: false }), event: 'user.enabled' },
      { name: 'delete', console: async () => browser.submit(await profile(), '/delete', { confirm_email: 'grace@example.com' }, FROM_AUTHD), api: async () => api('DELETE', `/users/${await idOf(twin.id)}`), event: 'user.deleted' },
    ]
    /** The user as stored, without ids and times. */
    const stored = async (tenantId: string) => {
      const user = await ctx.runtime.store.users.findByEmail(tenantId, 'grace@example.com')
      return user && { email: user.email, firstName: user.firstName, lastName: user.lastName, type: user.type, hasPassword: user.passwordHash !== null, disabled: user.disabledAt !== null, verified: user.emailVerifiedAt !== null }
    }
    /** The newest event of a tenant other than the console's own reads: its type and detail, without ids. */
    const newest = async (tenantId: string) => {
      const events = (await ctx.runtime.store.audit.query({ tenantId })).filter((e) => !/\.(listed|viewed)$/.test(e.type) && e.type !== 'api_key.created')
      const event = events[0]
      return { type: event?.type, detail: event?.detail, byConsole: event?.actorUserId ?? null, byKey: event?.apiKeyId !== null }
    }
    for (const step of steps) {
      const answer = await step.console()
      expect({ step: step.name, status: answer.status }).toEqual({ step: step.name, status: 303 })
      await step.api()
      expect({ step: step.name, stored: await stored(ctx.tenantId) }).toEqual({ step: step.name, stored: await stored(twin.id) })
      const [byConsole, byApi] = [await newest(ctx.tenantId), await newest(twin.id)]
      expect({ step: step.name, type: byConsole.type, detail: byConsole.detail }).toEqual({ step: step.name, type: step.event, detail: byApi.detail })
      expect({ step: step.name, type: byApi.type, console: byConsole.byConsole, key: byApi.byKey }).toEqual({ step: step.name, type: step.event, console: admin.userId, key: true })
    }
  })
})
