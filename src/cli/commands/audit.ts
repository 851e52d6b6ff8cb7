import type { Command } from 'commander'
import { parseDuration } from '../../config'
import { contextFrom } from '../context'
import { MAX_AUDIT_LIMIT, readAudit } from '../../core/audit/audit'
import { table, UsageError } from '../io'
import type { Env } from '../env'
import { integerOption } from '../usage'

/** "24h", "7d" (that long ago) or an ISO date/time. */
function parseSince(raw: string, now: number): number {
  if (/^\d+[smhd]?$/.test(raw)) return now - parseDuration('--since', raw) * 1000
  const at = Date.parse(raw)
  if (Number.isNaN(at)) throw new UsageError(`--since must be a duration such as 24h or a date such as 2026-11-01 (got "${raw}")`)
  return at
}

export function registerAudit(program: Command, env: Env) {
  program
    .command('audit')
    .description('query the audit log of security events, newest first')
    .option('--tenant <tenantId>', 'only this tenant')
    .option('--user <userId>', 'only this user')
    .option('--type <type>', 'only this event type, or a family such as login.*')
    .option('--since <when>', 'only events since a duration ago (24h, 7d) or a date')
    .option('--limit <n>', `at most this many events, 1 to ${MAX_AUDIT_LIMIT}`, integerOption('--limit', 1, MAX_AUDIT_LIMIT), 100)
    .action(async (opts: { tenant?: string; user?: string; type?: string; since?: string; limit: number }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const rows = await ctx.withRuntime((rt) =>
        readAudit(rt, {
          tenantId: opts.tenant,
          userId: opts.user,
          type: opts.type,
          since: opts.since === undefined ? undefined : parseSince(opts.since, rt.clock.now()),
          limit: opts.limit,
        }),
      )
      ctx.out.result(rows, () =>
        table(
          rows.map((r) => ({ ...r, actor: r.apiKeyId ? `api-key:${r.apiKeyId}` : r.actorUserId ? `console:${r.actorUserId}` : (r.ip ?? r.userAgent), detail: r.detail === null ? null : JSON.stringify(r.detail) })),
          ['at', 'type', 'tenantId', 'userId', 'actor', 'detail'],
        ),
      )
    })
}
