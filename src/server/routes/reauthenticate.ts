// POST /reauthenticate (product spec §18): the signed-in user proves who they are again, so
// that their session may change how the account is protected for the next five minutes.
import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { reauthenticate } from '../../core/sign-in/step-up'
import { envelope } from '../errors'
import { BEARER, responses } from '../openapi'
import { bearerGuard } from '../plugins/bearer'
import { clientActor } from '../plugins/client-ip'
import { DEVICE_COOKIE, readDeviceCookie } from '../plugins/device-cookie'

export const reauthenticateRoutes = (deps: Deps) =>
  new Elysia()
    .use(clientActor(deps.config.trustedProxies))
    .use(bearerGuard(deps))
    .post(
      '/reauthenticate',
      async ({ caller, actor, body, cookie }) =>
        envelope(200, 'Reauthenticated', await reauthenticate(deps, caller, { ...body, deviceCookie: readDeviceCookie(cookie[DEVICE_COOKIE]) }, actor)),
      {
        bearer: true,
        parse: 'json',
        body: t.Object({ password: t.Optional(t.String()), code: t.Optional(t.String()), challengeId: t.Optional(t.String()), response: t.Optional(t.Unknown()) }),
        detail: {
          summary: 'Prove who I am again (step-up)',
          description:
            "Exactly one of: the user's password, a current TOTP code, or a passkey: the credential's toJSON() as `response` for the `challengeId` of POST /passkeys/login/options, by one of the user's own passkeys, with user verification. For the next 5 minutes this session may turn a second factor on or off, add or remove a passkey and change the password (otherwise 403 step_up_required, with WWW-Authenticate: Bearer error=\"insufficient_user_authentication\"). A wrong password, code or passkey is one more failure of the account's login back-off (429 once it blocks) and answers 400 Invalid password or code.",
          security: BEARER,
          responses: responses({ status: 200, description: 'Proved', data: t.Object({ authTime: t.String({ format: 'date-time' }) }) }, [400, 401, 403, 413, 429, 503]),
        },
      },
    )
