import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { refresh } from '../../core/sessions/sessions'
import { envelope } from '../errors'
import { REFRESH_COOKIE, responses, schemas } from '../openapi'
import { clientActor } from '../plugins/client-ip'
import { originCheck } from '../plugins/origin-check'
import { readRefreshCookie, setRefreshCookie } from '../plugins/refresh-cookie'

export const refreshTokenRoute = (deps: Deps, allowedOrigins: ReadonlySet<string>) =>
  new Elysia().use(clientActor(deps.config.trustedProxies)).use(originCheck(allowedOrigins)).get(
    '/refresh-token',
    async ({ cookie, set, actor }) => {
      const session = await refresh(deps, readRefreshCookie(cookie.refreshToken!), actor)
      setRefreshCookie(cookie.refreshToken!, session.refreshToken, session.refreshMaxAgeSec)
      set.status = 201
      return envelope(201, 'Token refreshed', { response: { accessToken: session.accessToken, user: session.user } })
    },
    {
      sameOriginOnly: true,
      detail: {
        summary: 'Renew the access token',
        description: 'Rotates the refreshToken cookie.',
        security: REFRESH_COOKIE,
        responses: responses({ status: 201, description: 'Renewed', data: schemas.Session }, [401, 403]),
      },
    },
  )
