// `authd groups`: a tenant's groups and their members (product spec §23). Groups are flat: a
// group has users, never other groups. The same domain functions as /api/v1/admin/groups.
import type { Command } from 'commander'
import { addMembers, createGroup, deleteGroup, getGroup, listGroups, removeMembers, updateGroup } from '../../core/groups/groups'
import { allMembers } from '../../core/groups/members'
import { toGroupView } from '../../core/groups/types'
import { contextFrom } from '../context'
import { required, table, UsageError } from '../io'
import type { Env } from '../env'

const GROUP_COLUMNS = ['groupId', 'name', 'description', 'createdAt']
const collect = (value: string, previous: string[] = []) => [...previous, value]

/** The --user options given, or the usage error of none. */
function usersOf(opts: { user?: string[] }): string[] {
  if (!opts.user || opts.user.length === 0) throw new UsageError('missing required option --user (repeat it for several users)')
  return opts.user
}

export function registerGroups(program: Command, env: Env) {
  const groups = program.command('groups').description("a tenant's groups (flat: users only) and their members, for tokens' groups claim and who may use which client")

  groups
    .command('create')
    .description('create a group (its name: 1-64 of a-z, 0-9, ".", "_", "-", unique in the tenant)')
    .option('--tenant <tenantId>', 'the tenant the group belongs to')
    .option('--name <name>', 'the name tokens carry in their groups claim (stored lower-case)')
    .option('--description <text>', 'one line, at most 200 characters')
    .action(async (opts: { tenant?: string; name?: string; description?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const name = await required(ctx.out, opts.name, '--name', 'Group name')
      const group = toGroupView(await ctx.withRuntime((rt) => createGroup(rt, { tenantId, name, description: opts.description })))
      ctx.out.result(group, () => `created group ${group.name} (${group.groupId}) in tenant ${tenantId}`)
    })

  groups
    .command('list')
    .description("list a tenant's groups by name (as GET /api/v1/admin/groups)")
    .option('--tenant <tenantId>', 'the tenant')
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const list = (await ctx.withRuntime((rt) => listGroups(rt, tenantId))).map(toGroupView)
      ctx.out.result(list, () => table(list.map((g) => ({ ...g })), GROUP_COLUMNS))
    })

  groups
    .command('show <groupId>')
    .description('one group and its members')
    .action(async (groupId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const shown = await ctx.withRuntime(async (rt) => ({ ...toGroupView(await getGroup(rt, groupId)), members: await allMembers(rt, groupId) }))
      ctx.out.result(shown, () => [...table([shown], GROUP_COLUMNS), '', `members (${shown.members.length}):`, ...table(shown.members.map((m) => ({ ...m })), ['userId', 'email', 'firstName', 'lastName'])])
    })

  groups
    .command('update <groupId>')
    .description('rename a group or change its description (a group an OpenID client admits by cannot be renamed)')
    .option('--name <name>', 'a new name')
    .option('--description <text>', 'a new description ("" removes it)')
    .action(async (groupId: string, opts: { name?: string; description?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      if (opts.name === undefined && opts.description === undefined) throw new UsageError('nothing to change: give --name or --description')
      const group = toGroupView(await ctx.withRuntime((rt) => updateGroup(rt, groupId, opts)))
      ctx.out.result(group, () => `updated group ${group.name} (${group.groupId})`)
    })

  groups
    .command('delete <groupId>')
    .description('delete a group and its memberships (a group an OpenID client admits by cannot be deleted)')
    .action(async (groupId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const deleted = await ctx.withRuntime((rt) => deleteGroup(rt, groupId))
      ctx.out.result(deleted, () => `deleted group ${deleted.groupId}`)
    })

  groups
    .command('add <groupId>')
    .description('add users to a group (those already in it stay as they are)')
    .option('--user <userId>', 'a user of the group\'s tenant; repeat for several', collect)
    .action(async (groupId: string, opts: { user?: string[] }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const userIds = [...new Set(usersOf(opts))]
      const result = await ctx.withRuntime((rt) => addMembers(rt, groupId, userIds))
      ctx.out.result(result, () => `added ${result.added} user(s) to group ${groupId}${result.added < userIds.length ? ` (${userIds.length - result.added} already in it)` : ''}`)
    })

  groups
    .command('remove <groupId>')
    .description('remove users from a group (those not in it are no error)')
    .option('--user <userId>', 'a user of the group\'s tenant; repeat for several', collect)
    .action(async (groupId: string, opts: { user?: string[] }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const userIds = [...new Set(usersOf(opts))]
      const result = await ctx.withRuntime((rt) => removeMembers(rt, groupId, userIds))
      ctx.out.result(result, () => `removed ${result.removed} user(s) from group ${groupId}${result.removed < userIds.length ? ` (${userIds.length - result.removed} not in it)` : ''}`)
    })
}
