import type { Command } from 'commander'
import { resetMfa } from '../../core/mfa/enrolment'
import { deleteUserPasskey, listUserPasskeys } from '../../core/passkeys/manage'
import { listIdentities, unlinkIdentity } from '../../core/federation/identities'
import { createUser, deleteUser, listUsers, MAX_PAGE, setUserDisabled, toCreatedUserView, updateUser, userView, viewUser, type UserView } from '../../core/accounts/users'
import { contextFrom } from '../context'
import { readPasswordFromStdin, required, table, UsageError } from '../io'
import type { Env } from '../env'
import { integerOption } from '../usage'
import { registerUserPasswords } from './user-passwords'

const flattenUser = (user: UserView): Record<string, unknown> => ({ ...user, tenant: user.tenant.name, groups: user.groups.join(',') })
const USER_COLUMNS = ['userId', 'email', 'type', 'hasPassword', 'disabled', 'createdAt']

interface CreateOptions {
  tenant?: string
  email?: string
  firstName?: string
  lastName?: string
  type: string
  passwordStdin?: boolean
  invite?: boolean
  emailVerified?: boolean
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
    .option('--invite', 'e-mail the setup token to the user instead of printing it')
    .option('--email-verified', 'you vouch that the user receives mail at this address (sets emailVerifiedAt)')
    .action(async (opts: CreateOptions, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const email = await required(ctx.out, opts.email, '--email', 'E-mail address')
      const firstName = await required(ctx.out, opts.firstName, '--first-name', 'First name')
      const lastName = await required(ctx.out, opts.lastName, '--last-name', 'Last name')
      const password = opts.passwordStdin ? await readPasswordFromStdin() : undefined
      const created = await ctx.withRuntime((rt) => createUser(rt, { tenantId, email, firstName, lastName, type: opts.type, password, invite: opts.invite, emailVerified: opts.emailVerified }))
      const user = toCreatedUserView(created)
      if (opts.invite && !ctx.config().inviteUrl) ctx.linkWritten()
      ctx.out.result(user, () => [
        `created ${user.type} ${user.email} (${user.userId}) in tenant ${user.tenant.name}`,
        ...(opts.invite ? ['setup token e-mailed (the server delivers it: see authd mail list)'] : []),
        ...(user.setupToken
          ? [`setup token (valid until ${user.setupTokenExpiresAt}): ${user.setupToken}`, 'Hand it to the user for POST /api/v1/auth/setup-password; it is not shown again.']
          : []),
      ])
    })

