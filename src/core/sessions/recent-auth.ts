// Step-up (product spec §18): a change that needs a recent proof of the user is let through for
// a few minutes after the session's login or its last reauthentication (step-up.ts).
import type { Deps } from '../deps'
import { stepUpRequired } from '../errors'

/** How long a proof of the user lets such changes through. */
export const STEP_UP_WINDOW_MS = 5 * 60_000

/** Whether the caller's session proved its user within the window (a page shows the proof's form if not). */
export const hasRecentAuth = (deps: Pick<Deps, 'clock'>, caller: { authAt: number }) => deps.clock.now() - caller.authAt <= STEP_UP_WINDOW_MS

/** Refuses (403 step_up_required) unless the caller's session proved its user within the window. */
export function requireRecentAuth(deps: Pick<Deps, 'clock'>, caller: { authAt: number }): void {
  if (!hasRecentAuth(deps, caller)) throw stepUpRequired(STEP_UP_WINDOW_MS / 1000)
}

