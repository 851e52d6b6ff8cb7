import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { changePassword } from '../../core/password-reset'
import { envelope } from '../errors'
import { clientActor } from '../plugins/client-ip'
import { apiKeyGuard } from '../plugins/api-key'

export const changePasswordRoute = (deps: Deps) =>
  new Elysia().use(clientActor(deps.config.trustedProxies)).use(apiKeyGuard(deps)).post(
    '/change-password',
    async ({ body, tenant, actor }) => {
      const user = await changePassword(deps, { tenant, email: body.email, otp: body.otp, newPassword: body.newPassword }, actor)
      return envelope(200, 'Password changed successfully', user)
    },
    { apiKey: true, body: t.Object({ email: t.String(), newPassword: t.String(), otp: t.String() }) },
  )
