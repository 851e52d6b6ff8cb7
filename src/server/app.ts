// createApp(deps): errors first (so they apply to everything after), then the plugins that
// guard every request, then the routes. Every route and its guard is listed here.
import { Elysia } from 'elysia'
import type { Deps } from '../core/deps'
import type { Logger } from '../log'
import { errors } from './errors'
import { bodyLimit } from './plugins/body-limit'
import { corsFor } from './plugins/cors'
import { changePasswordRoute } from './routes/change-password'
import { forgotPasswordRoute } from './routes/forgot-password'
import { healthRoutes } from './routes/health'
import { jwksRoute } from './routes/jwks'
import { loginRoute } from './routes/login'
import { logoutRoute } from './routes/logout'
import { refreshTokenRoute } from './routes/refresh-token'
import { setupPasswordRoute } from './routes/setup-password'

export const API_PREFIX = '/api/v1/auth'

export function createApp(deps: Deps, logger: Logger) {
  const { corsOrigins, publicUrl, maxBodyBytes } = deps.config
  // Browsers may send our own origin too (a same-origin page posting to /logout).
  const trustedOrigins: ReadonlySet<string> = new Set([...corsOrigins, publicUrl])
  return new Elysia()
    .use(errors(logger))
    .use(corsFor(new Set(corsOrigins)))
    .use(bodyLimit(maxBodyBytes))
    .onRequest(({ set }) => {
      // Tokens and errors must never sit in a shared cache; the JWKS route opts back in.
      set.headers['cache-control'] = 'no-store'
    })
    .use(healthRoutes(deps))
    .group(API_PREFIX, (api) =>
      api
        .use(loginRoute(deps))
        .use(refreshTokenRoute(deps, trustedOrigins))
        .use(logoutRoute(deps, trustedOrigins))
        .use(forgotPasswordRoute(deps))
        .use(changePasswordRoute(deps))
        .use(setupPasswordRoute(deps))
        .use(jwksRoute(deps)),
    )
}

export type App = ReturnType<typeof createApp>