  users
    .command('list')
    .description("list a tenant's users in creation order, a page at a time (as GET /api/v1/admin/users)")
    .option('--tenant <tenantId>', 'the tenant')
    .option('--email <email>', 'only this address')
    .option('--limit <n>', `users per page, 1 to ${MAX_PAGE}`, integerOption('--limit', 1, MAX_PAGE), MAX_PAGE)
    .option('--cursor <cursor>', 'the page after the one that printed this cursor')
    .action(async (opts: { tenant?: string; email?: string; limit: number; cursor?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const page = await ctx.withRuntime((rt) => listUsers(rt, tenantId, { email: opts.email, cursor: opts.cursor, limit: opts.limit }))
      ctx.out.result(page, () => [...table(page.items.map(flattenUser), [...USER_COLUMNS, 'groups']), ...(page.nextCursor ? [`more: authd users list --tenant ${tenantId} --cursor ${page.nextCursor}`] : [])].join('\n'))
    })

  users
    .command('show <userId>')
    .description('one user (as GET /api/v1/admin/users/ID), with the upstream identities linked to them (as GET …/identities)')
    .action(async (userId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const user = await ctx.withRuntime(async (rt) => ({ ...(await viewUser(rt, userId)), identities: await listIdentities(rt, userId) }))
      ctx.out.result(user, () => [
        ...table([flattenUser(user)], [...USER_COLUMNS, 'firstName', 'lastName', 'updatedAt', 'emailVerifiedAt', 'groups']),
        ...(user.identities.length > 0 ? ['', `identities (${user.identities.length}):`, ...table(user.identities.map((i) => ({ ...i, provider: `${i.providerName} (${i.providerType})` })), ['identityId', 'provider', 'email', 'linkedAt', 'lastUsedAt'])] : []),
      ])
    })

  users
    .command('unlink-identity <userId> <identityId>')
    .description("unlink an upstream identity from a user (as DELETE /api/v1/admin/users/ID/identities/IDENTITY_ID); the user's last way to sign in is refused")
    .action(async (userId: string, identityId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const unlinked = await ctx.withRuntime((rt) => unlinkIdentity(rt, userId, identityId))
      ctx.out.result(unlinked, () => `unlinked identity ${identityId} from user ${userId}`)
    })

  users
    .command('update <userId>')
    .description('change address, names or type (as PATCH /api/v1/admin/users/ID); a new address is unverified unless --email-verified')
    .option('--email <email>', 'a new e-mail address (clears emailVerifiedAt; setup tokens and OTPs mailed to the old one stop working)')
    .option('--first-name <name>', 'first name')
    .option('--last-name <name>', 'last name')
    .option('--type <type>', 'admin, user or tenant')
    .option('--email-verified', 'you vouch that the user receives mail at the (new) address (sets emailVerifiedAt)')
    .action(async (userId: string, opts: { email?: string; firstName?: string; lastName?: string; type?: string; emailVerified?: boolean }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      // The domain's message names the API's fields; here the flags are what to give.
      if (Object.values(opts).every((value) => value === undefined)) throw new UsageError('nothing to change: give --email, --first-name, --last-name, --type or --email-verified')
      const user = await ctx.withRuntime((rt) => updateUser(rt, userId, opts))
      ctx.out.result(user, () => `updated user ${user.email} (${user.userId})`)
    })

  users
    .command('delete <userId>')
    .description("delete a user and erase their personal data; audit events keep only the id (as DELETE /api/v1/admin/users/ID)")
    .action(async (userId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const deleted = await ctx.withRuntime((rt) => deleteUser(rt, userId))
      ctx.out.result(deleted, () => `deleted user ${deleted.userId} and erased their personal data`)
    })

  users
    .command('mfa-reset <userId>')
    .description("remove a user's second factor (a lost authenticator): login asks for the password only, and the user is mailed (as DELETE /api/v1/admin/users/ID/mfa)")
    .action(async (userId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const removed = await ctx.withRuntime((rt) => resetMfa(rt, userId))
      ctx.out.result({ userId, removed }, () => (removed ? `removed the second factor of user ${userId}` : `user ${userId} had no second factor`))
    })

  const passkeys = users.command('passkeys').description("a user's passkeys (as GET and DELETE /api/v1/admin/users/ID/passkeys)")
  passkeys
    .command('list <userId>')
    .description("list a user's passkeys")
    .action(async (userId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const rows = await ctx.withRuntime((rt) => listUserPasskeys(rt, userId))
      ctx.out.result(rows, () => (rows.length === 0 ? `user ${userId} has no passkey` : table(rows, ['passkeyId', 'name', 'authenticator', 'deviceType', 'createdAt', 'lastUsedAt'])))
    })
  passkeys
    .command('delete <userId> <passkeyId>')
    .description("remove a user's passkey (a lost or stolen device): it signs in no more")
    .action(async (userId: string, passkeyId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const removed = await ctx.withRuntime((rt) => deleteUserPasskey(rt, userId, passkeyId))
      ctx.out.result(removed, () => `removed passkey ${passkeyId} of user ${userId}`)
    })

  for (const [name, disabled] of [['disable', true], ['enable', false]] as const) {
    users
      .command(`${name} <userId>`)
      .description(disabled ? 'disable a user: login is refused and every session ends' : 'enable a user again')
      .action(async (userId: string, _: unknown, cmd: Command) => {
        const ctx = contextFrom(cmd, env)
        const user = await ctx.withRuntime(async (rt) => userView(rt, await setUserDisabled(rt, userId, disabled)))
        ctx.out.result(user, () => `${disabled ? 'disabled' : 'enabled'} user ${user.email} (${user.userId})`)
      })
  }
  registerUserPasswords(users, env)
}
