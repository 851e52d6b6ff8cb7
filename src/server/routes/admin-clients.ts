// The admin API's OpenID Connect clients (product spec §21), under /api/v1/admin/clients: the
// same domain functions as `authd clients …`, confined to the key's tenant and audited with
// the key's id. A client secret is in the answer of create and rotate-secret only.
import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { createClient, deleteClient, getClient, listClients, rotateClientSecret, toClientView, updateClient } from '../../core/oidc/clients'
import { endUserGrants, listUserGrants } from '../../core/oidc/grants'
import { envelope } from '../errors'
import { ADMIN_KEY, responses } from '../openapi'
import { adminKeyGuard } from '../plugins/admin-key'
import { strictBody } from '../plugins/strict-body'
import { ADMIN_PREFIX } from './admin'

const JwksSchema = t.Object({ keys: t.Array(t.Record(t.String(), t.Unknown())) }, { description: 'A JSON Web Key Set (RFC 7517 §5)' })
const jwks = t.Optional(
  t.Unknown({
    description:
      'Public keys (a JWKS, 1 to 10 keys: RSA of 2048 bits or more, EC P-256/P-384/P-521, Ed25519): the client authenticates with private_key_jwt (RFC 7523) and gets no secret. A private or symmetric key is refused. On update (a private_key_jwt client only) the set replaces the old one at once.',
    examples: [{ keys: [{ kty: 'EC', crv: 'P-256', x: 'WbbaSStuffi7mDoAjnJ6OnNmrZh5n-ZjXDcC_3jGFjI', y: 'Q7qRZ6S2y6lhjAJXU3Hn2l_Lq6wCgGBrxzSSMC7aI30', kid: 'robot-2026' }] }],
  }),
)
const ClientView = t.Object({
  clientId: t.String({ description: 'The client_id' }),
  tenantId: t.String({ format: 'uuid' }),
  name: t.String({ description: 'Shown to users on the consent page' }),
  type: t.Union([t.Literal('confidential'), t.Literal('public')], { description: 'confidential: authenticates with its secret or its keys; public: none, PKCE (S256) required' }),
  authMethod: t.Union([t.Literal('client_secret'), t.Literal('private_key_jwt'), t.Literal('none')], { description: 'client_secret: its secret, as client_secret_basic or client_secret_post; private_key_jwt: an assertion signed with one of its keys (RFC 7523); none: a public client' }),
  jwks: t.Union([JwksSchema, t.Null()], { description: "A private_key_jwt client's public keys; null otherwise" }),
  secretPrefix: t.Union([t.String(), t.Null()], { description: "The secret's first characters, to tell secrets apart (never the secret)" }),
  redirectUris: t.Array(t.String(), { description: 'Matched exactly at the authorization endpoint' }),
  postLogoutRedirectUris: t.Array(t.String()),
  firstParty: t.Boolean({ description: 'A first-party client skips the consent page' }),
  idTokenAlg: t.Union([t.Literal('RS256'), t.Literal('ES256')], { description: 'How its ID tokens are signed (id_token_signed_response_alg)' }),
  allowedGroups: t.Union([t.Array(t.String()), t.Null()], { description: 'Names of the groups whose members alone get a code (sorted); null: anyone' }),
  groupsClaim: t.Union([t.Literal('scope'), t.Literal('always')], { description: 'scope: the groups claim only when the client asks for the scope groups; always: in every ID token and userinfo' }),
  service: t.Boolean({ description: 'A service client: the client_credentials grant only, no redirect URIs, no users' }),
  scopes: t.Array(t.String(), { description: "The scopes a service client's tokens may carry (all of them when it asks for none)" }),
  audiences: t.Array(t.String(), { description: "The audiences (RFC 8707 resources) a service client's tokens may name, and whose tokens the client may introspect" }),
  tokenLifetime: t.Integer({ description: "How long a service client's access tokens live, in seconds" }),
  device: t.Boolean({ description: 'May use the device authorization grant (RFC 8628) at /t/{tenant}/device_authorization' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})
const WithSecret = t.Object({
  client: ClientView,
  clientSecret: t.Union([t.String(), t.Null()], { description: 'Shown once, here only (null for a public or private_key_jwt client). Stored hashed: a lost secret is replaced with rotate-secret.' }),
})
const clientParams = t.Object({ clientId: t.String() })
const GrantView = t.Object({
  grantId: t.String(),
  clientId: t.String(),
  clientName: t.String(),
  scope: t.String({ description: 'The granted scopes, space-separated' }),
  createdAt: t.String({ format: 'date-time' }),
  lastUsedAt: t.String({ format: 'date-time' }),
  expiresAt: t.String({ format: 'date-time' }),
})
const uris = (description: string) => t.Optional(t.Array(t.String(), { description }))
// (a string checked by the domain, so a wrong value is a 400 that names both choices)
const allowedGroups = t.Optional(
  t.Union([t.Array(t.String()), t.Null()], {
    description: "Names of existing groups of the tenant (1 to 50): only their members get a code, anyone else sees authd's no-access page (prompt=none: access_denied) and a grant's refresh is invalid_grant once its user left them all; null: anyone. An unknown name is a 400 naming it.",
    examples: [['admins', 'staff'], null],
  }),
)
const groupsClaim = t.Optional(t.String({ description: 'scope (the default): the groups claim in ID tokens and userinfo only for the scope groups; always: for every request', examples: ['scope', 'always'] }))
const scopes = t.Optional(t.Array(t.String(), { description: 'A service client only: the scopes it may ask for (RFC 6749 scope tokens; not openid, offline_access, profile, email or groups); at most 50', examples: [['invoices:read', 'invoices:write']] }))
const audiences = t.Optional(
  t.Array(t.String(), { description: "Absolute URIs (at most 20): the resources (RFC 8707) a service client's tokens may name besides the tenant's audience, and whose tokens this client may introspect. Not for a public client.", examples: [['https://api.example.com/']] }),
)
const tokenLifetime = t.Optional(t.Union([t.Integer(), t.String()], { description: "A service client only: its access tokens' lifetime, seconds or a duration such as 15m or 1h (1 minute to 24 hours; default 15m)", examples: [900, '15m'] }))
const idTokenAlg = t.Optional(t.String({ description: 'How its ID tokens are signed (id_token_signed_response_alg): RS256 (the default, which every relying party accepts) or ES256, in any case (stored upper case)', examples: ['RS256', 'ES256'] }))

export const adminClientRoutes = (deps: Deps) =>
  new Elysia({ prefix: ADMIN_PREFIX })
    .use(adminKeyGuard(deps))
    .post(
      '/clients',
      async ({ body, tenant, admin, set }) => {
        const { client, clientSecret } = await createClient(deps, tenant.id, body, admin)
        set.status = 201
        return envelope(201, 'Client created', { client: toClientView(client), clientSecret })
      },
      {
        adminKey: true,
        parse: 'json',
        ...strictBody({
          name: t.String(),
          redirectUris: t.Optional(t.Array(t.String(), { description: 'https (http only on localhost), or a private-use scheme such as com.example.app:/callback; 1 to 20 (none for a service client; 0 to 20 for a device client)' })),
          postLogoutRedirectUris: uris('Where end_session may send the browser back to'),
          public: t.Optional(t.Boolean({ description: 'A public client (a single-page or native app): no secret, PKCE (S256) required' })),
          firstParty: t.Optional(t.Boolean({ description: 'The operator’s own application: no consent page' })),
          idTokenAlg,
          allowedGroups,
          groupsClaim,
          service: t.Optional(t.Boolean({ description: 'A service client (a machine, no users): confidential, the client_credentials grant only, no redirect URIs' })),
          scopes,
          audiences,
          tokenLifetime,
          device: t.Optional(t.Boolean({ description: 'May use the device authorization grant (RFC 8628): a CLI tool or TV signs a person in through /t/{tenant}/device. Public or confidential; redirect URIs then optional. Not for a service client.' })),
          jwks,
        }),
        detail: {
          summary: 'Register an OpenID Connect client',
          description: "A client of the tenant's issuer {AUTHD_PUBLIC_URL}/t/{tenant}. A confidential client's secret is in this answer only.",
          security: ADMIN_KEY,
          responses: responses({ status: 201, description: 'Created', data: WithSecret }, [400, 401, 403, 413, 503]),
        },
      },
    )
    .get('/clients', async ({ tenant }) => envelope(200, 'Clients', (await listClients(deps, tenant.id)).map(toClientView)), {
      adminKey: true,
      detail: { summary: "The tenant's OpenID Connect clients", security: ADMIN_KEY, responses: responses({ status: 200, description: 'Oldest first', data: t.Array(ClientView) }, [401, 403, 503]) },
    })
    .get('/clients/:clientId', async ({ params, admin }) => envelope(200, 'Client', toClientView(await getClient(deps, params.clientId, admin))), {
      adminKey: true,
      params: clientParams,
      detail: { summary: 'An OpenID Connect client', security: ADMIN_KEY, responses: responses({ status: 200, description: 'The client', data: ClientView }, [401, 403, 404, 503]) },
    })
    .patch('/clients/:clientId', async ({ params, body, admin }) => envelope(200, 'Client updated', toClientView(await updateClient(deps, params.clientId, body, admin))), {
      adminKey: true,
      parse: 'json',
      params: clientParams,
      ...strictBody({ name: t.Optional(t.String()), redirectUris: uris('Replaces the list'), postLogoutRedirectUris: uris('Replaces the list'), firstParty: t.Optional(t.Boolean()), idTokenAlg, allowedGroups, groupsClaim, scopes, audiences, tokenLifetime, jwks }),
      detail: {
        summary: 'Change an OpenID Connect client',
        description: 'What is given replaces what was; a client stays public or confidential, and a service client stays one.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'The client after the change', data: ClientView }, [400, 401, 403, 404, 413, 503]),
      },
    })
    .post(
      '/clients/:clientId/rotate-secret',
      async ({ params, admin }) => {
        const { client, clientSecret } = await rotateClientSecret(deps, params.clientId, admin)
        return envelope(200, 'Secret rotated', { client: toClientView(client), clientSecret })
      },
      {
        adminKey: true,
        params: clientParams,
        detail: {
          summary: "Replace a confidential client's secret",
          description: 'The old secret stops working at once; the new one is in this answer only. A private_key_jwt client has no secret (400): its keys are replaced with PATCH jwks.',
          security: ADMIN_KEY,
          responses: responses({ status: 200, description: 'The new secret', data: WithSecret }, [400, 401, 403, 404, 503]),
        },
      },
    )
    .delete(
      '/clients/:clientId',
      async ({ params, admin }) => {
        await deleteClient(deps, params.clientId, admin)
        return envelope(200, 'Client deleted', { clientId: params.clientId })
      },
      {
        adminKey: true,
        params: clientParams,
        detail: {
          summary: 'Delete an OpenID Connect client',
          description: 'Its codes and consents go, and every grant it holds is revoked.',
          security: ADMIN_KEY,
          responses: responses({ status: 200, description: 'Deleted', data: t.Object({ clientId: t.String() }) }, [401, 403, 404, 503]),
        },
      },
    )
    .get('/users/:userId/grants', async ({ params, admin }) => envelope(200, 'Grants', await listUserGrants(deps, params.userId, admin)), {
      adminKey: true,
      params: t.Object({ userId: t.String() }),
      detail: {
        summary: "A user's live grants to OpenID Connect clients",
        description: 'Newest first: each the tokens one sign-in gave one client (refreshed until it ends). Not listed among the sessions.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'Grants', data: t.Array(GrantView) }, [401, 403, 404, 503]),
      },
    })
    .delete(
      '/users/:userId/grants/:clientId',
      async ({ params, admin }) => envelope(200, 'Grants ended', { userId: params.userId, clientId: params.clientId, ended: await endUserGrants(deps, params.userId, params.clientId, admin) }),
      {
        adminKey: true,
        params: t.Object({ userId: t.String(), clientId: t.String() }),
        detail: {
          summary: "End a user's grants to a client",
          description: 'Its refresh and access tokens stop working at once (userinfo refuses them); the consent stays.',
          security: ADMIN_KEY,
          responses: responses({ status: 200, description: 'How many grants ended', data: t.Object({ userId: t.String(), clientId: t.String(), ended: t.Integer({ minimum: 0 }) }) }, [401, 403, 404, 503]),
        },
      },
    )

