import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { login } from '../../core/sign-in/login'
import { envelope } from '../errors'
import { API_KEY, responses, schemas } from '../openapi'
import { clientActor } from '../plugins/client-ip'
import { apiKeyGuard } from '../plugins/api-key'
import { DEVICE_COOKIE, readDeviceCookie } from '../plugins/device-cookie'
import { loginAnswer } from '../login-answer'

export const loginRoute = (deps: Deps) =>
  new Elysia().use(clientActor(deps.config.trustedProxies)).use(apiKeyGuard(deps)).post(
    '/login',
    async ({ body, tenant, cookie, set, actor }) => {
      const deviceCookie = readDeviceCookie(cookie[DEVICE_COOKIE])
      const session = await login(deps, { tenant, email: body.email, password: body.password, rememberMe: body.rememberMe ?? false, deviceCookie }, actor)
      set.status = 201
      // An enrolled user's right password: no token and no cookie until the second step.
      if (session.kind === 'mfa') {
        const { mfaRequired, challengeToken, methods, passkeyOptions } = session
        return envelope(201, 'Second factor required', { response: { mfaRequired, challengeToken, methods, ...(passkeyOptions && { passkeyOptions }) } })
      }
      return loginAnswer(cookie, set, session)
    },
    {
      apiKey: true,
      // Our body-limit parser does the parsing; this names the content type for the OpenAPI document.
      parse: 'json',
      body: t.Object({ email: t.String(), password: t.String(), rememberMe: t.Optional(t.Boolean()) }),
      detail: {
        summary: 'Log in',
        description:
          'Sets the refreshToken cookie (1 day, or 30 days with rememberMe) and the authdDevice cookie, which exempts this browser from account-wide lock-outs others can trigger.',
        security: API_KEY,
        responses: responses({ status: 201, description: 'Logged in, or (a user with a second factor) the challenge to pass at /mfa/verify', data: t.Union([schemas.Session, schemas.MfaChallenge]) }, [400, 401, 403, 413, 429, 503]),
      },
    },
  )
