import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { requestSignup, SIGNUP_MESSAGE, verifyEmail } from '../../core/signup/signup'
import { envelope } from '../errors'
import { API_KEY, responses, schemas } from '../openapi'
import { clientActor } from '../plugins/client-ip'
import { apiKeyGuard } from '../plugins/api-key'
import { DEVICE_COOKIE, readDeviceCookie } from '../plugins/device-cookie'
import { loginAnswer } from '../login-answer'

export const signupRoutes = (deps: Deps) =>
  new Elysia()
    .use(clientActor(deps.config.trustedProxies))
    .use(apiKeyGuard(deps))
    .post(
      '/signup',
      async ({ body, tenant, actor, set }) => {
        const email = await requestSignup(deps, { tenant, ...body }, actor)
        set.status = 202
        return envelope(202, SIGNUP_MESSAGE, email)
      },
      {
        apiKey: true,
        // Our body-limit parser does the parsing; this names the content type for the OpenAPI document.
        parse: 'json',
        body: t.Object({ email: t.String(), password: t.String(), firstName: t.String(), lastName: t.String() }),
        detail: {
          summary: 'Sign up: mail a verification code',
          description:
            "Only where the tenant's sign-up policy is open or lists the address's domain. The same answer, body and cost for a new address (a code is mailed), a registered one (its owner is told someone tried) and a refused domain (no mail); data is the normalised address. A second sign-up for the address replaces the pending one.",
          security: API_KEY,
          responses: responses({ status: 202, description: 'Answered', data: t.String({ format: 'email' }) }, [400, 401, 403, 413, 429, 503]),
        },
      },
    )
    .post(
      '/verify-email',
      async ({ body, tenant, actor, cookie, set }) => {
        const deviceCookie = readDeviceCookie(cookie[DEVICE_COOKIE])
        const session = await verifyEmail(deps, { tenant, email: body.email, otp: body.otp, deviceCookie }, actor)
        return loginAnswer(cookie, set, session)
      },
      {
        apiKey: true,
        parse: 'json',
        body: t.Object({ email: t.String(), otp: t.String() }),
        detail: {
          summary: 'Verify a sign-up code: create the account and log in',
          description:
            'The account exists from this answer, with the password of the sign-up whose code this is. Exactly the login answer: the access token and user, the refreshToken cookie (1 day) and the authdDevice cookie. Any code failure is the same 400.',
          security: API_KEY,
          responses: responses({ status: 201, description: 'Account created and logged in', data: schemas.Session }, [400, 401, 403, 413, 429, 503]),
        },
      },
    )
