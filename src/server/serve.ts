// Runs the app on a socket, with the mail worker beside it, and stops both cleanly: on
// SIGTERM/SIGINT the listener closes, in-flight requests and the mail in hand finish, then
// the database closes.
import { defaultPublicUrl, type Config } from '../config'
import { PUBLIC_URL_SETTING } from '../core/store'
import { MailWorker } from '../core/mail/worker'
import { WebhookWorker } from '../core/webhooks/worker'
import { redactUrl } from '../db/engine'
import { pruneExpiredData } from '../core/retention/retention'
import type { Logger } from '../log'
import { mailTransportFor } from '../mail/transports'
import type { Runtime } from '../runtime'
import { createApp, createMetrics } from './app'
import { envelope } from './errors'
import { listenOrRefuse, readTlsPair } from './listen'
import { startMetricsListener, type MetricsListener } from './metrics-listener'
import { warnOfPasskeysOff } from './passkeys-off'
import { recordPeer } from './plugins/client-ip'

// Bun's own body cap is set out of reach, so that authd answers every body too large itself
// (16 KiB, by Content-Length before any is read, or while reading a chunked one: see
// plugins/body-limit.ts) with the envelope or the page: Bun's answer is a bare 413. Bun does
// not buffer a body nobody reads, so the cap guards no memory (measured: 300 MiB sent to a
// route that reads none, server RSS unchanged).
const BUN_MAX_BODY_BYTES = 2 ** 40

export interface RunningServer {
  url: string
  stop(): Promise<void>
}

export async function startServer(runtime: Runtime, logger: Logger): Promise<RunningServer> {
  const { config } = runtime
  const tls = config.tls && readTlsPair(config.tls)
  await runtime.keyRing.ensureKey()
  // (only a head start: a dummy hash not made now is made at the first login that needs it)
  runtime.hasher.warmUp().catch(() => {})
  runtime.eventLoop.start()
  const metrics = createMetrics(runtime)
  let app = createApp(runtime, logger, metrics)
  const server = listenOrRefuse(config, 'AUTHD_HOST, AUTHD_PORT', () =>
    Bun.serve({
      port: config.port,
      hostname: config.host,
      maxRequestBodySize: BUN_MAX_BODY_BYTES,
      tls: tls && { cert: tls.cert, key: tls.key },
      development: false,
      fetch: (received, bunServer) => {
        const request = withRoutableUrl(received)
        if (!request) return badHostAnswer()
        recordPeer(request, received, bunServer)
        return app.fetch(request)
      },
      error: (error) => {
        logger.log('error', 'unhandled error outside the app', { error: error.stack ?? error.message })
        return internalAnswer()
      },
    }),
  )
  const url = server.url.origin
  const bound = withBoundAddress(config, url)
  if (bound !== config) app = createApp({ ...runtime, config: bound }, logger, metrics)
  let metricsListener: MetricsListener | undefined
  try {
    metricsListener = config.metricsAddr && listenOrRefuse(config.metricsAddr, 'AUTHD_METRICS_ADDR', () => startMetricsListener(config.metricsAddr!, metrics))
  } catch (error) {
    await server.stop(true)
    throw error
  }
  const mailWorker = new MailWorker(runtime, mailTransportFor(runtime.config, logger), logger, (outcome) => metrics.mailDeliveries.inc({ outcome }))
  const unlisten = runtime.mailQueued.listen(() => mailWorker.wake())
  mailWorker.start()
  const webhookWorker = new WebhookWorker(runtime, logger, { observe: (outcome) => metrics.webhookDeliveries.inc({ outcome }) })
  webhookWorker.start()
  const housekeeping = startHousekeeping(runtime, logger)
  await warnOfPasskeysOff(runtime.store, bound, logger).catch((error) => logger.log('warn', 'checking the passkey relying parties failed', { error: String(error) }))
  // The CLI beside the server writes its links (invitations, page URLs) to this address when
  // AUTHD_PUBLIC_URL is unset there (cli/public-url.ts): AUTHD_PUBLIC_URL as set here, else the
  // address actually listened on. Recorded before "listening" is said.
  await runtime.store.serverSettings.set(PUBLIC_URL_SETTING, bound.publicUrl, runtime.clock.now()).catch((error) => {
    logger.log('warn', 'recording the public URL for the CLI failed', { error: String(error) })
  })
  logger.log('info', 'listening', {
    url,
    database: runtime.config.postgresUrl ? redactUrl(runtime.config.postgresUrl) : runtime.config.databasePath,
    mail: runtime.config.smtpUrl ? 'smtp' : 'eml files',
    metrics: metricsListener ? `${metricsListener.url}/metrics` : 'off',
  })
  let stopping: Promise<void> | undefined
  return {
    url,
    stop() {
      stopping ??= (async () => {
        await Promise.all([server.stop(), metricsListener?.stop()])
        await housekeeping.stop()
        unlisten()
        await Promise.all([mailWorker.stop(), webhookWorker.stop()])
        runtime.close()
        logger.log('info', 'stopped')
      })()
      return stopping
    },
  }
}

