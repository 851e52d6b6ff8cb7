import type { Command } from 'commander'
import { createTenant, setTenantAudience, setTenantDisabled } from '../../core/tenants'
import type { Tenant } from '../../core/types'
import { contextFrom } from '../context'
import { isoTime, required, table } from '../io'
import type { Env } from '../index'

const view = (t: Tenant) => ({ tenantId: t.id, name: t.name, audience: t.audience, disabled: t.disabledAt !== null, createdAt: isoTime(t.createdAt) })

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
    .requiredOption('--audience <aud>', "the aud claim of the tenant's access tokens from now on")
    .action(async (tenantId: string, opts: { audience: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenant = view(await ctx.withRuntime((rt) => setTenantAudience(rt, tenantId, opts.audience)))
      ctx.out.result(tenant, () => `tenant ${tenant.name} (${tenant.tenantId}): token audience ${tenant.audience}`)
    })

  tenants
    .command('list')
    .description('list tenants')
    .action(async (_: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const rows = (await ctx.withRuntime((rt) => rt.store.tenants.list())).map(view)
      ctx.out.result(rows, () => table(rows, ['tenantId', 'name', 'audience', 'disabled', 'createdAt']))
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
