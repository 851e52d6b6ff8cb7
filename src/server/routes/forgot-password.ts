import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { FORGOT_PASSWORD_MESSAGE, requestPasswordReset } from '../../core/accounts/password-reset'
import { envelope } from '../errors'
import { API_KEY, responses } from '../openapi'
import { clientActor } from '../plugins/client-ip'
import { apiKeyGuard } from '../plugins/api-key'

export const forgotPasswordRoute = (deps: Deps) =>
  new Elysia().use(clientActor(deps.config.trustedProxies)).use(apiKeyGuard(deps)).get(
    '/forgot-password/:email',
    async ({ params, tenant, actor }) => {
      const email = await requestPasswordReset(deps, { tenant, email: params.email }, actor)
      return envelope(200, FORGOT_PASSWORD_MESSAGE, email)
    },
    {
      apiKey: true,
      params: t.Object({ email: t.String() }),
      detail: {
        summary: 'Request a password-reset OTP',
        description: 'The same answer whether or not the address is registered; data is the normalised address.',
        security: API_KEY,
        responses: responses({ status: 200, description: 'Answered', data: t.String({ format: 'email' }) }, [400, 401, 429]),
      },
    },
  )
