import type { Command } from 'commander'
import { readFileSync } from 'node:fs'
import { forwardAuthDomainsOf, setForwardAuthDomains } from '../../core/forward-auth/domains'
import { toForwardAuthSettingsView } from '../../core/forward-auth/view'
import { setTenantSignup } from '../../core/signup/signup'
import { setTenantRelyingParty } from '../../core/tenants/relying-party'
import { createTenant, getTenant, setTenantAudience, setTenantConsole, setTenantDisabled, toTenantSettingsView } from '../../core/tenants/tenants'
import { returnToOriginsOf, setTenantReturnToOrigins, toTenantPagesView, updateTenantPages, type TenantPagesInput } from '../../core/tenants/tenant-pages'
import type { Tenant } from '../../core/types'
import { contextFrom } from '../context'
import { isoTime, required, table, UsageError } from '../io'
import type { Env } from '../env'

const view = (t: Tenant) => ({ tenantId: t.id, name: t.name, audience: t.audience, signup: t.signup, disabled: t.disabledAt !== null, createdAt: isoTime(t.createdAt), returnToOrigins: returnToOriginsOf(t), forwardAuthDomains: forwardAuthDomainsOf(t) })
/** A repeatable option's values, each of which may also be a comma-separated list. */
const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',')]

export function registerTenants(program: Command, env: Env) {
  const tenants = program.command('tenants').description('create, list, disable and enable tenants')

  tenants
    .command('create')
    .description('create a tenant')
    .option('--name <name>', 'the tenant name')
    .option('--audience <aud>', "the aud claim of the tenant's access tokens (default urn:authd:tenant:<tenantId>)")
    .action(async (opts: { name?: string; audience?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const name = await required(ctx.out, opts.name, '--name', 'Tenant name')
      const tenant = await ctx.withRuntime((rt) => createTenant(rt, { name, audience: opts.audience }))
      ctx.out.result({ tenantId: tenant.id, name: tenant.name, audience: tenant.audience }, () => `created tenant ${tenant.name} (${tenant.id}), token audience ${tenant.audience}`)
    })

  tenants
    .command('update <tenantId>')
    .description("change a tenant's settings")
    .option('--audience <aud>', "the aud claim of the tenant's access tokens from now on")
    .option('--signup <policy>', 'who may sign up over the API: closed (the default), open, or domains:a.example,b.example')
    .option('--passkey-rp-id <host>', "the RP ID of the tenant's passkeys (default: the host of AUTHD_PUBLIC_URL)")
    .option('--passkey-origins <origins>', 'comma-separated origins whose pages run passkey ceremonies (default: that of AUTHD_PUBLIC_URL)')
    .option('--slug <slug>', "the name of the tenant's pages in their URL: /t/<slug>/ ('' removes it)")
    .option('--display-name <name>', "the name the tenant's pages show ('' for the tenant name)")
    .option('--accent-color <#rrggbb>', "the accent colour of the tenant's pages ('' for the default)")
    .option('--logo-url <url>', "an https URL of the tenant's logo ('' removes the logo)")
    .option('--logo <file>', 'a PNG, JPEG, GIF or WebP file of the logo, stored and served by authd')
    .option(
      '--return-to-origin <origin>',
      "an origin besides authd's own that a sign-in on the tenant's pages may return to (return_to), such as https://app.example.com; repeat it for several; they replace the tenant's list ('' clears it)",
      collect,
    )
    .option('--console <on|off>', "the tenant's admin console at /t/<tenant>/admin (on by default)")
    .option(
      '--forward-auth-domain <domain>',
      "a domain whose applications authd guards at their reverse proxy (forward authentication), such as example.com: authd's public URL must be on a host inside it; repeat it for several; they replace the tenant's list ('' clears it)",
      collect,
    )
    .action(async (tenantId: string, opts: UpdateOptions, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      if (Object.values(opts).every((v) => v === undefined)) {
        throw new UsageError('nothing to change: give --audience, --signup, --passkey-rp-id, --passkey-origins, --return-to-origin, --forward-auth-domain, --slug, --display-name, --accent-color, --logo-url, --logo or --console')
      }
      if (opts.console !== undefined && opts.console !== 'on' && opts.console !== 'off') throw new UsageError(`--console must be on or off, not ${JSON.stringify(opts.console)}`)
      const pages = pagesInput(opts)
      const updated = await ctx.withRuntime(async (rt) => {
        let tenant = await updateTenantPages(rt, tenantId, pages)
        if (opts.audience !== undefined) tenant = await setTenantAudience(rt, tenantId, opts.audience)
        if (opts.signup !== undefined) tenant = await setTenantSignup(rt, tenantId, opts.signup)
        if (opts.passkeyRpId !== undefined || opts.passkeyOrigins !== undefined) {
          tenant = await setTenantRelyingParty(rt, tenantId, { rpId: opts.passkeyRpId, origins: opts.passkeyOrigins?.split(',').filter((o) => o.trim() !== '') })
        }
        if (opts.returnToOrigin !== undefined) tenant = await setTenantReturnToOrigins(rt, tenantId, opts.returnToOrigin.filter((o) => o.trim() !== ''))
        // (checked against rt.config.publicUrl: without AUTHD_PUBLIC_URL, the one authd serve recorded)
        if (opts.forwardAuthDomain !== undefined) tenant = await setForwardAuthDomains(rt, tenantId, opts.forwardAuthDomain.filter((d) => d.trim() !== ''))
        if (opts.console !== undefined) tenant = await setTenantConsole(rt, tenantId, opts.console === 'on')
        return settingsOf(rt, tenant)
      })
      ctx.linkWritten()
      const returnTo = updated.returnToOrigins.length > 0 ? `, return_to also to ${updated.returnToOrigins.join(', ')}` : ''
      const forwardAuth = updated.forwardAuthDomains.length > 0 ? `, ${forwardAuthLine(updated)}` : ''
      ctx.out.result(updated, () => `${summary(updated)}, pages at ${updated.pagesUrl}${returnTo}${forwardAuth}`)
    })

  tenants
    .command('show <tenantId>')
    .description("a tenant's settings: token audience, sign-up, passkeys, pages, the origins return_to may lead to and forward authentication")
    .action(async (tenantId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const shown = await ctx.withRuntime(async (rt) => settingsOf(rt, await getTenant(rt, tenantId)))
      ctx.linkWritten()
      ctx.out.result(shown, () => [
        summary(shown),
        `pages at ${shown.pagesUrl}`,
        `admin console ${shown.console === 'on' ? `at ${shown.pagesUrl}/admin` : 'off (--console on to open it)'}`,
        `return_to may lead to authd's own pages${shown.returnToOrigins.length > 0 ? ` and ${shown.returnToOrigins.join(', ')}` : ' only'}`,
        shown.forwardAuthDomains.length > 0 ? forwardAuthLine(shown) : 'forward authentication off (no --forward-auth-domain)',
      ])
    })

  tenants
    .command('list')
    .description('list tenants')
    .action(async (_: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const rows = (await ctx.withRuntime((rt) => rt.store.tenants.list())).map(view)
      ctx.out.result(rows, () => table(rows, ['tenantId', 'name', 'audience', 'signup', 'disabled', 'createdAt']))
    })

  for (const [name, disabled] of [['disable', true], ['enable', false]] as const) {
    tenants
      .command(`${name} <tenantId>`)
      .description(disabled ? "disable a tenant: its API keys stop working and its users' sessions are refused" : 'enable a tenant again')
      .action(async (tenantId: string, _: unknown, cmd: Command) => {
        const ctx = contextFrom(cmd, env)
        const tenant = view(await ctx.withRuntime((rt) => setTenantDisabled(rt, tenantId, disabled)))
        ctx.out.result(tenant, () => `${disabled ? 'disabled' : 'enabled'} tenant ${tenant.name} (${tenant.tenantId})`)
      })
  }
}

type UpdateOptions = { audience?: string; signup?: string; passkeyRpId?: string; passkeyOrigins?: string; returnToOrigin?: string[]; forwardAuthDomain?: string[]; console?: string; slug?: string; displayName?: string; accentColor?: string; logoUrl?: string; logo?: string }

const settingsOf = (rt: Parameters<typeof toTenantSettingsView>[0], tenant: Tenant) => ({ ...toTenantSettingsView(rt, tenant), ...toTenantPagesView(rt.config, tenant), ...toForwardAuthSettingsView(rt.config, tenant), console: tenant.consoleEnabled ? ('on' as const) : ('off' as const) })
const summary = (t: ReturnType<typeof settingsOf>) =>
  `tenant ${t.name} (${t.tenantId}): token audience ${t.audience}, sign-up ${t.signup}, passkeys for ${t.passkeyRpId} from ${t.passkeyOrigins.join(', ')}`

/** Which domains the tenant guards, and the cookie a sign-in sets for them (none: authd's host moved off them). */
const forwardAuthLine = (t: ReturnType<typeof settingsOf>) =>
  `forward authentication for ${t.forwardAuthDomains.join(', ')}: ` +
  (t.cookieDomain ? `session cookie for ${t.cookieDomain}` : `no session cookie, authd's public URL is on none of them (see authd doctor)`)

/** The pages' settings as typed: '' clears one (back to its default). */
function pagesInput(opts: UpdateOptions): TenantPagesInput {
  const cleared = (value: string | undefined) => (value === '' ? null : value)
  let logo: Uint8Array | undefined
  if (opts.logo !== undefined) {
    try {
      logo = readFileSync(opts.logo)
    } catch {
      throw new UsageError(`cannot read the logo file ${opts.logo}`)
    }
  }
  return { slug: cleared(opts.slug), displayName: cleared(opts.displayName), accentColor: cleared(opts.accentColor), logoUrl: cleared(opts.logoUrl), logo }
}
