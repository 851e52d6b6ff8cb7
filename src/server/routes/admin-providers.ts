// The admin API's upstream identity providers and a user's linked identities (product spec
// §25), under /api/v1/admin: the same domain functions as `authd providers …` and `authd users
// show | unlink-identity`, confined to the key's tenant (another tenant's provider, user or
// identity is a 404, as an unknown one is) and audited with the key's id. A client secret goes
// in and never comes back out.
import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { listIdentities, unlinkIdentity } from '../../core/federation/identities'
import { MAX_GROUP_MAP } from '../../core/federation/provider-fields'
import { createProvider, deleteProvider, getProvider, listProviders, MAX_PROVIDERS, toProviderView, updateProvider } from '../../core/federation/providers'
import { LINK_BY_EMAIL, PROVIDER_TYPES } from '../../core/federation/types'
import { envelope } from '../errors'
import { ADMIN_KEY, responses } from '../openapi'
import { adminKeyGuard } from '../plugins/admin-key'
import { strictBody } from '../plugins/strict-body'
import { ADMIN_PREFIX } from './admin'

const ProviderView = t.Object({
  providerId: t.String({ format: 'uuid' }),
  tenantId: t.String({ format: 'uuid' }),
  type: t.Union(PROVIDER_TYPES.map((type) => t.Literal(type))),
  name: t.String({ description: 'Shown on the login page: "Continue with {name}"' }),
  issuer: t.Union([t.String(), t.Null()], { description: "The OpenID issuer whose discovery document configures the sign-in; github: a GitHub Enterprise Server's base URL, null for github.com" }),
  clientId: t.String(),
  scopes: t.String({ description: 'Space-separated, asked of the upstream' }),
  linkByEmail: t.Union(LINK_BY_EMAIL.map((mode) => t.Literal(mode)), { description: 'verified: an unknown identity whose verified address is that of a user with a verified address is linked to them without asking; never: the person proves the local account first' }),
  createUsers: t.Union([t.String(), t.Null()], { description: 'open, closed or domains:a.example,…: who an unknown identity may create an account for; null: the tenant\'s sign-up policy' }),
  trustUpstreamMfa: t.Boolean({ description: "Whether the ID token's amr (mfa, otp, hwk) stands in for the user's own second factor" }),
  groupsClaim: t.Union([t.String(), t.Null()], { description: "The claim that lists the person's upstream groups; null: groups are not synced" }),
  groupMap: t.Record(t.String(), t.String(), { description: 'Upstream group name → local group name, set at each sign-in from the claim ({} when none)' }),
  redirectUri: t.String({ description: 'Register it at the upstream: {AUTHD_PUBLIC_URL}/t/{tenantId}/login/{providerId}/callback' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})
const IdentityView = t.Object({
  identityId: t.String({ format: 'uuid' }),
  providerId: t.String({ format: 'uuid' }),
  providerName: t.String(),
  providerType: t.Union(PROVIDER_TYPES.map((type) => t.Literal(type))),
  subject: t.String({ description: "The upstream's id of the person (sub; GitHub: the numeric user id)" }),
  email: t.Union([t.String(), t.Null()], { description: 'The address the upstream gave at the last sign-in' }),
  linkedAt: t.String({ format: 'date-time' }),
  lastUsedAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
})
const providerParams = t.Object({ providerId: t.String() })
const orNull = (schema: ReturnType<typeof t.String>, description: string) => t.Optional(t.Union([schema, t.Null()], { description }))
const settings = {
  name: t.Optional(t.String({ description: '1-64 characters, one line (default: the preset\'s, such as Google; required for oidc); unique in the tenant' })),
  issuer: orNull(t.String(), 'oidc (required) and gitlab (default https://gitlab.com): the issuer, https (http only on localhost); github: a GitHub Enterprise Server base URL (null: github.com); not taken for google and microsoft'),
  entraTenant: t.Optional(t.String({ description: 'microsoft only (required): organizations, common, or a tenant id (GUID)' })),
  clientId: t.String({ description: 'As the upstream issued it; 1-255 characters' }),
  clientSecret: t.String({ description: 'As the upstream issued it; 1-1024 characters. Stored sealed with the server key and never shown again' }),
  scopes: t.Optional(t.String({ description: 'Space-separated; must include openid except for github (default: "openid email profile"; github "read:user user:email")' })),
  linkByEmail: t.Optional(t.String({ description: `${LINK_BY_EMAIL.join(' or ')} (default: verified for google, microsoft and gitlab; never for oidc and github)` })),
  createUsers: orNull(t.String(), 'open, closed or domains:a.example,…; null: the tenant\'s sign-up policy (the default)'),
  trustUpstreamMfa: t.Optional(t.Boolean({ description: 'OpenID Connect types only (default false)' })),
  groupsClaim: orNull(t.String(), '1-64 of A-Z a-z 0-9 _ . : / -; OpenID Connect types only; null or "": none'),
  // (checked by the domain, not typed here: Elysia turns a string or an array sent for a Record into an object before validating it)
  groupMap: t.Optional(t.Unknown({ description: `An object {upstream group name: local group name} of at most ${MAX_GROUP_MAP} entries, each local group one of the tenant's; needs groupsClaim; replaces the whole map (null or {}: none)` })),
}

export const adminProviderRoutes = (deps: Deps) =>
  new Elysia({ prefix: ADMIN_PREFIX })
    .use(adminKeyGuard(deps))
    .post(
      '/providers',
      async ({ body, tenant, admin, set }) => {
        const { provider } = await createProvider(deps, tenant.id, body, admin)
        set.status = 201
        return envelope(201, 'Identity provider created', provider)
      },
      {
        adminKey: true,
        parse: 'json',
        ...strictBody({ type: t.String({ description: PROVIDER_TYPES.join(', ') }), ...settings }),
        detail: {
          summary: 'Add an upstream identity provider',
          description: `Its login page shows "Continue with {name}". Register redirectUri at the upstream. The client secret is in no answer, ever. A name the tenant has already, or a ${MAX_PROVIDERS + 1}st provider, is a 409.`,
          security: ADMIN_KEY,
          responses: responses({ status: 201, description: 'Created', data: ProviderView }, [400, 401, 403, 409, 413, 503]),
        },
      },
    )
    .get('/providers', async ({ tenant, admin }) => envelope(200, 'Identity providers', (await listProviders(deps, tenant.id, admin)).map((p) => toProviderView(deps.config, p))), {
      adminKey: true,
      detail: { summary: "The tenant's upstream identity providers", security: ADMIN_KEY, responses: responses({ status: 200, description: 'By name', data: t.Array(ProviderView) }, [401, 403, 503]) },
    })
    .get('/providers/:providerId', async ({ params, admin }) => envelope(200, 'Identity provider', toProviderView(deps.config, await getProvider(deps, params.providerId, admin))), {
      adminKey: true,
      params: providerParams,
      detail: { summary: 'An upstream identity provider', security: ADMIN_KEY, responses: responses({ status: 200, description: 'The provider', data: ProviderView }, [401, 403, 404, 503]) },
    })
    .patch('/providers/:providerId', async ({ params, body, admin }) => envelope(200, 'Identity provider updated', await updateProvider(deps, params.providerId, body, admin)), {
      adminKey: true,
      parse: 'json',
      params: providerParams,
      ...strictBody(
        { ...settings, clientId: t.Optional(settings.clientId), clientSecret: t.Optional(t.String({ description: 'A new secret, replacing the old one' })) },
        { refused: { type: 'type cannot change: create another provider (and delete this one)' } },
      ),
      detail: {
        summary: 'Change an upstream identity provider',
        description: 'What is given replaces what was; the type never changes. The issuer (or entraTenant) cannot change while identities are linked through the provider (409): a subject is unique only at its issuer.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'The provider after the change', data: ProviderView }, [400, 401, 403, 404, 409, 413, 503]),
      },
    })
    .delete('/providers/:providerId', async ({ params, admin }) => envelope(200, 'Identity provider deleted', await deleteProvider(deps, params.providerId, admin)), {
      adminKey: true,
      params: providerParams,
      detail: {
        summary: 'Delete an upstream identity provider',
        description: 'Every identity linked through it goes with it (identitiesDeleted says how many); their users stay.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'Deleted', data: t.Object({ providerId: t.String(), identitiesDeleted: t.Integer({ minimum: 0 }) }) }, [401, 403, 404, 503]),
      },
    })
    .get('/users/:userId/identities', async ({ params, admin }) => envelope(200, 'Identities', await listIdentities(deps, params.userId, admin)), {
      adminKey: true,
      params: t.Object({ userId: t.String() }),
      detail: { summary: "A user's linked upstream identities", security: ADMIN_KEY, responses: responses({ status: 200, description: 'Oldest first', data: t.Array(IdentityView) }, [401, 403, 404, 503]) },
    })
    .delete('/users/:userId/identities/:identityId', async ({ params, admin }) => envelope(200, 'Identity unlinked', await unlinkIdentity(deps, params.userId, params.identityId, admin)), {
      adminKey: true,
      params: t.Object({ userId: t.String(), identityId: t.String() }),
      detail: {
        summary: "Unlink one of a user's upstream identities",
        description: "The user's last way to sign in (no password, no passkey, no other identity) is never unlinked: 409.",
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'Unlinked', data: t.Object({ userId: t.String(), identityId: t.String() }) }, [401, 403, 404, 409, 503]),
      },
    })
