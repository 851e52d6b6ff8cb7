// One JSON log line and the metrics for every request, with a request id that is also sent
// back (X-Request-Id) so a client's report can be matched to the log. An incoming
// X-Request-Id is kept, when it looks like an id, only from a trusted proxy: as with
// X-Forwarded-For, anyone else could pick the id their requests are logged under (another
// request's, to muddle an investigation). Any e-mail address in the path
// (the forgot-password one) is masked before it is logged; nothing else a client sends is logged.
import { Elysia, type Context } from 'elysia'
import { maskEmail } from '../../core/audit/audit'
import type { Logger } from '../../log'
import { errorCodes } from '../errors'
import type { Metrics } from '../metrics'
import { PROBE_ROUTES } from '../routes/health'

const SANE_ID = /^[A-Za-z0-9._-]{8,64}$/

/** The path as logged: any segment that holds an e-mail address (the forgot-password path,
 *  or a client's probe under another prefix) is masked, and very long paths are cut. */
export function loggablePath(pathname: string): string {
  // (an address arrives as @ or escaped as %40: a path with neither needs no masking)
  const masked = !pathname.includes('@') && !pathname.includes('%')
    ? pathname
    : pathname
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

type Traced = { requestId: string; startedAt: number }
const TRACE = Symbol('authd.trace')
/** What the log line reads of a request about to be answered (the actor only when a route
 *  worked one out). */
type Answered = Pick<Context, 'request' | 'set' | 'path' | 'route'> & { actor?: { ip: string | null }; response: unknown }

type Series = { count: { value: number }; observe: (seconds: number) => void }

/** The request count and latency series of each route, method and status, found once. Found
 *  again through a map per route and method, not by a key built per request: building and
 *  hashing a new string was a measurable share of a health probe. */
function requestSeries(metrics: Metrics) {
  const byRoute = new Map<string, Map<string, Map<number, Series>>>()
  return (route: string, method: string, status: number): Series => {
    let byMethod = byRoute.get(route)
    if (!byMethod) byRoute.set(route, (byMethod = new Map()))
    let byStatus = byMethod.get(method)
    if (!byStatus) byMethod.set(method, (byStatus = new Map()))
    let series = byStatus.get(status)
    if (!series) {
      series = { count: metrics.requests.series({ route, method, status: String(status) }), observe: metrics.requestDuration.recorder({ route, method }) }
      // As bounded as the series themselves: unmatched paths share one route label, and
      // Bun's parser refuses methods it does not know before a request reaches us.
      byStatus.set(status, series)
    }
    return series
  }
}

/**
 * @param keepsIncomingId whether a request's own X-Request-Id may name it (client-ip.ts, fromTrustedProxy)
 * @param quietRoutes routes besides the probes whose passing answers are counted, not logged
 */
export const observability = (logger: Logger, metrics: Metrics, keepsIncomingId: (request: Request) => boolean, quietRoutes: ReadonlySet<string> = new Set()) => {
  const quiet = new Set([...PROBE_ROUTES, ...quietRoutes])
  const seriesFor = requestSeries(metrics)
  // The trace rides on the request (under a symbol of this module) rather than on its
  // context: a request no route matches gets no derived context, and it too must be timed and
  // answered with its id. And a hook that hands its whole context to a function
  // (Object.assign) makes Elysia's inference assume every part is read, so every request,
  // /healthz included, had its cookies and query parsed. (A WeakMap beside the request did
  // the same at a cost: an entry made and swept per request, bench/README.md, session 14.)
  return new Elysia({ name: 'observability' })
    .onRequest(({ request, set }) => {
      // (no header is read otherwise: Bun builds a request's headers on the first read, about
      // a microsecond, a twentieth of a health probe: bench/README.md, session 9)
      const given = keepsIncomingId(request) ? request.headers.get('x-request-id') : null
      const requestId = given && SANE_ID.test(given) ? given : Bun.randomUUIDv7()
      set.headers['x-request-id'] = requestId
      // (not read back from set.headers: a response with several cookies turns them into a Headers object)
      ;(request as Request & { [TRACE]?: Traced })[TRACE] = { requestId, startedAt: performance.now() }
    })
    // Recorded as the answer is mapped, not after it is sent: Elysia runs an after-response
    // hook in a setImmediate with an async closure, on every request (bench/README.md, session
    // 8, for what that cost /healthz). It runs global mapResponse hooks for route answers,
    // errors and requests no route matches alike. The hook hands back what it was given:
    // Elysia's error path takes the hook's return value as the answer.
    .mapResponse({ as: 'global' }, ({ request, set, path, route, actor, response }: Answered) => {
      const trace = (request as Request & { [TRACE]?: Traced })[TRACE]
      const status = response instanceof Response ? response.status : typeof set.status === 'number' ? set.status : 200
      const seconds = trace === undefined ? 0 : (performance.now() - trace.startedAt) / 1000
      const series = seriesFor(route || 'unmatched', request.method, status)
      series.count.value++
      series.observe(seconds)
      const error = errorCodes.get(request)
      if (error) metrics.errors.inc({ code: error })
      // Load balancers probe every few seconds, and a proxy asks a forward-auth check about
      // every request it serves: one that passed is counted, not logged.
      if (status >= 400 || !quiet.has(route ?? '')) {
        logger.log(status >= 500 ? 'error' : 'info', 'request', {
          requestId: trace?.requestId,
          method: request.method,
          path: loggablePath(path),
          status,
          ...(error && { error }),
          durationMs: Math.round(seconds * 10000) / 10,
          ip: actor?.ip,
        })
      }
      return response as Response
    })
}
