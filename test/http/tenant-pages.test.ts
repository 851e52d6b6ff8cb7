// A tenant's pages settings (product spec §20): the slug its pages are found under and its
// branding, set through the admin API (PATCH /api/v1/admin/tenant) and the CLI (`authd tenants
// update --slug --display-name --accent-color --logo-url --logo FILE`), both through
// core/tenant-pages.ts; the pages then show them.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createTestContext, databaseEnv, type TestContext } from '../helpers'

let ctx: TestContext
let adminKey: string
beforeEach(async () => {
  ctx = await createTestContext()
  adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })).key
})
afterEach(() => ctx.close())

const patch = (body: unknown) => ctx.call('PATCH', '/api/v1/admin/tenant', { apiKey: adminKey, body })
/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

describe('PATCH /api/v1/admin/tenant: slug and branding', () => {
  it('sets them (the pages show them), clears one with null, and names what is wrong', async () => {
    const set = await patch({ slug: ' Acme-Corp ', displayName: 'Acme Corporation', accentColor: '#0B6E4F', logoUrl: 'https://cdn.acme.example/logo.png' })
    expect(set.json.data).toMatchObject({ slug: 'acme-corp', displayName: 'Acme Corporation', accentColor: '#0b6e4f', logoUrl: 'https://cdn.acme.example/logo.png', logoFile: null, pagesUrl: 'http://127.0.0.1:3000/t/acme-corp' })
    expect((await ctx.call('GET', '/api/v1/admin/tenant', { apiKey: adminKey })).json.data).toMatchObject({ slug: 'acme-corp', accentColor: '#0b6e4f' })
    const page = await ctx.call('GET', '/t/acme-corp/login')
    expect(page.text).toContain('<img src="https://cdn.acme.example/logo.png" alt=""><span>Acme Corporation</span>')
    // The logo's origin, and no other, may be loaded.
    expect(page.headers.get('content-security-policy')).toContain("img-src 'self' https://cdn.acme.example;")
    expect((await patch({ displayName: null })).json.data.displayName).toBeNull()
    expect((await ctx.call('GET', '/t/acme-corp/login')).text).toContain('<span>Acme</span>')

    for (const [body, message] of [
      [{ slug: 'a b' }, 'slug must be 1 to 40 lower-case letters, digits and inner dashes, such as acme'],
      [{ slug: ctx.tenantId }, 'slug must be 1 to 40 lower-case letters, digits and inner dashes, such as acme'],
      [{ accentColor: 'red; } body { display: none' }, 'accentColor must be a colour written as #rrggbb, such as #0b5fff'],
      [{ logoUrl: 'http://cdn.acme.example/logo.png' }, 'logoUrl must be an https URL of at most 500 characters'],
      [{ logoUrl: 'javascript:alert(1)' }, 'logoUrl must be an https URL of at most 500 characters'],
      [{ logoUrl: 'https://a.example;sandbox/x.png' }, 'logoUrl must name its host as a domain name or an IP address'],
      [{ logoUrl: 'https://a.example,sandbox/x.png' }, 'logoUrl must name its host as a domain name or an IP address'],
      [{ logoUrl: 'https://*/x.png' }, 'logoUrl must name its host as a domain name or an IP address'],
      [{ logoUrl: "https://x'y.example/x.png" }, 'logoUrl must name its host as a domain name or an IP address'],
      [{ displayName: 'Acme\nCorp' }, 'displayName must be a single line without control or formatting characters'],
    ] as const) {
      expect({ body, answer: (await patch(body)).json }).toEqual({ body, answer: { statusCode: 400, message, data: null } })
    }
  })

  it("refuses another tenant's slug (409); the slug and the id both find the pages", async () => {
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const otherKey = (await createApiKey(ctx.runtime, { tenantId: other.id, scope: 'admin' })).key
    expect((await patch({ slug: 'acme' })).status).toBe(200)
    const taken = await ctx.call('PATCH', '/api/v1/admin/tenant', { apiKey: otherKey, body: { slug: 'ACME' } })
    expect(taken.json).toEqual({ statusCode: 409, message: 'The slug acme belongs to another tenant', data: null })
    expect((await ctx.call('GET', '/t/acme/login')).status).toBe(200)
    expect((await ctx.call('GET', `/t/${ctx.tenantId}/login`)).status).toBe(200)
  })
})

describe('authd tenants update: slug and branding', () => {
  it('--slug, --accent-color and --logo FILE (a PNG, served by authd); a file that is no image is refused', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, { ...databaseEnv(ctx), AUTHD_PUBLIC_URL: ctx.runtime.config.publicUrl })
    const logo = join(ctx.dir, 'logo.png')
    writeFileSync(logo, PNG)
    const updated = await authd(['--json', 'tenants', 'update', ctx.tenantId, '--slug', 'acme', '--accent-color', '#112233', '--logo', logo])
    expect({ code: updated.code, stderr: updated.stderr }).toEqual({ code: 0, stderr: '' })
    expect(updated.json).toMatchObject({ slug: 'acme', accentColor: '#112233', logoFile: 'image/png', logoUrl: null })
    const served = await ctx.call('GET', '/t/acme/logo')
    expect({ status: served.status, type: served.headers.get('content-type'), csp: served.headers.get('content-security-policy') }).toEqual({ status: 200, type: 'image/png', csp: "default-src 'none'" })
    expect((await ctx.call('GET', '/t/acme/login')).text).toContain('<img src="/t/acme/logo" alt="">')

    const text = join(ctx.dir, 'logo.svg')
    writeFileSync(text, '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
    const refused = await authd(['tenants', 'update', ctx.tenantId, '--logo', text])
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 1, stderr: 'authd: logo must be a PNG, JPEG, GIF or WebP image\n' })
    expect((await authd(['tenants', 'update', ctx.tenantId, '--slug', ''])).code).toBe(0)
    expect((await ctx.call('GET', '/t/acme/login')).status).toBe(404)
  })
})
