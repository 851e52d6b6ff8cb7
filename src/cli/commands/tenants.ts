import type { Command } from 'commander'
import { createTenant, setTenantDisabled } from '../../core/tenants'
import type { Tenant } from '../../core/types'
import { contextFrom } from '../context'
import { isoTime, required, table } from '../io'
import type { Env } from '../index'

const view = (t: Tenant) => ({ tenantId: t.id, name: t.name, disabled: t.disabledAt !== null, createdAt: isoTime(t.createdAt) })

export function registerTenants(program: Command, env: Env) {
  const tenants = program.command('tenants').description('create, list, disable and enable tenants')

  tenants
    .command('create')
    .description('create a tenant')
    .option('--name <name>', 'the tenant name')
    .action(async (opts: { name?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const name = await required(ctx.out, opts.name, '--name', 'Tenant name')
      const tenant = await ctx.withRuntime((rt) => createTenant(rt, name))
      ctx.out.result({ tenantId: tenant.id, name: tenant.name }, () => `created tenant ${tenant.name} (${tenant.id})`)
    })

  tenants
    .command('list')
    .description('list tenants')
    .action(async (_: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const rows = (await ctx.withRuntime((rt) => rt.store.tenants.list())).map(view)
      ctx.out.result(rows, () => table(rows, ['tenantId', 'name', 'disabled', 'createdAt']))
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
