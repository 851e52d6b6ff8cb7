import type { Command } from 'commander'
import type { OutboxMessage } from '../../core/types'
import { contextFrom } from '../context'
import { isoTime, table } from '../io'
import type { Env } from '../env'

// Metadata only: a message's body may hold an OTP or a setup token.
const view = (m: OutboxMessage) => ({
  mailId: m.id,
  kind: m.kind,
  recipient: m.recipient,
  subject: m.subject,
  status: m.status,
  attempts: m.attempts,
  nextAttemptAt: m.status === 'pending' ? isoTime(m.nextAttemptAt) : null,
  lastError: m.lastError,
  createdAt: isoTime(m.createdAt),
  sentAt: isoTime(m.sentAt),
})

export function registerMail(program: Command, env: Env) {
  const mail = program.command('mail').description('the mail outbox')

  mail
    .command('list')
    .description('list outbox messages, newest first (never their bodies)')
    .option('--pending', 'only messages not yet delivered')
    .action(async (opts: { pending?: boolean }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const rows = (await ctx.withRuntime((rt) => rt.store.outbox.list({ pendingOnly: opts.pending }))).map(view)
      ctx.out.result(rows, () => table(rows, ['mailId', 'kind', 'recipient', 'status', 'attempts', 'lastError', 'createdAt']))
    })

  mail
    .command('retry')
    .description('put failed messages back in the queue (a message whose secret has expired is then dropped, not sent)')
    .action(async (_: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const requeued = await ctx.withRuntime((rt) => rt.store.outbox.retryFailed(rt.clock.now()))
      ctx.out.result({ requeued }, () => `re-queued ${requeued} failed message(s); authd serve delivers them`)
    })
}
