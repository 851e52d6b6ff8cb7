// The signed-in user (product spec §16): who am I, my sessions, ending one or all of them.
import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { changePasswordInSession, endAllSessions, endSession, listSessions } from '../../core/sessions/signed-in-user'
import { toOwnUserView, toPublicUser } from '../../core/accounts/users'
import { envelope } from '../errors'
import { BEARER, responses, schemas } from '../openapi'
import { bearerGuard } from '../plugins/bearer'
import { clientActor } from '../plugins/client-ip'
import { clearRefreshCookie } from '../plugins/refresh-cookie'

export const meRoutes = (deps: Deps) =>
  new Elysia()
    .use(clientActor(deps.config.trustedProxies))
    .use(bearerGuard(deps))
    .get('/me', async ({ caller }) => envelope(200, 'Current user', toOwnUserView(caller.user, caller.tenant, await deps.store.groups.groupNamesOfUser(caller.user.id))), {
      bearer: true,
      detail: { summary: 'The signed-in user', security: BEARER, responses: responses({ status: 200, description: 'The user', data: schemas.OwnUser }, [401, 403]) },
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
    .post('/me/password', async ({ caller, actor, body }) => envelope(200, 'Password changed', toPublicUser(await changePasswordInSession(deps, caller, body.newPassword, actor), caller.tenant)), {
      bearer: true,
      parse: 'json',
      body: t.Object({ newPassword: t.String() }),
      detail: {
        summary: 'Change my password',
        description:
          "Needs step-up: the session must have proved its user (login or POST /reauthenticate) within the last 5 minutes, else 403 step_up_required. The password policy applies (400 naming the rule). The user's other sessions end, outstanding OTPs, setup tokens and login challenges are spent, and a mail tells the user; this session goes on.",
        security: BEARER,
        responses: responses({ status: 200, description: 'Changed', data: schemas.User }, [400, 401, 403, 413, 503]),
      },
    })
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
