// /metrics on a listener of its own (AUTHD_METRICS_ADDR), never on the public port: the
// counters move with what clients do (a reset mail queued for a registered address and not
// for an unknown one), so anyone who can read them could tell which addresses exist. Off
// unless configured; bind it to a private interface and let only Prometheus reach it.
import type { Config } from '../config'
import { envelope } from './errors'
import type { Metrics } from './metrics'

export interface MetricsListener {
  url: string
  stop(): Promise<void>
}

export function startMetricsListener(address: NonNullable<Config['metricsAddr']>, metrics: Metrics): MetricsListener {
  const server = Bun.serve({
    hostname: address.host,
    port: address.port,
    async fetch(request) {
      const { pathname } = new URL(request.url)
      if (request.method === 'GET' && pathname === '/metrics') {
        return new Response(await metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' } })
      }
      return Response.json(envelope(404, 'Resource not found', null), { status: 404, headers: { 'cache-control': 'no-store' } })
    },
  })
  return { url: server.url.origin, stop: () => server.stop() }
}