/**
 * Background work beside the requests: refusals tallied in memory are written every minute
 * (and at shutdown), and rows past retention are pruned every ten minutes.
 */
function startHousekeeping(runtime: Runtime, logger: Logger) {
  const warn = (what: string) => (error: unknown) => logger.log('warn', `${what} failed`, { error: String(error) })
  const flushRefusals = () => runtime.refusals.flush(runtime.store).catch(warn('writing the tally of refused requests'))
  let pruning: Promise<unknown> = Promise.resolve()
  const prune = () => {
    pruning = pruneExpiredData(runtime).catch(warn('pruning data past retention'))
  }
  const timers = [setInterval(flushRefusals, 60_000), setInterval(prune, 10 * 60_000), setTimeout(prune, 30_000)]
  return {
    async stop() {
      for (const timer of timers) clearTimeout(timer)
      await pruning
      await flushRefusals()
    },
  }
}

/**
 * Elysia finds a request's path by position: from the first '/' at or after index 11 of the
 * URL, which assumes a scheme and host at least that long. A short Host header moves it:
 * `Host: x` made `http://x/zz/metrics` route as `/metrics` and `/zz/api/v1/auth/...` as the
 * API, defeating a proxy's path rules and the log masking. Such a request, and one with no
 * Host or one that makes no URL (`Host: a b`; Bun gives both a URL of the path alone, on
 * which `new URL()` deeper in threw: a 500 with Bun's development page), gets a placeholder
 * host, so routing always sees the real path; the pages' origin check (pages/security.ts)
 * never takes the placeholder for authd. Any other URL that does not parse is null: the
 * caller answers 400.
 */
export function withRoutableUrl(request: Request): Request | null {
  const url = request.url
  if (url.startsWith('/')) return new Request(`http://${PLACEHOLDER_HOST}${url}`, request)
  if (!URL.canParse(url)) return null
  const pathStart = url.indexOf('/', url.indexOf('//') + 2)
  if (pathStart >= 11) return request
  const path = pathStart === -1 ? '/' : url.slice(pathStart)
  return new Request(`${url.slice(0, url.indexOf('//'))}//${PLACEHOLDER_HOST}${path}`, request)
}

const PLACEHOLDER_HOST = 'short-host.invalid'

/** The answer to a request whose Host header makes no URL: nothing of authd has run. */
const badHostAnswer = () =>
  new Response(JSON.stringify(envelope(400, 'The request has no valid Host header', null)), { status: 400, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } })

/** What Bun answers if anything throws outside the app's own error handling: never its
 *  development page, which shows the working directory, a stack and source lines. */
const internalAnswer = () =>
  new Response(JSON.stringify(envelope(500, 'Internal server error', null)), { status: 500, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } })

/** On --port 0 the default public URL (and issuer) can only be known once the port is bound. */
function withBoundAddress(config: Config, url: string): Config {
  const unbound = defaultPublicUrl(config.host, 0, config.tls !== undefined)
  if (config.port !== 0 || config.publicUrl !== unbound) return config
  return { ...config, publicUrl: url, issuer: config.issuer === unbound ? url : config.issuer }
}
