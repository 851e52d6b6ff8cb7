// Forward authentication as the CLI and the admin API show it, one shape for both: an access
// rule (`authd access-rules`, /access-rules), and a tenant's protected domains with the domain
// of their session cookie (`authd tenants show`, GET /tenant).
import type { Config } from '../../config'
import type { Tenant } from '../types'
import { cookieDomainOf, forwardAuthDomainsOf } from './domains'
import type { AccessPolicy, AccessRule } from './types'

export interface AccessRuleView {
  ruleId: string
  /** 1 for the rule asked first. */
  position: number
  domain: string
  /** Path prefixes; none: every path. */
  paths: string[]
  /** Methods; none: every method. */
  methods: string[]
  policy: AccessPolicy
  /** Group names any of whose members the rule admits; none: any signed-in user. */
  groups: string[]
  createdAt: string
}

export const toAccessRuleView = (rule: AccessRule): AccessRuleView => ({
  ruleId: rule.id,
  position: rule.position,
  domain: rule.domain,
  paths: rule.paths,
  methods: rule.methods,
  policy: rule.policy,
  groups: rule.groups,
  createdAt: new Date(rule.createdAt).toISOString(),
})

/** The tenant's protected domains, and the Domain of the session cookie a sign-in on the pages
 *  sets for them: null with none, or when AUTHD_PUBLIC_URL moved off them (then none is set). */
export function toForwardAuthSettingsView(config: Pick<Config, 'publicUrl'>, tenant: Pick<Tenant, 'forwardAuthDomains'>) {
  const forwardAuthDomains = forwardAuthDomainsOf(tenant)
  return { forwardAuthDomains, cookieDomain: forwardAuthDomains.length === 0 ? null : cookieDomainOf(forwardAuthDomains, config.publicUrl) }
}
