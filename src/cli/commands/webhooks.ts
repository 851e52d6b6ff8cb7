// `authd webhooks`: a tenant's webhook endpoints (product spec §22). The signing secret is
// printed once, at create and rotate-secret, and never again.
import type { Command } from 'commander'
import { createEndpoint, deleteEndpoint, listDeliveries, listEndpoints, redeliver, rotateSecret, updateEndpoint, type EndpointView } from '../../core/webhooks/endpoints'
import { contextFrom } from '../context'
import { required, table, UsageError } from '../io'
import type { Env } from '../env'
import { integerOption } from '../usage'

const row = (e: EndpointView) => ({ ...e, events: e.events.join(',') })

export function registerWebhooks(program: Command, env: Env) {
  const webhooks = program.command('webhooks').description("send a tenant's account events to your systems, signed (Standard Webhooks)")

  webhooks
    .command('create')
    .description('add an endpoint; its signing secret is printed once and never again')
    .option('--tenant <tenantId>', 'the tenant whose events it receives')
    .option('--url <url>', 'where events are POSTed (https)')
    .option('--events <patterns>', 'event types or patterns, comma-separated: user.*,session.created or *', '*')
    .option('--description <text>', 'a label for the endpoint')
    .action(async (opts: { tenant?: string; url?: string; events: string; description?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const url = await required(ctx.out, opts.url, '--url', 'Endpoint URL (https://…)')
      const { endpoint, secret } = await ctx.withRuntime((rt) => createEndpoint(rt, { tenantId, url, events: opts.events, description: opts.description }))
      ctx.out.result({ ...endpoint, secret }, () => [
        `created webhook endpoint ${endpoint.id} for tenant ${endpoint.tenantId}: ${endpoint.url} (${endpoint.events.join(',')})`,
        `secret: ${secret}`,
        'Store it now (your receiver verifies each delivery with it): it is not shown again.',
      ])
    })

  webhooks
    .command('list')
    .description('list endpoints (never their secrets)')
    .option('--tenant <tenantId>', 'only this tenant')
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const endpoints = await ctx.withRuntime((rt) => listEndpoints(rt, { tenantId: opts.tenant }))
      ctx.out.result(endpoints, () => table(endpoints.map(row), ['id', 'tenantId', 'url', 'events', 'enabled', 'failingSince', 'createdAt']))
    })

  webhooks
    .command('update <endpointId>')
    .description('change the URL, events or description; --enable or --disable it')
    .option('--url <url>', 'a new URL (https)')
    .option('--events <patterns>', 'new event types or patterns, comma-separated')
    .option('--description <text>', 'a new label')
    .option('--enable', 'send to it again (after it was disabled for failing, or by an admin)')
    .option('--disable', 'stop sending to it; deliveries wait until it is enabled')
    .action(async (endpointId: string, opts: { url?: string; events?: string; description?: string; enable?: boolean; disable?: boolean }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      if (opts.enable && opts.disable) throw new UsageError('--enable and --disable exclude each other')
      const enabled = opts.enable ? true : opts.disable ? false : undefined
      const endpoint = await ctx.withRuntime((rt) => updateEndpoint(rt, endpointId, { url: opts.url, events: opts.events, description: opts.description, enabled }))
      ctx.out.result(endpoint, () => `updated webhook endpoint ${endpoint.id}: ${endpoint.url} (${endpoint.events.join(',')})${endpoint.enabled ? '' : ', disabled'}`)
    })

  webhooks
    .command('rotate-secret <endpointId>')
    .description('a new signing secret, printed once; the previous one also signs for 24 hours')
    .action(async (endpointId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const { endpoint, secret } = await ctx.withRuntime((rt) => rotateSecret(rt, endpointId))
      ctx.out.result({ ...endpoint, secret }, () => [
        `rotated the secret of webhook endpoint ${endpoint.id}`,
        `secret: ${secret}`,
        `Until ${endpoint.previousSecretUntil} each delivery is signed with both secrets; give your receiver the new one before then. It is not shown again.`,
      ])
    })

  webhooks
    .command('delete <endpointId>')
    .description('delete an endpoint and its deliveries')
    .action(async (endpointId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      await ctx.withRuntime((rt) => deleteEndpoint(rt, endpointId))
      ctx.out.result({ id: endpointId }, () => `deleted webhook endpoint ${endpointId}`)
    })

  webhooks
    .command('deliveries <endpointId>')
    .description("an endpoint's deliveries, newest first")
    .option('--status <status>', 'only pending, sending, succeeded or dead ones')
    .option('--limit <n>', 'at most this many, 1 to 1000', integerOption('--limit', 1, 1000), 50)
    .action(async (endpointId: string, opts: { status?: string; limit: number }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const deliveries = await ctx.withRuntime((rt) => listDeliveries(rt, endpointId, { status: opts.status, limit: opts.limit }))
      const rows = deliveries.map((d) => ({ ...d }))
      ctx.out.result(deliveries, () => table(rows, ['id', 'webhookId', 'eventType', 'status', 'attempts', 'lastStatus', 'lastError', 'createdAt']))
    })

  webhooks
    .command('redeliver <deliveryId>')
    .description('send a dead (or delivered) delivery again, with the same webhook-id')
    .action(async (deliveryId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const delivery = await ctx.withRuntime((rt) => redeliver(rt, deliveryId))
      ctx.out.result(delivery, () => `queued delivery ${delivery.id} (${delivery.eventType}, webhook-id ${delivery.webhookId}) again`)
    })
}
