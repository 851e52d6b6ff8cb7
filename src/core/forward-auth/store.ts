// The storage contract of access rules: composed into Store (core/store.ts), implemented by each
// engine in src/db. The protected domains are a tenant setting (tenants/store.ts).
import type { AccessRule } from './types'

export interface AccessRuleStore {
  /** The tenant's rules in order (position 1 first). */
  list(tenantId: string): Promise<AccessRule[]>
  get(id: string): Promise<AccessRule | null>
  /**
   * Inserts the rule at `position` (1-based; null or past the end: last), moving the rules at
   * and after it down by one, in one transaction that also holds the tenant to `maxRules`
   * ('full', writing nothing). Returns the rule with the position it took.
   */
  insert(rule: Omit<AccessRule, 'position'>, position: number | null, maxRules: number): Promise<AccessRule | 'full'>
  /** Deletes the rule and closes the gap it leaves (one transaction); false if there was none. */
  delete(id: string): Promise<boolean>
}
