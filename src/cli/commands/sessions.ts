import type { Command } from 'commander'
import { listUserSessions, revokeUserSessions } from '../../core/sessions/sessions'
import { contextFrom } from '../context'
import { required, table } from '../io'
import type { Env } from '../env'

export function registerSessions(program: Command, env: Env) {
  const sessions = program.command('sessions').description('login sessions (refresh-token families)')

  sessions
    .command('list')
    .description("a user's live sessions, newest first (as GET /api/v1/admin/users/ID/sessions)")
    .option('--user <userId>', 'the user')
    .action(async (opts: { user?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const userId = await required(ctx.out, opts.user, '--user', 'User ID')
      const live = await ctx.withRuntime((rt) => listUserSessions(rt, userId))
      ctx.out.result(live, () => table(live.map((session) => ({ ...session })), ['sessionId', 'createdAt', 'lastUsedAt', 'expiresAt', 'ip', 'userAgent']))
    })

  sessions
    .command('revoke')
    .description("revoke every session of a user: their refresh cookies stop working at once")
    .option('--user <userId>', 'the user')
    .action(async (opts: { user?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const userId = await required(ctx.out, opts.user, '--user', 'User ID')
      const revoked = await ctx.withRuntime((rt) => revokeUserSessions(rt, userId))
      ctx.out.result({ userId, revoked }, () => `revoked ${revoked} session(s) of user ${userId}`)
    })
}
