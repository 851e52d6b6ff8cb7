import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { setupPassword } from '../../core/accounts/setup-password'
import { envelope } from '../errors'
import { responses } from '../openapi'
import { clientActor } from '../plugins/client-ip'
import { apiKeyGuard } from '../plugins/api-key'

/** The setup token from `Authorization: Bearer <token>` (the scheme is case-insensitive). */
const bearer = (header: string | undefined) => /^Bearer +(\S+)\s*$/i.exec(header ?? '')?.[1]

export const setupPasswordRoute = (deps: Deps) =>
  new Elysia().use(clientActor(deps.config.trustedProxies)).use(apiKeyGuard(deps)).post(
    '/setup-password',
    async ({ body, headers, tenant, actor }) => {
      const userId = await setupPassword(deps, { tenant, setupToken: bearer(headers.authorization), password: body.password }, actor)
      return envelope(200, 'Password set up successfully', userId)
    },
    {
      apiKey: true,
      // Our body-limit parser does the parsing; this names the content type for the OpenAPI document.
      parse: 'json',
      body: t.Object({ password: t.String() }),
      detail: {
        summary: 'Set up the first password with a setup token',
        security: [{ apiKey: [], setupToken: [] }],
        responses: responses({ status: 200, description: 'Password set up; data is the userId', data: t.String({ format: 'uuid' }) }, [400, 401, 403, 404, 409, 413, 429, 503]),
      },
    },
  )
