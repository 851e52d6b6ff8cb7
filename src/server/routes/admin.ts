// The admin API (product spec §14), under /api/v1/admin: an application's back end manages
// its tenant's users with an admin-scoped API key. Each handler calls the same domain
// function as the CLI command of the same name, with the key as the actor: every call is
// confined to the key's tenant and audited with the key's id.
import { Elysia, t } from 'elysia'
import { readAudit } from '../../core/audit/audit'
import { toForwardAuthSettingsView } from '../../core/forward-auth/view'
import type { Deps } from '../../core/deps'
import { resetMfa } from '../../core/mfa/enrolment'
import { deleteUserPasskey, listUserPasskeys } from '../../core/passkeys/manage'
import { toTenantSettingsView } from '../../core/tenants/tenants'
import { toTenantPagesView } from '../../core/tenants/tenant-pages'
import { updateTenantSettings } from '../../core/tenants/settings'
import type { Tenant } from '../../core/types'
import { badRequest } from '../../core/errors'
import { withIdempotencyKey } from '../../core/guards/idempotency'
import { listUserSessions, revokeUserSessions } from '../../core/sessions/sessions'
import { inviteUser, toInvitationView } from '../../core/accounts/setup-password'
import { createUser, deleteUser, listUsers, toCreatedUserView, updateUser, viewUser } from '../../core/accounts/users'
import { envelope } from '../errors'
import { ADMIN_KEY, responses, schemas } from '../openapi'
import { adminKeyGuard } from '../plugins/admin-key'
import { strictBody } from '../plugins/strict-body'

export const ADMIN_PREFIX = '/api/v1/admin'

const userIdParams = t.Object({ userId: t.String() })
/** Query numbers stay strings here: the domain says what a bad one is, in its own words. */
const toLimit = (raw: string | undefined) => (raw === undefined ? undefined : /^\d{1,6}$/.test(raw) ? Number(raw) : NaN)

