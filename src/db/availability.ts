// The database going away is not a crash: a Store call that fails because the database cannot
// be reached becomes `503 Service unavailable` with Retry-After, and service resumes by itself
// once the engine's client reconnects. Every other error passes through untouched.
import { serviceUnavailable } from '../core/errors'
import type { Store } from '../core/store'

/** Seconds a client is told to wait while the database is unreachable. */
const RETRY_AFTER_SEC = 5

export function reportUnavailability(store: Store, isUnavailable: (error: unknown) => boolean): Store {
  const guard = <F extends (...args: never[]) => unknown>(fn: F): F =>
    (async (...args: Parameters<F>) => {
      try {
        return await fn(...args)
      } catch (error) {
        if (isUnavailable(error)) throw serviceUnavailable(RETRY_AFTER_SEC)
        throw error
      }
    }) as unknown as F
  const wrapped: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(store)) {
    if (typeof member === 'function') {
      // close() stays synchronous; everything else is async already.
      wrapped[name] = name === 'close' ? member : guard(member as never)
    } else {
      wrapped[name] = Object.fromEntries(Object.entries(member as object).map(([method, fn]) => [method, guard(fn as never)]))
    }
  }
  return wrapped as unknown as Store
}
