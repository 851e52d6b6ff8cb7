// Liveness and readiness for load balancers and orchestrators.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { serviceUnavailable } from '../../core/errors'
import { envelope } from '../errors'

/** The probes' routes: one that passes is counted but not logged (plugins/observability.ts).
 *  They act on nothing and take no body, so app.ts registers them before the body parser and
 *  the client actor. */
export const PROBE_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz'])

// Made once, and returned by name: Elysia guesses from a handler's source whether it is async,
// and `() => envelope(…)` looks like it returns a promise, so every probe paid for one.
const ALIVE = Object.freeze(envelope(200, 'OK', Object.freeze({ status: 'alive' })))

export const healthRoutes = (deps: Pick<Deps, 'store'>) =>
  new Elysia()
    .get('/healthz', () => ALIVE, { detail: { summary: 'Liveness: the process answers' } })
    .get(
      '/readyz',
      async () => {
        const migrations = await deps.store.migrationStatus().catch(() => null)
        if (!migrations || migrations.pending.length > 0) throw serviceUnavailable(5)
        return envelope(200, 'OK', { status: 'ready' })
      },
      { detail: { summary: 'Readiness: the database answers and its migrations are current (503 otherwise)' } },
    )
