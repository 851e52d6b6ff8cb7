import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { logout } from '../../core/sessions'
import { envelope } from '../errors'
import { originCheck } from '../plugins/origin-check'
import { clearRefreshCookie, readRefreshCookie } from '../plugins/refresh-cookie'

export const logoutRoute = (deps: Deps, allowedOrigins: ReadonlySet<string>) =>
  new Elysia().use(originCheck(allowedOrigins)).post(
    '/logout',
    async ({ cookie }) => {
      await logout(deps, readRefreshCookie(cookie.refreshToken!))
      clearRefreshCookie(cookie.refreshToken!)
      return envelope(200, 'Logged out', null)
    },
    { sameOriginOnly: true },
  )
