// Access rules (product spec §24): ordered per tenant, the first that matches a request's host,
// path and method decides, and a request no rule matches is denied. Rules name groups by name,
// so a group a rule admits by cannot be renamed or deleted out from under it (core/groups).
import { actorSees, audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { badRequest, conflict, notFoundById } from '../errors'
import { requireGroupNames, validateGroupName } from '../groups/groups'
import { getTenant } from '../tenants/tenants'
import { forwardAuthDomainsOf, isWithin, validateDomainName } from './domains'
import { forgetRules } from './rule-book'
import { ACCESS_POLICIES, type AccessPolicy, type AccessRule } from './types'

/** A tenant's rules at most: each check walks them in order. */
export const MAX_RULES = 500
const MAX_LIST = 20
const MAX_PATH = 200
/** The methods a rule may name. */
export const ACCESS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE'] as const
const METHODS = new Set<string>(ACCESS_METHODS)

type RuleDeps = Pick<Deps, 'store' | 'clock'>

export interface AccessRuleInput {
  domain?: unknown
  paths?: unknown
  methods?: unknown
  policy?: unknown
  groups?: unknown
  /** 1-based; absent: after the last rule. */
  position?: unknown
}

const listOf = (name: string, raw: unknown): string[] => {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw) || raw.some((item) => typeof item !== 'string')) throw badRequest(`${name} must be an array of strings`)
  if (raw.length > MAX_LIST) throw badRequest(`${name} must list at most ${MAX_LIST}`)
  return raw as string[]
}

/** `app.example.com` or `*.example.com`, inside one of the tenant's protected domains. */
function validateRuleDomain(raw: unknown, protectedDomains: string[]): string {
  if (typeof raw !== 'string' || raw.trim() === '') throw badRequest('domain is required: a host such as app.example.com, or *.example.com for every host under a domain')
  const typed = raw.trim().toLowerCase()
  const wildcard = typed.startsWith('*.')
  const host = validateDomainName(wildcard ? typed.slice(2) : typed, 'a host or *.domain')
  if (protectedDomains.length === 0) throw badRequest('The tenant protects no domain yet: the operator adds one with authd tenants update --forward-auth-domain')
  if (!protectedDomains.some((domain) => isWithin(host, domain))) throw badRequest(`${typed} is not inside the tenant's forward-auth domains (${protectedDomains.join(', ')})`)
  return wildcard ? `*.${host}` : host
}

/** A group name of a rule's list, stored lower-case; a malformed one named as the list's. */
function groupNameIn(raw: string): string {
  try {
    return validateGroupName(raw)
  } catch {
    throw badRequest(`groups must be group names (1 to 64 characters of a-z, 0-9, ".", "_" and "-"): ${JSON.stringify(raw.slice(0, 70))}`)
  }
}

