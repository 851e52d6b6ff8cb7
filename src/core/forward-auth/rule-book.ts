// What a check holds in memory (product spec §24): each tenant, as its URL names it, and its
// access rules, so a check reads neither from the store. A change on this instance is in force
// at once (forgetRules); one made elsewhere (the CLI, another instance) at the next reload, at
// most 15 s later.
import type { Deps } from '../deps'
import type { Store } from '../store'
import { findTenantForPages } from '../tenants/tenant-pages'
import type { Tenant } from '../types'
import { forwardAuthDomainsOf } from './domains'
import type { AccessRule } from './types'

export const RULES_RELOAD_MS = 15_000
/** Names of tenants held at most per store (a name nobody has is held too, so it costs no read). */
const MAX_HELD = 10_000

interface Held<T> {
  value: T
  loadedAt: number
  /** The reload under way, so a burst of checks after the deadline reads the store once. */
  loading: Promise<T> | null
}

/** Values read from a store, per store (a process may open several: the tests do) and key. */
class Book<T> {
  private readonly byStore = new WeakMap<Store, Map<string, Held<T>>>()

  async get(deps: Pick<Deps, 'store' | 'clock'>, key: string, load: () => Promise<T>): Promise<T> {
    let held = this.byStore.get(deps.store)
    if (!held) this.byStore.set(deps.store, (held = new Map()))
    const entry = held.get(key)
    const now = deps.clock.now()
    if (entry && entry.loading === null && now - entry.loadedAt < RULES_RELOAD_MS) return entry.value
    if (entry?.loading) return entry.loading
    const loading = load()
    if (held.size >= MAX_HELD) held.clear()
    const fresh: Held<T> = entry ?? { value: undefined as T, loadedAt: 0, loading: null }
    fresh.loading = loading
    held.set(key, fresh)
    try {
      const value = await loading
      // (a change forgotten while this read was under way is not overwritten by it)
      if (fresh.loading === loading) Object.assign(fresh, { value, loadedAt: now })
      return value
    } finally {
      if (fresh.loading === loading) fresh.loading = null
    }
  }

  forget(store: Store, key: string) {
    this.byStore.get(store)?.delete(key)
  }
}

const rules = new Book<AccessRule[]>()
const tenants = new Book<Tenant | null>()

/** The tenant's rules in order, from memory when read within the last 15 s. */
export const rulesOf = (deps: Pick<Deps, 'store' | 'clock'>, tenantId: string) => rules.get(deps, tenantId, () => deps.store.accessRules.list(tenantId))

/** The tenant a check's URL names (slug or id), enabled and protecting a domain (none: its
 *  forward authentication is off, whatever rules it kept), from memory when read within the last 15 s. */
export const tenantForChecks = (deps: Pick<Deps, 'store' | 'clock'>, ref: string) =>
  tenants.get(deps, ref, async () => {
    const tenant = await findTenantForPages(deps, ref)
    return tenant && forwardAuthDomainsOf(tenant).length > 0 ? tenant : null
  })

/** A change made here: the next check reads the rules again. */
export function forgetRules(store: Store, tenantId: string): void {
  rules.forget(store, tenantId)
}
