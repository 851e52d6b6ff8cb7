// users invite | set-password | import: the CLI side of the password lifecycle.
import type { Command } from 'commander'
import { inviteUser, toInvitationView } from '../../core/accounts/setup-password'
import { importUsers, parseImportFile } from '../../core/accounts/user-import'
import { checkPasswordPolicy } from '../../core/accounts/password-policy'
import { getUser, setUserPassword } from '../../core/accounts/users'
import { deliverDue } from '../../core/mail/outbox'
import { silentLogger } from '../../log'
import { mailTransportFor } from '../../mail/transports'
import { deliverNow } from '../deliver'
import { contextFrom } from '../context'
import { CliError, isoTime, promptNewPassword, readPasswordFromStdin, required, table, UsageError } from '../io'
import type { Env } from '../env'

export function registerUserPasswords(users: Command, env: Env) {
  users
    .command('invite <userId>')
    .description('issue a new setup token (earlier ones stop working), e-mail it to the user and print it')
    .action(async (userId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const { invited, delivery } = await ctx.withRuntime(async (rt) => {
        const invited = await inviteUser(rt, userId)
        return { invited, delivery: (await deliverNow(rt, invited.mailId)).says }
      })
      const view = toInvitationView(invited)
      if (!ctx.config().inviteUrl) ctx.linkWritten()
      const expiresAt = view.expiresAt
      ctx.out.result(view, () => [
        `invitation for ${invited.user.email} ${delivery}`,
        `setup token (valid until ${expiresAt}): ${invited.setupToken}`,
      ])
    })

  users
    .command('set-password <userId>')
    .description("set a user's password (the policy applies); every session of the user ends and they are told by mail")
    .option('--password-stdin', 'read the password from standard input')
    .action(async (userId: string, opts: { passwordStdin?: boolean }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      if (!opts.passwordStdin && (ctx.out.json || !process.stdin.isTTY)) throw new UsageError('missing --password-stdin (the password is read from standard input)')
      const user = await ctx.withRuntime(async (rt) => {
        let password: string
        if (opts.passwordStdin) password = await readPasswordFromStdin()
        else {
          // (the user first: nobody types a password for an id that does not exist)
          const target = await getUser(rt, userId)
          password = await promptNewPassword('New password', (answer) => checkPasswordPolicy(answer, rt.config.passwordMinLength, target))
        }
        const user = await setUserPassword(rt, userId, password)
        await deliverDue(rt, mailTransportFor(rt.config, silentLogger), silentLogger)
        return user
      })
      ctx.out.result({ userId: user.id, email: user.email }, () => `password set for ${user.email}; their sessions were signed out`)
    })

  users
    .command('import <file>')
    .description('create users from a JSON array or a CSV file (header: email,firstName,lastName[,type][,password][,groups], groups as names separated by |); all rows are validated first, then all are created, with their memberships, or none')
    .option('--tenant <tenantId>', 'the tenant the users join')
    .action(async (file: string, opts: { tenant?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const source = Bun.file(file)
      if (!(await source.exists())) throw new CliError(`cannot read ${file}: no such file`)
      const rows = parseImportFile(await source.text())
      const result = await ctx.withRuntime((rt) => importUsers(rt, tenantId, rows))
      const created = result.created.map((c) => ({ ...c, groups: c.groups ?? [], setupTokenExpiresAt: c.setupTokenExpiresAt === undefined ? undefined : isoTime(c.setupTokenExpiresAt) }))
      ctx.out.result({ created, skipped: result.skipped }, () => [
        `created ${created.length} user(s), skipped ${result.skipped.length} already in the tenant`,
        ...(created.length > 0 ? ['', ...table(created.map((c) => ({ ...c, groups: c.groups.join(',') })), ['userId', 'email', 'type', 'groups', 'setupToken'])] : []),
        ...(result.skipped.length > 0 ? ['', ...table(result.skipped, ['email', 'reason'])] : []),
      ])
    })
}
