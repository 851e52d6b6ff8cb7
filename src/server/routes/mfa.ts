// Two-factor authentication (product spec §17): the signed-in user turns TOTP on and off, and a
// login's challenge is passed with a code.
import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { confirmTotpEnrolment, disableTotp, startTotpEnrolment } from '../../core/mfa/enrolment'
import { loginWithSecondFactor } from '../../core/sign-in/login'
import { envelope } from '../errors'
import { API_KEY, BEARER, responses, schemas } from '../openapi'
import { apiKeyGuard } from '../plugins/api-key'
import { bearerGuard } from '../plugins/bearer'
import { clientActor } from '../plugins/client-ip'
import { DEVICE_COOKIE, readDeviceCookie } from '../plugins/device-cookie'
import { loginAnswer } from '../login-answer'

const code = t.Object({ code: t.String() })

export const mfaRoutes = (deps: Deps) =>
  new Elysia()
    .use(clientActor(deps.config.trustedProxies))
    .use(bearerGuard(deps))
    .use(apiKeyGuard(deps))
    .post('/mfa/totp', async ({ caller, actor }) => envelope(200, 'TOTP enrolment started', await startTotpEnrolment(deps, caller, actor)), {
      bearer: true,
      detail: {
        summary: 'Start TOTP enrolment',
        description:
          'A new secret (RFC 6238: SHA-1, 6 digits, 30 s), shown once, and its otpauth:// URL (issuer: the tenant name) for an authenticator app. Nothing changes at login until a code confirms it. Needs step-up: the session must have proved its user (login or POST /reauthenticate) within the last 5 minutes, else 403 step_up_required. 409 when two-factor authentication is already on.',
        security: BEARER,
        responses: responses({ status: 200, description: 'The secret', data: t.Object({ secret: t.String(), otpauthUrl: t.String() }) }, [401, 403, 409, 503]),
      },
    })
    .post(
      '/mfa/totp/confirm',
      async ({ caller, actor, body, cookie }) =>
        envelope(200, 'Two-factor authentication is on', await confirmTotpEnrolment(deps, caller, body.code, actor, readDeviceCookie(cookie[DEVICE_COOKIE]))),
      {
        bearer: true,
        parse: 'json',
        body: code,
        detail: {
          summary: 'Confirm TOTP enrolment with a code',
          description:
            "Turns two-factor authentication on and returns 10 single-use recovery codes, shown this once (stored hashed). Ends the user's other sessions (those opened before the account was protected); this one stays. A mail tells the user. Wrong codes count toward the account's login back-off (429).",
          security: BEARER,
          responses: responses({ status: 200, description: 'On', data: t.Object({ recoveryCodes: t.Array(t.String(), { minItems: 10, maxItems: 10 }) }) }, [400, 401, 403, 409, 413, 429]),
        },
      },
    )
    .delete(
      '/mfa/totp',
      async ({ caller, actor, body, cookie }) => {
        await disableTotp(deps, caller, body.code, actor, readDeviceCookie(cookie[DEVICE_COOKIE]))
        return envelope(200, 'Two-factor authentication is off', null)
      },
      {
        bearer: true,
        parse: 'json',
        body: code,
        detail: {
          summary: 'Turn TOTP off',
          description: "Proved with a current TOTP code or a recovery code, and needs step-up (a login or POST /reauthenticate within the last 5 minutes, else 403 step_up_required); removes the secret and the recovery codes. Wrong codes count toward the account's login back-off (429). A mail tells the user.",
          security: BEARER,
          responses: responses({ status: 200, description: 'Off', data: t.Null() }, [400, 401, 403, 413, 429]),
        },
      },
    )
    .post(
      '/mfa/verify',
      async ({ body, tenant, actor, cookie, set }) => {
        const deviceCookie = readDeviceCookie(cookie[DEVICE_COOKIE])
        const session = await loginWithSecondFactor(deps, { tenant, challengeToken: body.challengeToken, code: body.code, response: body.response, deviceCookie }, actor)
        return loginAnswer(cookie, set, session)
      },
      {
        apiKey: true,
        parse: 'json',
        body: t.Object({ challengeToken: t.String(), code: t.Optional(t.String()), response: t.Optional(t.Unknown()) }),
        detail: {
          summary: "Pass a login's second step",
          description:
            "The challengeToken from login and either a TOTP code (spaces ignored: \"123 456\") or a recovery code as code, or, for a user with passkeys, a passkey's credential.toJSON() for the challenge's passkeyOptions as response: exactly the login answer, its access tokens with amr [\"pwd\", \"otp\"] (or [\"pwd\", \"hwk\"|\"swk\", \"user\", …] for a passkey). A challenge is single use, bound to its user and tenant, lives 5 minutes and allows 5 wrong codes; wrong codes also count toward the account's login back-off. Every failure is the same 400.",
          security: API_KEY,
          responses: responses({ status: 201, description: 'Logged in', data: schemas.Session }, [400, 401, 403, 413, 429]),
        },
      },
    )
