// Liveness and readiness for load balancers and orchestrators.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { serviceUnavailable } from '../../core/errors'
import { envelope } from '../errors'

/** The probes' routes: one that passes is counted but not logged (plugins/observability.ts).
 *  They act on nothing, so app.ts registers them before the client is worked out. */
export const PROBE_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz'])

export const healthRoutes = (deps: Pick<Deps, 'store'>) =>
  new Elysia()
    .get('/healthz', () => envelope(200, 'OK', { status: 'alive' }), { detail: { summary: 'Liveness: the process answers' } })
    .get(
      '/readyz',
      async () => {
        const migrations = await deps.store.migrationStatus().catch(() => null)
        if (!migrations || migrations.pending.length > 0) throw serviceUnavailable(5)
        return envelope(200, 'OK', { status: 'ready' })
      },
      { detail: { summary: 'Readiness: the database answers and its migrations are current (503 otherwise)' } },
    )
