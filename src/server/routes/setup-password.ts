import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { setupPassword } from '../../core/setup-password'
import { envelope } from '../errors'
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
    { apiKey: true, body: t.Object({ password: t.String() }) },
  )
