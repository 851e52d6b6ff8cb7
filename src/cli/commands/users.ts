import type { Command } from 'commander'
import type { Runtime } from '../../runtime'
import { getTenant } from '../../core/tenants'
import type { User } from '../../core/types'
import { createUser, setUserDisabled, toPublicUser } from '../../core/users'
import { contextFrom } from '../context'
import { isoTime, readPasswordFromStdin, required, table } from '../io'
import type { Env } from '../index'
import { registerUserPasswords } from './user-passwords'

async function view(rt: Runtime, user: User) {
  const tenant = await getTenant(rt, user.tenantId)
  return { ...toPublicUser(user, tenant), hasPassword: user.passwordHash !== null, disabled: user.disabledAt !== null, createdAt: isoTime(user.createdAt) }
}

interface CreateOptions {
  tenant?: string
  email?: string
  firstName?: string
  lastName?: string
  type: string
  passwordStdin?: boolean
}

export function registerUsers(program: Command, env: Env) {
  const users = program.command('users').description('create, list, disable, enable, invite and import users; set passwords')

  users
    .command('create')
    .description('create a user; without --password-stdin a setup token is issued for POST /setup-password')
    .option('--tenant <tenantId>', 'the tenant the user belongs to')
    .option('--email <email>', 'e-mail address (unique within the tenant)')
    .option('--first-name <name>', 'first name')
    .option('--last-name <name>', 'last name')
    .option('--type <type>', 'admin, user or tenant', 'user')
    .option('--password-stdin', 'read the password from standard input (the policy applies)')
    .action(async (opts: CreateOptions, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const email = await required(ctx.out, opts.email, '--email', 'E-mail address')
      const firstName = await required(ctx.out, opts.firstName, '--first-name', 'First name')
      const lastName = await required(ctx.out, opts.lastName, '--last-name', 'Last name')
      const password = opts.passwordStdin ? await readPasswordFromStdin() : undefined
      const created = await ctx.withRuntime((rt) => createUser(rt, { tenantId, email, firstName, lastName, type: opts.type, password }))
      const user = toPublicUser(created.user, created.tenant)
      const setup = created.setupToken
      ctx.out.result(setup ? { ...user, setupToken: setup.token, setupTokenExpiresAt: isoTime(setup.expiresAt) } : user, () => [
        `created ${user.type} ${user.email} (${user.userId}) in tenant ${user.tenant.name}`,
        ...(setup
          ? [`setup token (valid until ${isoTime(setup.expiresAt)}): ${setup.token}`, 'Hand it to the user for POST /api/v1/auth/setup-password; it is not shown again.']
          : []),
      ])
    })

  users
    .command('list')
    .description("list a tenant's users")
    .option('--tenant <tenantId>', 'the tenant')
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const rows = await ctx.withRuntime(async (rt) => {
        await getTenant(rt, tenantId)
        return Promise.all((await rt.store.users.list(tenantId)).map((u) => view(rt, u)))
      })
      ctx.out.result(rows, () => table(rows, ['userId', 'email', 'type', 'hasPassword', 'disabled', 'createdAt']))
    })

  for (const [name, disabled] of [['disable', true], ['enable', false]] as const) {
    users
      .command(`${name} <userId>`)
      .description(disabled ? 'disable a user: login is refused and every session ends' : 'enable a user again')
      .action(async (userId: string, _: unknown, cmd: Command) => {
        const ctx = contextFrom(cmd, env)
        const user = await ctx.withRuntime(async (rt) => view(rt, await setUserDisabled(rt, userId, disabled)))
        ctx.out.result(user, () => `${disabled ? 'disabled' : 'enabled'} user ${user.email} (${user.userId})`)
      })
  }
  registerUserPasswords(users, env)
}
