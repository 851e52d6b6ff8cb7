// Passkeys (product spec §19): adding one (signed in, with step-up), signing in with one alone,
// and the signed-in user's list, rename and remove. Options and responses are the WebAuthn
// Level 3 JSON forms, so a page needs no library (README: a minimal page).
import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { listOwnPasskeys, removeOwnPasskey, renameOwnPasskey } from '../../core/passkeys/manage'
import { finishPasskeyRegistration, startPasskeyRegistration } from '../../core/passkeys/registration'
import { signInWithPasskey, startPasskeySignIn } from '../../core/passkeys/sign-in'
import { envelope } from '../errors'
import { loginAnswer } from '../login-answer'
import { API_KEY, BEARER, responses, schemas } from '../openapi'
import { apiKeyGuard } from '../plugins/api-key'
import { bearerGuard } from '../plugins/bearer'
import { clientActor } from '../plugins/client-ip'
import { DEVICE_COOKIE, readDeviceCookie } from '../plugins/device-cookie'

const ceremony = (options: ReturnType<typeof schemas.WebAuthnJSON>) => t.Object({ challengeId: t.String(), options })
const passkeyParams = t.Object({ passkeyId: t.String() })

export const passkeyRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/passkeys' })
    .use(clientActor(deps.config.trustedProxies))
    .use(bearerGuard(deps))
    .use(apiKeyGuard(deps))
    .post('/register/options', async ({ caller }) => envelope(200, 'Passkey creation options', await startPasskeyRegistration(deps, caller)), {
      bearer: true,
      detail: {
        summary: 'Options to add a passkey',
        description:
          "Needs step-up (a login or POST /reauthenticate in this session within the last 5 minutes, else 403 step_up_required). The options exclude the user's own passkeys and ask for a discoverable credential; their challenge lives 5 minutes and works once. 409 at 20 passkeys.",
        security: BEARER,
        responses: responses({ status: 200, description: 'Creation options', data: ceremony(schemas.CreationOptions) }, [401, 403, 409]),
      },
    })
    .post(
      '/register',
      async ({ caller, actor, body, set }) => {
        const added = await finishPasskeyRegistration(deps, caller, { challengeId: body.challengeId, response: body.response, name: body.name }, actor)
        set.status = 201
        return envelope(201, 'Passkey added', added)
      },
      {
        bearer: true,
        parse: 'json',
        body: t.Object({ challengeId: t.String({ maxLength: 64 }), response: t.Unknown(), name: t.Optional(t.String()) }),
        detail: {
          summary: 'Add a passkey',
          description:
            "The credential's toJSON() (RegistrationResponseJSON) for the challenge of /register/options, and an optional name (by default the authenticator's, from its AAGUID). Needs step-up. Verified for origin, RP ID, challenge and user presence. A mail tells the user.",
          security: BEARER,
          responses: responses({ status: 201, description: 'Added', data: schemas.PasskeyView }, [400, 401, 403, 409, 413]),
        },
      },
    )
    .get('', async ({ caller }) => envelope(200, 'Passkeys', await listOwnPasskeys(deps, caller)), {
      bearer: true,
      detail: { summary: 'My passkeys', security: BEARER, responses: responses({ status: 200, description: 'The passkeys, oldest first', data: t.Array(schemas.PasskeyView) }, [401, 403]) },
    })
    .patch(
      '/:passkeyId',
      async ({ caller, actor, params, body }) => envelope(200, 'Passkey renamed', await renameOwnPasskey(deps, caller, params.passkeyId, body.name, actor)),
      {
        bearer: true,
        parse: 'json',
        params: passkeyParams,
        body: t.Object({ name: t.String() }),
        detail: { summary: 'Rename one of my passkeys', security: BEARER, responses: responses({ status: 200, description: 'Renamed', data: schemas.PasskeyView }, [400, 401, 403, 404, 413]) },
      },
    )
    .delete(
      '/:passkeyId',
      async ({ caller, actor, params }) => {
        await removeOwnPasskey(deps, caller, params.passkeyId, actor)
        return envelope(200, 'Passkey removed', null)
      },
      {
        bearer: true,
        params: passkeyParams,
        detail: {
          summary: 'Remove one of my passkeys',
          description: 'Needs step-up (a login or POST /reauthenticate within the last 5 minutes, else 403 step_up_required).',
          security: BEARER,
          responses: responses({ status: 200, description: 'Removed', data: t.Null() }, [401, 403, 404]),
        },
      },
    )
    .post('/login/options', async ({ tenant, actor, body }) => envelope(200, 'Passkey request options', await startPasskeySignIn(deps, tenant, body?.email, actor)), {
      apiKey: true,
      parse: 'json',
      body: t.Optional(t.Object({ email: t.Optional(t.String()) })),
      detail: {
        summary: 'Options to sign in with a passkey',
        description:
          "Without an e-mail, the credential is discoverable: the browser offers the user's passkeys for this site (autofill with mediation: 'conditional'). An e-mail may be given and changes nothing: the options are the same for every address, so they do not tell who has passkeys. User verification is required. The challenge lives 5 minutes and works once.",
        security: API_KEY,
        responses: responses({ status: 200, description: 'Request options', data: ceremony(schemas.RequestOptions) }, [400, 401, 413, 429]),
      },
    })
    .post(
      '/login',
      async ({ tenant, actor, body, cookie, set }) => {
        const deviceCookie = readDeviceCookie(cookie[DEVICE_COOKIE])
        const session = await signInWithPasskey(deps, { tenant, challengeId: body.challengeId, response: body.response, rememberMe: body.rememberMe, deviceCookie }, actor)
        return loginAnswer(cookie, set, session)
      },
      {
        apiKey: true,
        parse: 'json',
        body: t.Object({ challengeId: t.String(), response: t.Unknown(), rememberMe: t.Optional(t.Boolean()) }),
        detail: {
          summary: 'Sign in with a passkey',
          description:
            "The credential's toJSON() (AuthenticationResponseJSON) for the challenge of /login/options: exactly the login answer, its access token's amr [\"hwk\" or \"swk\", \"user\", \"mfa\"]. An unknown credential and a bad signature get the same 401; a signature counter that goes backwards is refused (and audited as a possible clone); each assertion counts toward the account's login back-off.",
          security: API_KEY,
          responses: responses({ status: 201, description: 'Signed in', data: schemas.Session }, [400, 401, 403, 413, 429]),
        },
      },
    )
