// The database going away is not a crash: a Store call that fails because the database cannot
// be reached becomes `503 Service unavailable` with Retry-After, and service resumes by itself
// once the engine's client reconnects. Every other error passes through untouched.
import { serviceUnavailable } from '../core/errors'
import type { Store } from '../core/store'

/** Seconds a client is told to wait while the database is unreachable. */
const RETRY_AFTER_SEC = 5

export function reportUnavailability(store: Store, isUnavailable: (error: unknown) => boolean): Store {
  return wrapStoreMethods(store, async (call) => {
    try {
      return await call()
    } catch (error) {
      if (isUnavailable(error)) throw serviceUnavailable(RETRY_AFTER_SEC)
      throw error
    }
  })
}

/**
 * Every Store method is one transaction: one the engine aborted to break a deadlock (two
 * requests locking the same rows in other orders, such as a login's session ending a back-off
 * run while another guess at the account counts in it) wrote nothing and is run again, a few
 * times, before the error goes on.
 */
export function retryAborted(store: Store, isAborted: (error: unknown) => boolean, attempts = 4): Store {
  return wrapStoreMethods(store, async (call) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call()
      } catch (error) {
        if (attempt >= attempts || !isAborted(error)) throw error
      }
    }
  })
}

/** The store with each method's call run through `around` (close() stays synchronous, as is). */
function wrapStoreMethods(store: Store, around: (call: () => Promise<unknown>) => Promise<unknown>): Store {
  const wrap = (fn: (...args: unknown[]) => unknown) => (...args: unknown[]) => around(async () => fn(...args))
  const wrapped: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(store)) {
    if (typeof member === 'function') wrapped[name] = name === 'close' ? member : wrap(member as never)
    else wrapped[name] = Object.fromEntries(Object.entries(member as object).map(([method, fn]) => [method, wrap(fn as never)]))
  }
  return wrapped as unknown as Store
}
