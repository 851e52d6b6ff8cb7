import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { logout } from '../../core/sessions/sessions'
import { envelope } from '../errors'
import { REFRESH_COOKIE, responses } from '../openapi'
import { clientActor } from '../plugins/client-ip'
import { originCheck } from '../plugins/origin-check'
import { clearRefreshCookie, readRefreshCookie } from '../plugins/refresh-cookie'

export const logoutRoute = (deps: Deps, allowedOrigins: ReadonlySet<string>) =>
  new Elysia().use(clientActor(deps.config.trustedProxies)).use(originCheck(allowedOrigins)).post(
    '/logout',
    async ({ cookie, actor }) => {
      await logout(deps, readRefreshCookie(cookie.refreshToken!), actor)
      clearRefreshCookie(cookie.refreshToken!)
      return envelope(200, 'Logged out', null)
    },
    {
      sameOriginOnly: true,
      detail: {
        summary: 'Log out',
        description: 'Revokes the session and clears the cookie; answers 200 even without a valid cookie.',
        security: REFRESH_COOKIE,
        responses: responses({ status: 200, description: 'Logged out', data: t.Null() }, [403]),
      },
    },
  )
