import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { logout } from '../../core/sessions'
import { envelope } from '../errors'
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
    { sameOriginOnly: true },
  )
