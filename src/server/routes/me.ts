// The signed-in user (product spec §16): who am I, my sessions, ending one or all of them.
import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { endAllSessions, endSession, listSessions } from '../../core/signed-in-user'
import { toPublicUser } from '../../core/users'
import { envelope } from '../errors'
import { BEARER, responses, schemas } from '../openapi'
import { bearerGuard } from '../plugins/bearer'
import { clientActor } from '../plugins/client-ip'
import { clearRefreshCookie } from '../plugins/refresh-cookie'

export const meRoutes = (deps: Deps) =>
  new Elysia()
    .use(clientActor(deps.config.trustedProxies))
    .use(bearerGuard(deps))
    .get('/me', ({ caller }) => envelope(200, 'Current user', toPublicUser(caller.user, caller.tenant)), {
      bearer: true,
      detail: { summary: 'The signed-in user', security: BEARER, responses: responses({ status: 200, description: 'The user', data: schemas.User }, [401, 403]) },
    })
    .get('/sessions', async ({ caller }) => envelope(200, 'Sessions', await listSessions(deps, caller.user.id, caller.sessionId)), {
      bearer: true,
      detail: {
        summary: "The signed-in user's sessions",
        description: 'Sessions that can still be refreshed, newest first, with the user agent and IP of their login or latest refresh.',
        security: BEARER,
        responses: responses({ status: 200, description: 'The sessions', data: t.Array(schemas.SessionView) }, [401, 403]),
      },
    })
    .delete(
      '/sessions/:sessionId',
      async ({ caller, params, actor }) => {
        await endSession(deps, caller.user.id, params.sessionId, actor)
        return envelope(200, 'Session ended', null)
      },
      {
        bearer: true,
        // (no length rule: an id of any length that is no session of the caller's is a 404)
        params: t.Object({ sessionId: t.String() }),
        detail: {
          summary: 'End one of my sessions',
          description: "Its refresh cookie stops working, and so does its access token at these endpoints. Another user's session is a 404.",
          security: BEARER,
          responses: responses({ status: 200, description: 'Ended', data: t.Null() }, [400, 401, 403, 404]),
        },
      },
    )
    .post(
      '/logout-all',
      async ({ caller, actor, cookie }) => {
        const ended = await endAllSessions(deps, caller, actor)
        clearRefreshCookie(cookie.refreshToken!)
        return envelope(200, 'Logged out everywhere', { ended })
      },
      {
        bearer: true,
        detail: {
          summary: 'End all my sessions',
          description: 'Every session of the user, this one included; clears the refresh cookie.',
          security: BEARER,
          responses: responses({ status: 200, description: 'Ended', data: t.Object({ ended: t.Integer({ minimum: 0 }) }) }, [401, 403]),
        },
      },
    )
