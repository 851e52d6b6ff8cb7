import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { changePassword } from '../../core/accounts/password-reset'
import { envelope } from '../errors'
import { API_KEY, responses, schemas } from '../openapi'
import { clientActor } from '../plugins/client-ip'
import { apiKeyGuard } from '../plugins/api-key'
import { DEVICE_COOKIE, readDeviceCookie, setDeviceCookie } from '../plugins/device-cookie'

export const changePasswordRoute = (deps: Deps) =>
  new Elysia().use(clientActor(deps.config.trustedProxies)).use(apiKeyGuard(deps)).post(
    '/change-password',
    async ({ body, tenant, actor, cookie }) => {
      const deviceCookie = readDeviceCookie(cookie[DEVICE_COOKIE])
      const changed = await changePassword(deps, { tenant, email: body.email, otp: body.otp, newPassword: body.newPassword, deviceCookie }, actor)
      setDeviceCookie(cookie[DEVICE_COOKIE]!, changed.deviceCookie)
      return envelope(200, 'Password changed successfully', changed.user)
    },
    {
      apiKey: true,
      // Our body-limit parser does the parsing; this names the content type for the OpenAPI document.
      parse: 'json',
      body: t.Object({ email: t.String(), newPassword: t.String(), otp: t.String() }),
      detail: {
        summary: 'Change the password with an OTP',
        description: 'Ends every session of the user, mails a notice, and sets the authdDevice cookie (this browser proved the mailbox).',
        security: API_KEY,
        responses: responses({ status: 200, description: 'Password changed', data: schemas.User }, [400, 401, 403, 413, 429, 503]),
      },
    },
  )