export const adminRoutes = (deps: Deps) =>
  new Elysia({ prefix: ADMIN_PREFIX })
    .use(adminKeyGuard(deps))
    .post(
      '/users',
      async ({ body, tenant, admin, headers, set }) => {
        const answer = await withIdempotencyKey(deps, { tenantId: tenant.id, key: headers['idempotency-key'], request: ['POST /users', body] }, async () => {
          const created = await createUser(deps, { ...body, tenantId: tenant.id }, admin)
          return { statusCode: 201, body: toCreatedUserView(created), userId: created.user.id }
        })
        if (answer.replayed) set.headers['idempotent-replayed'] = 'true'
        set.status = answer.statusCode
        return envelope(answer.statusCode, 'User created', answer.body)
      },
      {
        adminKey: true,
        parse: 'json',
        ...strictBody({
          email: t.String(),
          firstName: t.String(),
          lastName: t.String(),
          type: t.Optional(t.String()),
          password: t.Optional(t.String()),
          invite: t.Optional(t.Boolean()),
          emailVerified: t.Optional(t.Boolean({ description: 'true: you vouch that the user receives mail at this address (emailVerifiedAt is set)' })),
        }),
        headers: t.Object({ 'idempotency-key': t.Optional(t.String()) }, { additionalProperties: true }),
        detail: {
          summary: 'Create a user',
          description:
            'With password: the user can log in. With invite: true, a setup token is e-mailed. With neither, data carries the setup token. An Idempotency-Key header makes a retry within 24 hours return the first answer (with Idempotent-Replayed: true); the same key with another body is a 409.',
          security: ADMIN_KEY,
          responses: responses({ status: 201, description: 'Created', data: schemas.CreatedUser }, [400, 401, 403, 404, 409, 413, 503]),
        },
      },
    )
    .get(
      '/users',
      async ({ query, tenant, admin }) =>
        envelope(200, 'Users', await listUsers(deps, tenant.id, { email: query.email, cursor: query.cursor, limit: toLimit(query.limit) }, admin)),
      {
        adminKey: true,
        query: t.Object({ email: t.Optional(t.String()), cursor: t.Optional(t.String()), limit: t.Optional(t.String()) }),
        detail: {
          summary: "List the tenant's users",
          description: 'In creation order, a page at a time (limit 1-100, default 50); pass nextCursor as cursor for the next page. email= finds one address.',
          security: ADMIN_KEY,
          responses: responses({ status: 200, description: 'A page of users', data: schemas.UserPage }, [400, 401, 403, 503]),
        },
      },
    )
    .get('/users/:userId', async ({ params, admin }) => envelope(200, 'User', await viewUser(deps, params.userId, admin)), {
      adminKey: true,
      params: userIdParams,
      detail: { summary: 'A user', security: ADMIN_KEY, responses: responses({ status: 200, description: 'The user', data: schemas.UserView }, [401, 403, 404, 503]) },
    })
    .patch('/users/:userId', async ({ params, body, admin }) => envelope(200, 'User updated', await updateUser(deps, params.userId, body, admin)), {
      adminKey: true,
      parse: 'json',
      params: userIdParams,
      ...strictBody({
        email: t.Optional(t.String()),
        firstName: t.Optional(t.String()),
        lastName: t.Optional(t.String()),
        type: t.Optional(t.String()),
        disabled: t.Optional(t.Boolean()),
        emailVerified: t.Optional(t.Boolean({ description: 'true: you vouch for the address (emailVerifiedAt set to now); false: clears it' })),
      }),
      detail: {
        summary: 'Change a user',
        description:
          'Address, names, type, emailVerified, or disabled: disabling ends every session of the user at once and spends their OTPs and setup tokens. A new address clears emailVerifiedAt (unless the same change sets emailVerified: true) and spends the setup tokens and OTPs mailed to the old one; one taken in the tenant is a 409.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'The user after the change', data: schemas.UserView }, [400, 401, 403, 404, 409, 413, 503]),
      },
    })
    .delete('/users/:userId', async ({ params, admin }) => envelope(200, 'User deleted', await deleteUser(deps, params.userId, admin)), {
      adminKey: true,
      params: userIdParams,
      detail: {
        summary: 'Delete a user and erase their personal data',
        description: 'Sessions end at once; address, names, password hash, sessions, OTPs, setup tokens and mail to the user are erased. Audit events keep only the user id.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'Deleted', data: t.Object({ userId: t.String() }) }, [401, 403, 404, 503]),
      },
    })
    .post(
      '/users/:userId/invite',
      async ({ params, admin, set }) => {
        const invited = await inviteUser(deps, params.userId, admin)
        set.status = 201
        return envelope(201, 'Invitation sent', toInvitationView(invited))
      },
      {
        adminKey: true,
        params: userIdParams,
        detail: {
          summary: 'Invite a user again',
          description: 'A new setup token, e-mailed to the user and returned; earlier ones stop working.',
          security: ADMIN_KEY,
          responses: responses({ status: 201, description: 'Invited', data: schemas.Invitation }, [400, 401, 403, 404, 409, 503]),
        },
      },
    )
    .get('/users/:userId/sessions', async ({ params, admin }) => envelope(200, 'Sessions', await listUserSessions(deps, params.userId, admin)), {
      adminKey: true,
      params: userIdParams,
      detail: {
        summary: "A user's sessions",
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'Live sessions, newest first (current is always false here)', data: t.Array(schemas.SessionView) }, [401, 403, 404, 503]),
      },
    })
    .delete('/users/:userId/sessions', async ({ params, admin }) => envelope(200, 'Sessions revoked', { userId: params.userId, revoked: await revokeUserSessions(deps, params.userId, admin) }), {
      adminKey: true,
      params: userIdParams,
      detail: {
        summary: "End all of a user's sessions",
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'How many sessions ended', data: t.Object({ userId: t.String({ format: 'uuid' }), revoked: t.Integer({ minimum: 0 }) }) }, [401, 403, 404, 503]),
      },
    })
    .delete('/users/:userId/mfa', async ({ params, admin }) => envelope(200, 'Second factor removed', { userId: params.userId, removed: await resetMfa(deps, params.userId, admin) }), {
      adminKey: true,
      params: userIdParams,
      detail: {
        summary: "Remove a user's second factor",
        description: 'For a lost authenticator: the TOTP secret and recovery codes go, login asks for the password only, and a mail tells the user. removed is false when the user had none.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'Removed', data: t.Object({ userId: t.String({ format: 'uuid' }), removed: t.Boolean() }) }, [401, 403, 404, 503]),
      },
    })
    .get('/users/:userId/passkeys', async ({ params, admin }) => envelope(200, 'Passkeys', await listUserPasskeys(deps, params.userId, admin)), {
      adminKey: true,
      params: userIdParams,
      detail: { summary: "A user's passkeys", security: ADMIN_KEY, responses: responses({ status: 200, description: 'The passkeys, oldest first', data: t.Array(schemas.PasskeyView) }, [401, 403, 404, 503]) },
    })
    .delete('/users/:userId/passkeys/:passkeyId', async ({ params, admin }) => envelope(200, 'Passkey removed', await deleteUserPasskey(deps, params.userId, params.passkeyId, admin)), {
      adminKey: true,
      params: t.Object({ userId: t.String(), passkeyId: t.String() }),
      detail: {
        summary: "Remove a user's passkey",
        description: 'For a lost or stolen device: the passkey signs in no more.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'Removed', data: t.Object({ userId: t.String(), passkeyId: t.String() }) }, [401, 403, 404, 503]),
      },
    })
    .get('/tenant', ({ tenant }) => envelope(200, 'Tenant', tenantView(deps, tenant)), {
      adminKey: true,
      detail: { summary: "The key's tenant and its settings", security: ADMIN_KEY, responses: responses({ status: 200, description: 'The tenant', data: schemas.TenantSettings }, [401, 403, 503]) },
    })
    .patch(
      '/tenant',
      async ({ tenant, admin, body }) => {
        const { passkeyRpId, passkeyOrigins, signup, ...pages } = body
        const updated = await updateTenantSettings(deps, tenant.id, { pages, relyingParty: { rpId: passkeyRpId, origins: passkeyOrigins }, signup }, admin)
        return envelope(200, 'Tenant updated', tenantView(deps, updated))
      },
      {
        adminKey: true,
        parse: 'json',
        ...strictBody({
          passkeyRpId: t.Optional(t.String()),
          passkeyOrigins: t.Optional(t.Array(t.String())),
          slug: t.Optional(t.Union([t.String(), t.Null()])),
          displayName: t.Optional(t.Union([t.String(), t.Null()])),
          accentColor: t.Optional(t.Union([t.String(), t.Null()])),
          logoUrl: t.Optional(t.Union([t.String(), t.Null()])),
          signup: t.Optional(t.String({ description: 'Who may sign up: closed, open, or domains:a.example,b.example (as authd tenants update --signup)', examples: ['closed', 'open', 'domains:acme.example'] })),
        }, { refused: { returnToOrigins: OPERATOR_ONLY, forwardAuthDomains: FORWARD_AUTH_OPERATOR_ONLY } }),
        detail: {
          summary: "Change the tenant's settings: its pages, its passkey relying party and its sign-up policy",
          description:
            'returnToOrigins and forwardAuthDomains cannot be set here (400): the operator sets them with the CLI. slug: the name of its pages in their URL (/t/{slug}/; lower-case letters, digits, inner dashes; 409 if another tenant has it). displayName, accentColor (#rrggbb) and logoUrl (https) brand its pages; null restores the default. signup: closed, open or domains:a.example,b.example (400 otherwise). passkeyRpId: a host name; passkeyOrigins: the https origins (http only for localhost) whose pages run passkey ceremonies, each on the RP ID or a subdomain of it (400 otherwise).',
          security: ADMIN_KEY,
          responses: responses({ status: 200, description: 'The tenant', data: schemas.TenantSettings }, [400, 401, 403, 409, 413, 503]),
        },
      },
    )
    .get(
      '/audit',
      async ({ query, admin }) => {
        const since = query.since === undefined ? undefined : Date.parse(query.since)
        const events = await readAudit(deps, { type: query.type, userId: query.userId, since: Number.isNaN(since) ? invalidSince() : since, limit: toLimit(query.limit) }, admin)
        return envelope(200, 'Audit events', events)
      },
      {
        adminKey: true,
        query: t.Object({ type: t.Optional(t.String()), userId: t.Optional(t.String()), since: t.Optional(t.String()), limit: t.Optional(t.String()) }),
        detail: {
          summary: "The tenant's audit events",
          description: 'Newest first. type= an event type or a family such as login.*; since= an ISO 8601 date or time; limit 1-1000, default 100.',
          security: ADMIN_KEY,
          responses: responses({ status: 200, description: 'Events', data: t.Array(schemas.AuditView) }, [400, 401, 403, 404, 503]),
        },
      },
    )

/** The origins a sign-in's return_to may lead to are the operator's (`authd tenants update
 *  --return-to-origin`): an admin key that could set them would make authd a redirector to a
 *  site of its choosing. Named in a PATCH, they are refused, not silently dropped. */
const OPERATOR_ONLY = 'returnToOrigins is set by the operator (authd tenants update --return-to-origin), not through the admin API'
/** The same for the protected domains: a sign-in's return_to may lead anywhere on them. */
const FORWARD_AUTH_OPERATOR_ONLY = 'forwardAuthDomains is set by the operator (authd tenants update --forward-auth-domain), not through the admin API'

/** The tenant as the admin API shows it: its settings, those of its pages and of forward authentication. */
const tenantView = (deps: Deps, tenant: Tenant) => ({ ...toTenantSettingsView(deps, tenant), ...toTenantPagesView(deps.config, tenant), ...toForwardAuthSettingsView(deps.config, tenant) })

function invalidSince(): never {
  throw badRequest('since must be an ISO 8601 date or date-time, such as 2026-11-01 or 2026-11-01T12:00:00Z')
}
