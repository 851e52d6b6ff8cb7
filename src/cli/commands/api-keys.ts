import type { Command } from 'commander'
import { createApiKey, revokeApiKey } from '../../core/tenants/api-keys'
import type { ApiKey } from '../../core/types'
import { contextFrom } from '../context'
import { isoTime, required, table } from '../io'
import type { Env } from '../env'

const view = (k: ApiKey) => ({
  keyId: k.id,
  tenantId: k.tenantId,
  name: k.name,
  prefix: k.prefix,
  scope: k.scope,
  createdAt: isoTime(k.createdAt),
  revokedAt: isoTime(k.revokedAt),
})

export function registerApiKeys(program: Command, env: Env) {
  const apiKeys = program.command('api-keys').description('create, list and revoke API keys (X-API-KEY)')

  apiKeys
    .command('create')
    .description('create an API key for a tenant; the key is printed once and never again')
    .option('--tenant <tenantId>', 'the tenant the key selects')
    .option('--name <name>', 'a label for the key', 'default')
    .option('--scope <scope>', 'client (the auth API) or admin (also the admin API of its tenant)', 'client')
    .action(async (opts: { tenant?: string; name: string; scope: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const { apiKey, key } = await ctx.withRuntime((rt) => createApiKey(rt, { tenantId, name: opts.name, scope: opts.scope }))
      ctx.out.result({ keyId: apiKey.id, tenantId: apiKey.tenantId, name: apiKey.name, scope: apiKey.scope, key }, () => [
        `created ${apiKey.scope} API key ${apiKey.id} for tenant ${apiKey.tenantId}`,
        `key: ${key}`,
        'Store it now: it is not shown again.',
      ])
    })

  apiKeys
    .command('list')
    .description('list API keys (their prefixes, never the keys)')
    .option('--tenant <tenantId>', 'only this tenant')
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const rows = (await ctx.withRuntime((rt) => rt.store.apiKeys.list(opts.tenant))).map(view)
      ctx.out.result(rows, () => table(rows, ['keyId', 'tenantId', 'name', 'scope', 'prefix', 'createdAt', 'revokedAt']))
    })

  apiKeys
    .command('revoke <keyId>')
    .description('revoke an API key; it fails from the next request on')
    .action(async (keyId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const key = view(await ctx.withRuntime((rt) => revokeApiKey(rt, keyId)))
      ctx.out.result(key, () => `revoked API key ${key.keyId} (${key.prefix}…)`)
    })
}
