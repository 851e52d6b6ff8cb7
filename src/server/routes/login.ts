import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { login } from '../../core/sessions'
import { envelope } from '../errors'
import { clientActor } from '../plugins/client-ip'
import { apiKeyGuard } from '../plugins/api-key'
import { setRefreshCookie } from '../plugins/refresh-cookie'

export const loginRoute = (deps: Deps) =>
  new Elysia().use(clientActor(deps.config.trustedProxies)).use(apiKeyGuard(deps)).post(
    '/login',
    async ({ body, tenant, cookie, set, actor }) => {
      const session = await login(deps, { tenant, email: body.email, password: body.password, rememberMe: body.rememberMe ?? false }, actor)
      setRefreshCookie(cookie.refreshToken!, session.refreshToken, session.refreshMaxAgeSec)
      set.status = 201
      return envelope(201, 'Login successful', { response: { accessToken: session.accessToken, user: session.user } })
    },
    {
      apiKey: true,
      body: t.Object({ email: t.String(), password: t.String(), rememberMe: t.Optional(t.Boolean()) }),
    },
  )
