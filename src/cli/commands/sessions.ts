import type { Command } from 'commander'
import { revokeUserSessions } from '../../core/sessions'
import { contextFrom } from '../context'
import { required } from '../io'
import type { Env } from '../index'

export function registerSessions(program: Command, env: Env) {
  program
    .command('sessions')
    .description('login sessions (refresh-token families)')
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
