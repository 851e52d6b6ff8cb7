// One JSON log line and the metrics for every request, with a request id that is also sent
// back (X-Request-Id) so a client's report can be matched to the log. An X-Request-Id from
// the client or a proxy is kept when it looks like an id. Any e-mail address in the path
// (the forgot-password one) is masked before it is logged; nothing else a client sends is logged.
import { Elysia } from 'elysia'
import { maskEmail } from '../../core/audit'
import type { Logger } from '../../log'
import { errorCodes } from '../errors'
import type { Metrics } from '../metrics'

const SANE_ID = /^[A-Za-z0-9._-]{8,64}$/

/** The path as logged: any segment that holds an e-mail address (the forgot-password path,
 *  or a client's probe under another prefix) is masked, and very long paths are cut. */
export function loggablePath(pathname: string): string {
  const masked = pathname
    .split('/')
    .map((segment) => {
      let decoded = segment
      try {
        decoded = decodeURIComponent(segment)
      } catch {
        // a malformed escape: judge it as it came
      }
      return decoded.includes('@') ? maskEmail(decoded) : segment
    })
    .join('/')
  return masked.length > 200 ? `${masked.slice(0, 200)}…` : masked
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
      const error = errorCodes.get(request)
      if (error) metrics.errors.inc({ code: error })
      logger.log(status >= 500 ? 'error' : 'info', 'request', {
        requestId,
        method: request.method,
        path: loggablePath(new URL(request.url).pathname),
        status,
        ...(error && { error }),
        durationMs: Math.round(seconds * 10000) / 10,
        ip: actor?.ip,
      })
    })
