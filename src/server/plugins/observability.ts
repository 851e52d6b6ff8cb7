// One JSON log line and the metrics for every request, with a request id that is also sent
// back (X-Request-Id) so a client's report can be matched to the log. An X-Request-Id from
// the client or a proxy is kept when it looks like an id. The e-mail in the forgot-password
// path is masked before it is logged; nothing else a client sends is logged.
import { Elysia } from 'elysia'
import { maskEmail } from '../../core/audit'
import type { Logger } from '../../log'
import type { Metrics } from '../metrics'

const SANE_ID = /^[A-Za-z0-9._-]{8,64}$/

function loggablePath(pathname: string): string {
  const forgot = /^(\/api\/v1\/auth\/forgot-password\/)(.+)$/.exec(pathname)
  if (!forgot) return pathname.length > 200 ? `${pathname.slice(0, 200)}…` : pathname
  let email = forgot[2]!
  try {
    email = decodeURIComponent(email)
  } catch {
    // a malformed escape: mask it as it came
  }
  return forgot[1] + maskEmail(email)
}

/** Business counters that follow from a route's status. */
function countOutcome(metrics: Metrics, route: string, status: number) {
  if (route.endsWith('/login')) {
    const outcome = status === 201 ? 'succeeded' : status === 429 ? 'limited' : status === 503 ? 'overloaded' : status === 401 || status === 403 ? 'failed' : null
    if (outcome) metrics.logins.inc({ outcome })
  } else if (route.endsWith('/forgot-password/:email') && status === 200) {
    metrics.otpsRequested.inc()
  }
}

export const observability = (logger: Logger, metrics: Metrics) =>
  new Elysia({ name: 'observability' })
    .derive({ as: 'global' }, ({ request, set }) => {
      const given = request.headers.get('x-request-id')
      const requestId = given && SANE_ID.test(given) ? given : Bun.randomUUIDv7()
      set.headers['x-request-id'] = requestId
      return { requestId, startedAt: performance.now() }
    })
    .onAfterResponse({ as: 'global' }, (context) => {
      const { request, set } = context
      const { requestId, startedAt, route, actor } = context as typeof context & { requestId?: string; startedAt?: number; route?: string; actor?: { ip: string | null } }
      const status = typeof set.status === 'number' ? set.status : 200
      const seconds = startedAt === undefined ? 0 : (performance.now() - startedAt) / 1000
      const routeLabel = route || 'unmatched'
      metrics.requests.inc({ route: routeLabel, method: request.method, status: String(status) })
      metrics.requestDuration.observe({ route: routeLabel, method: request.method }, seconds)
      countOutcome(metrics, routeLabel, status)
      logger.log(status >= 500 ? 'error' : 'info', 'request', {
        requestId,
        method: request.method,
        path: loggablePath(new URL(request.url).pathname),
        status,
        durationMs: Math.round(seconds * 10000) / 10,
        ip: actor?.ip,
      })
    })