function validatePaths(raw: unknown): string[] {
  const paths = listOf('paths', raw).map((typed) => {
    const path = typed.trim()
    const refused = `paths must be path prefixes starting with / (at most ${MAX_PATH} characters, no query): ${JSON.stringify(path.slice(0, 50))}`
    if (!path.startsWith('/') || path.length > MAX_PATH || /[\s\u0000-\u001f\u007f?#]/.test(path)) throw badRequest(refused)
    // Written as a request's path is read (normalisePath: decoded, lower case, no `;` parameter),
    // or the rule could never match.
    const normal = normalisePath(path)
    if (normal === null) throw badRequest(refused)
    return normal
  })
  return [...new Set(paths)]
}

function validateMethods(raw: unknown): string[] {
  const methods = listOf('methods', raw).map((method) => method.trim().toUpperCase())
  const unknown = methods.find((method) => !METHODS.has(method))
  if (unknown !== undefined) throw badRequest(`methods must be HTTP methods (${[...METHODS].join(', ')}): ${JSON.stringify(unknown.slice(0, 20))}`)
  return [...new Set(methods)]
}

function validatePolicy(raw: unknown): AccessPolicy {
  if (typeof raw !== 'string' || !(ACCESS_POLICIES as readonly string[]).includes(raw)) throw badRequest(`policy must be one of ${ACCESS_POLICIES.join(', ')}`)
  return raw as AccessPolicy
}

function validatePosition(raw: unknown): number | null {
  if (raw === undefined || raw === null) return null
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > MAX_RULES) throw badRequest(`position must be a whole number from 1 (first) to ${MAX_RULES}`)
  return raw
}

/** Adds a rule at its position (or last). Its groups must be the tenant's; its domain inside the tenant's protected domains. */
export async function addAccessRule(deps: RuleDeps, tenantId: string, input: AccessRuleInput, actor: Actor = CLI_ACTOR): Promise<AccessRule> {
  if (!actorSees(actor, tenantId)) throw notFoundById('Tenant', tenantId)
  const tenant = await getTenant(deps, tenantId)
  const domain = validateRuleDomain(input.domain, forwardAuthDomainsOf(tenant))
  const policy = validatePolicy(input.policy)
  const groups = [...new Set(listOf('groups', input.groups).map(groupNameIn))]
  // A bypass admits everyone and a deny no one: groups there would read as a promise the rule does not keep.
  if (groups.length > 0 && (policy === 'bypass' || policy === 'deny')) throw badRequest(`groups apply to one_factor and two_factor rules, not to ${policy}`)
  if (groups.length > 0) await requireGroupNames(deps, tenantId, groups)
  const rule = { id: Bun.randomUUIDv7(), tenantId, domain, paths: validatePaths(input.paths), methods: validateMethods(input.methods), policy, groups, createdAt: deps.clock.now() }
  const added = await deps.store.accessRules.insert(rule, validatePosition(input.position), MAX_RULES)
  if (added === 'full') throw conflict(`The tenant has ${MAX_RULES} access rules, the most it may have`)
  forgetRules(deps.store, tenantId)
  await audit(deps, 'access_rule.created', actor, { tenantId, detail: { ruleId: added.id, position: added.position, domain, policy, ...(groups.length > 0 && { groups }) } })
  return added
}

export async function listAccessRules(deps: Pick<Deps, 'store'>, tenantId: string, actor: Actor = CLI_ACTOR): Promise<AccessRule[]> {
  if (!actorSees(actor, tenantId)) throw notFoundById('Tenant', tenantId)
  await getTenant(deps, tenantId)
  return deps.store.accessRules.list(tenantId)
}

export async function getAccessRule(deps: Pick<Deps, 'store'>, ruleId: string, actor: Actor = CLI_ACTOR): Promise<AccessRule> {
  const rule = ruleId.length <= 100 ? await deps.store.accessRules.get(ruleId) : null
  if (!rule || !actorSees(actor, rule.tenantId)) throw notFoundById('Access rule', ruleId)
  return rule
}

export async function removeAccessRule(deps: RuleDeps, ruleId: string, actor: Actor = CLI_ACTOR): Promise<AccessRule> {
  const rule = await getAccessRule(deps, ruleId, actor)
  if (!(await deps.store.accessRules.delete(rule.id))) throw notFoundById('Access rule', ruleId)
  forgetRules(deps.store, rule.tenantId)
  await audit(deps, 'access_rule.deleted', actor, { tenantId: rule.tenantId, detail: { ruleId: rule.id, domain: rule.domain, policy: rule.policy } })
  return rule
}

/** The request a rule is asked about: its host without port, its path decoded, its method. */
export interface RequestAsked {
  host: string
  path: string
  method: string
}

const matchesDomain = (domain: string, host: string) => (domain.startsWith('*.') ? host.endsWith(domain.slice(1)) : host === domain)

/**
 * Whether a path is a prefix's or beneath it, by whole segments: /health holds /health and
 * /health/live, never /healthy or /health-admin (a bypass on one must not open the other); a
 * prefix ending in / holds what is beneath it.
 */
const underPrefix = (path: string, prefix: string) => path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`)

/** The first rule that matches, or null (denied). */
export function matchRule(rules: readonly AccessRule[], asked: RequestAsked): AccessRule | null {
  for (const rule of rules) {
    if (!matchesDomain(rule.domain, asked.host)) continue
    if (rule.methods.length > 0 && !rule.methods.includes(asked.method)) continue
    if (rule.paths.length > 0 && !rule.paths.some((prefix) => underPrefix(asked.path, prefix))) continue
    return rule
  }
  return null
}

/**
 * The path a rule is matched against, as the applications behind proxies read it, the most
 * lenient of them included: without its query, percent-decoded once, `\\` read as `/`, each
 * segment cut at `;` (Tomcat's and Jetty's path parameters: `/admin;x` is `/admin` there) and
 * rid of trailing dots and spaces (Windows: `/admin.` is `/admin`), dot segments resolved,
 * repeated slashes folded, in lower case (Express and IIS route `/ADMIN` as `/admin`). A rule on
 * /admin must hold for every path some application reads as /admin. Null for a path that does
 * not decode or holds a control character (`%00`: some applications stop reading there).
 */
export function normalisePath(raw: string): string | null {
  let decoded: string
  try {
    decoded = decodeURIComponent(raw.split(/[?#]/, 1)[0]!)
  } catch {
    return null
  }
  if (/[\u0000-\u001f\u007f]/.test(decoded)) return null
  const segments: string[] = []
  const parts = decoded
    .toLowerCase()
    .replace(/\\/g, '/')
    .split('/')
    .map((part) => {
      const cut = part.split(';', 1)[0]!
      return cut === '.' || cut === '..' ? cut : cut.replace(/[. ]+$/, '')
    })
  for (const part of parts) {
    if (part === '' || part === '.') continue
    if (part === '..') segments.pop()
    else segments.push(part)
  }
  const last = parts[parts.length - 1]
  const trailing = segments.length > 0 && (last === '' || last === '.' || last === '..')
  return `/${segments.join('/')}${trailing ? '/' : ''}`
}
