// `authd access-rules`: a tenant's forward-authentication rules (product spec §24), asked in
// order: the first whose domain, path and method match a request decides, and a request no
// rule matches is denied. The same domain functions as /api/v1/admin/access-rules.
import type { Command } from 'commander'
import { addAccessRule, listAccessRules, MAX_RULES, removeAccessRule } from '../../core/forward-auth/rules'
import { ACCESS_POLICIES } from '../../core/forward-auth/types'
import { toAccessRuleView, type AccessRuleView } from '../../core/forward-auth/view'
import { contextFrom } from '../context'
import { required, table, UsageError } from '../io'
import { integerOption } from '../usage'
import type { Env } from '../env'

/** A repeatable option's values, each of which may also be a comma-separated list. */
const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',')]

/**
 * The values of a list option as typed, without empty ones. Given but empty (`--groups ''`,
 * most likely an empty variable in a script) is a usage error: leaving the list out widens the
 * rule (every path, every method, any signed-in user), which a typo must never do.
 */
function listOption(values: string[] | undefined, flag: string, leftOut: string): string[] | undefined {
  if (values === undefined) return undefined
  const given = values.map((value) => value.trim()).filter((value) => value !== '')
  if (given.length === 0) throw new UsageError(`${flag} '' names nothing: leave ${flag} out for a rule ${leftOut}`)
  return given
}

const every = (list: string[]) => (list.length === 0 ? '*' : list.join(','))
const row = (rule: AccessRuleView) => ({ ...rule, paths: every(rule.paths), methods: every(rule.methods), groups: rule.groups.length === 0 ? '-' : rule.groups.join(',') })
const describe = (rule: AccessRuleView) => {
  const where = `${rule.domain}${rule.paths.length > 0 ? ` ${rule.paths.join(', ')}` : ''}${rule.methods.length > 0 ? ` (${rule.methods.join(', ')})` : ''}`
  return `${where}: ${rule.policy}${rule.groups.length > 0 ? ` for members of ${rule.groups.join(', ')}` : ''}`
}

type AddOptions = { tenant?: string; domain?: string; path?: string[]; method?: string[]; policy?: string; groups?: string[]; position?: number }

export function registerAccessRules(program: Command, env: Env) {
  const rules = program
    .command('access-rules')
    .description("a tenant's forward-authentication rules: asked in order, the first that matches a request decides, and a request none matches is denied")

  rules
    .command('add')
    .description("add a rule (its domain inside one of the tenant's forward-auth domains: authd tenants update --forward-auth-domain)")
    .option('--tenant <tenantId>', 'the tenant')
    .option('--domain <host>', 'app.example.com, or *.example.com for every host under a domain')
    .option('--path <prefix>', 'a path prefix the rule is for, such as /admin; repeat it or give a comma-separated list (default: every path)', collect)
    .option('--method <method>', 'an HTTP method the rule is for; repeat it or give a comma-separated list (default: every method)', collect)
    .option('--policy <policy>', `${ACCESS_POLICIES.join(', ')} (two_factor: only a sign-in with a second factor)`)
    .option('--groups <names>', 'groups of the tenant any of whose members the rule admits (one_factor and two_factor only); repeat it or give a comma-separated list (default: any signed-in user)', collect)
    .option('--position <n>', `where the rule goes, 1 first (the rules at and after it move down; default: last)`, integerOption('--position', 1, MAX_RULES))
    .action(async (opts: AddOptions, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const input = {
        paths: listOption(opts.path, '--path', 'on every path'),
        methods: listOption(opts.method, '--method', 'on every method'),
        groups: listOption(opts.groups, '--groups', 'that admits any signed-in user'),
        position: opts.position,
      }
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const domain = await required(ctx.out, opts.domain, '--domain', 'Domain (app.example.com or *.example.com)')
      const policy = await required(ctx.out, opts.policy, '--policy', `Policy (${ACCESS_POLICIES.join(', ')})`)
      const rule = toAccessRuleView(await ctx.withRuntime((rt) => addAccessRule(rt, tenantId, { ...input, domain, policy })))
      ctx.out.result(rule, () => `added access rule ${rule.position} (${rule.ruleId}) in tenant ${tenantId}: ${describe(rule)}`)
    })

  rules
    .command('list')
    .description("list a tenant's rules in the order they are asked in (as GET /api/v1/admin/access-rules)")
    .option('--tenant <tenantId>', 'the tenant')
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const list = (await ctx.withRuntime((rt) => listAccessRules(rt, tenantId))).map(toAccessRuleView)
      ctx.out.result(list, () => table(list.map(row), ['position', 'ruleId', 'domain', 'paths', 'methods', 'policy', 'groups']))
    })

  rules
    .command('remove <ruleId>')
    .description('remove a rule (the rules after it move up one place)')
    .action(async (ruleId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const removed = toAccessRuleView(await ctx.withRuntime((rt) => removeAccessRule(rt, ruleId)))
      ctx.out.result({ ruleId: removed.ruleId }, () => `removed access rule ${removed.position} (${removed.ruleId}): ${describe(removed)}`)
    })
}
