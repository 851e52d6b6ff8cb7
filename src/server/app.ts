// createApp(deps): errors first (so they apply to everything after), then the plugins that
// guard every request, then the routes. Every route and its guard is listed here.
import { Elysia } from 'elysia'
import { audit } from '../core/audit/audit'
import type { Deps } from '../core/deps'
import { VERSION } from '../version'
import type { Logger } from '../log'
import { errors } from './errors'
import { Gauge, Metrics } from './metrics'
import { addWebhookGauges } from './webhook-metrics'
import { openapiDocument } from './openapi'
import { bodyLimit } from './plugins/body-limit'
import { clientActor, fromTrustedProxy } from './plugins/client-ip'
import { observability } from './plugins/observability'
import { corsFor } from './plugins/cors'
import { loginShedding } from './plugins/load-shedding'
import { changePasswordRoute } from './routes/change-password'
import { forgotPasswordRoute } from './routes/forgot-password'
import { docsRoutes } from './routes/docs'
import { healthRoutes } from './routes/health'
import { jwksRoute } from './routes/jwks'
import { loginRoute } from './routes/login'
import { logoutRoute } from './routes/logout'
import { meRoutes } from './routes/me'
import { adminRoutes } from './routes/admin'
import { adminWebhookRoutes } from './routes/admin-webhooks'
import { adminClientRoutes } from './routes/admin-clients'
import { adminGroupRoutes } from './routes/admin-groups'
import { adminAccessRuleRoutes } from './routes/admin-access-rules'
import { adminProviderRoutes } from './routes/admin-providers'
import { refreshTokenRoute } from './routes/refresh-token'
import { setupPasswordRoute } from './routes/setup-password'
import { signupRoutes } from './routes/signup'
import { mfaRoutes } from './routes/mfa'
import { passkeyRoutes } from './routes/passkeys'
import { reauthenticateRoutes } from './routes/reauthenticate'
import { refuseNulCharacters } from './plugins/nul-characters'
import { errorPage, PAGES_PREFIX } from './pages/error-page'
import { pageRoutes } from './pages'
import { consolePages } from './console'
import { CHECK_ROUTES, forwardAuthRoutes } from './forward-auth/endpoints'
import { oauthErrorAnswer, oidcCors, oidcRoutes } from './oidc'

export const API_PREFIX = '/api/v1/auth'

/** Refusals held at once (errors.ts); each is a timer and an open request. */
const MAX_HELD_REFUSALS = 10_000

export function createApp(deps: Deps, logger: Logger, metrics: Metrics = createMetrics(deps)) {
  const { corsOrigins, publicUrl, maxBodyBytes } = deps.config
  // Browsers may send our own origin too (a same-origin page posting to /logout).
  const trustedOrigins: ReadonlySet<string> = new Set([...corsOrigins, publicUrl])
  return new Elysia()
    // Tokens and errors must never sit in a shared cache (the JWKS route opts back in). Preset
    // on every response's headers, before any hook runs.
    .headers(presetHeaders(corsOrigins))
    // (errors on the pages' paths are drawn as pages: server/pages/error-page.ts)
    // (the OpenID Provider's JSON endpoints answer errors as RFC 6749 writes them: server/oidc)
    .use(errors(logger, { holdMs: deps.config.refusalHoldMs, maxHeld: MAX_HELD_REFUSALS }, (request, error) => oauthErrorAnswer(request, error) ?? errorPage(request, error)))
    .use(observability(logger, metrics, fromTrustedProxy(deps.config.trustedProxies), CHECK_ROUTES))
    .use(oidcCors())
    .use(corsFor(new Set(corsOrigins)))
    .use(openapiDocument(VERSION))
    // The probes act on nothing and take no body: registered before the body parser and the
    // client actor, they skip both (see healthRoutes).
    .use(healthRoutes(deps))
    .use(refuseNulCharacters())
    .use(bodyLimit(maxBodyBytes, PAGES_PREFIX))
    .use(loginShedding(deps, `${API_PREFIX}/login`))
    .use(clientActor(deps.config.trustedProxies, () => reportUntrustedLocalProxy(deps, logger)))
    .group(API_PREFIX, (api) =>
      api
        .use(loginRoute(deps))
        .use(refreshTokenRoute(deps, trustedOrigins))
        .use(logoutRoute(deps, trustedOrigins))
        .use(forgotPasswordRoute(deps))
        .use(changePasswordRoute(deps))
        .use(setupPasswordRoute(deps))
        .use(signupRoutes(deps))
        .use(mfaRoutes(deps))
        .use(meRoutes(deps))
        .use(reauthenticateRoutes(deps))
        .use(passkeyRoutes(deps))
        .use(jwksRoute(deps))
        .use(docsRoutes()),
    )
    .use(adminRoutes(deps))
    .use(adminWebhookRoutes(deps))
    .use(adminClientRoutes(deps))
    .use(adminGroupRoutes(deps))
    .use(adminAccessRuleRoutes(deps))
    .use(adminProviderRoutes(deps))
    .use(forwardAuthRoutes(deps))
    .use(pageRoutes(deps))
    .use(consolePages(deps))
    .use(oidcRoutes(deps))
}

/** With CORS origins configured, an answer depends on the request's Origin (the
 *  Access-Control-Allow-* headers), and a cache that keeps one (the JWKS) must know it. With
 *  none, nothing depends on Origin and the header would tell caches nothing. */
function presetHeaders(corsOrigins: readonly string[]): Record<string, string> {
  return corsOrigins.length > 0 ? { 'cache-control': 'no-store', vary: 'Origin' } : { 'cache-control': 'no-store' }
}

/** Said once per process, in the log and in the audit log (where `authd doctor` finds it). */
function reportUntrustedLocalProxy(deps: Deps, logger: Logger) {
  logger.log('warn', 'requests from 127.0.0.1 carry X-Forwarded-For but no proxy is trusted: every client shares one IP for the abuse limits; set AUTHD_TRUSTED_PROXIES=127.0.0.1')
  audit(deps, 'config.untrusted_proxy', { ip: null, userAgent: null }).catch(() => {})
}

/** The metrics with their scrape-time gauges (mail queue, hashing queue). */
export function createMetrics(deps: Deps): Metrics {
  const metrics = new Metrics()
  deps.events.listen((event) => {
    if (event.kind === 'login') metrics.logins.inc({ outcome: event.outcome })
    else if (event.kind === 'forward_auth') metrics.forwardAuthChecks.inc({ outcome: event.outcome })
    else if (event.kind === 'signup') metrics.signups.inc({ outcome: event.outcome })
    else metrics.otpsRequested.inc()
  })
  metrics.addGauge(
    new Gauge('authd_mail_outbox_messages', 'Outbox messages by status.', async () =>
      Object.entries(await deps.store.outbox.countByStatus()).map(([status, value]) => ({ labels: { status }, value })),
    ),
  )
  metrics.addGauge(
    new Gauge('authd_password_hashing', 'Password hashes running and waiting.', async () => [
      { labels: { state: 'running' }, value: deps.hasher.load.active },
      { labels: { state: 'waiting' }, value: deps.hasher.load.waiting },
    ]),
  )
  metrics.addGauge(
    new Gauge('authd_password_hashing_slots', 'Password hashes allowed to run at once now: one fewer than AUTHD_HASH_CONCURRENCY while the event loop is busy.', async () => [
      { labels: {}, value: deps.hasher.load.slots },
    ]),
  )
  addWebhookGauges(metrics, deps)
  return metrics
}

export type App = ReturnType<typeof createApp>
