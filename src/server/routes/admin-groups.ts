// The admin API's groups (product spec §23), under /api/v1/admin: the same domain functions as
// `authd groups …`, confined to the key's tenant (another tenant's group or user is a 404, as
// an unknown one is) and audited with the key's id. Groups are flat: members are users only.
import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { addMembers, createGroup, deleteGroup, getGroup, groupsOfUser, listGroups, removeMembers, updateGroup } from '../../core/groups/groups'
import { memberPage } from '../../core/groups/members'
import { toGroupView } from '../../core/groups/types'
import { envelope } from '../errors'
import { ADMIN_KEY, responses } from '../openapi'
import { adminKeyGuard } from '../plugins/admin-key'
import { strictBody } from '../plugins/strict-body'
import { ADMIN_PREFIX } from './admin'

const GroupView = t.Object({
  groupId: t.String({ format: 'uuid' }),
  name: t.String({ description: '1-64 of a-z, 0-9, ".", "_", "-", starting with a letter or digit; unique in the tenant (stored lower-case)' }),
  description: t.Union([t.String(), t.Null()], { description: 'One line, at most 200 characters' }),
  createdAt: t.String({ format: 'date-time' }),
})
const MemberView = t.Object({ userId: t.String({ format: 'uuid' }), email: t.String(), firstName: t.String(), lastName: t.String() })
const MemberPage = t.Object({
  items: t.Array(MemberView),
  nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as after for the next page; null on the last page' }),
})
const groupParams = t.Object({ groupId: t.String() })
const memberParams = t.Object({ groupId: t.String(), userId: t.String() })
const name = (description: string) => t.String({ description })
const description = t.Optional(t.Union([t.String(), t.Null()], { description: 'One line, at most 200 characters; null or "" removes it' }))
/** Query numbers stay strings here: the domain says what a bad one is, in its own words. */
const toLimit = (raw: string | undefined) => (raw === undefined ? undefined : /^\d{1,6}$/.test(raw) ? Number(raw) : NaN)

export const adminGroupRoutes = (deps: Deps) =>
  new Elysia({ prefix: ADMIN_PREFIX })
    .use(adminKeyGuard(deps))
    .post(
      '/groups',
      async ({ body, tenant, admin, set }) => {
        const group = await createGroup(deps, { tenantId: tenant.id, name: body.name, description: body.description }, admin)
        set.status = 201
        return envelope(201, 'Group created', toGroupView(group))
      },
      {
        adminKey: true,
        parse: 'json',
        ...strictBody({ name: name('1-64 of a-z, 0-9, ".", "_", "-", starting with a letter or digit (upper case is stored lower-case)'), description }),
        detail: {
          summary: 'Create a group',
          description: 'Groups are flat: a group has users, never other groups. A name the tenant has already is a 409.',
          security: ADMIN_KEY,
          responses: responses({ status: 201, description: 'Created', data: GroupView }, [400, 401, 403, 409, 413, 503]),
        },
      },
    )
    .get('/groups', async ({ tenant, admin }) => envelope(200, 'Groups', (await listGroups(deps, tenant.id, admin)).map(toGroupView)), {
      adminKey: true,
      detail: { summary: "The tenant's groups", security: ADMIN_KEY, responses: responses({ status: 200, description: 'By name', data: t.Array(GroupView) }, [401, 403, 503]) },
    })
    .get('/groups/:groupId', async ({ params, admin }) => envelope(200, 'Group', toGroupView(await getGroup(deps, params.groupId, admin))), {
      adminKey: true,
      params: groupParams,
      detail: { summary: 'A group', security: ADMIN_KEY, responses: responses({ status: 200, description: 'The group', data: GroupView }, [401, 403, 404, 503]) },
    })
    .patch('/groups/:groupId', async ({ params, body, admin }) => envelope(200, 'Group updated', toGroupView(await updateGroup(deps, params.groupId, body, admin))), {
      adminKey: true,
      parse: 'json',
      params: groupParams,
      ...strictBody({ name: t.Optional(name('A new name')), description }),
      detail: {
        summary: 'Rename a group or change its description',
        description: "A name another group of the tenant has is a 409, and so is renaming a group that an OpenID client (its allowedGroups) or an access rule admits by, or an identity provider maps to: the message names them. Tokens carry the new name from their next issue.",
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'The group after the change', data: GroupView }, [400, 401, 403, 404, 409, 413, 503]),
      },
    })
    .delete('/groups/:groupId', async ({ params, admin }) => envelope(200, 'Group deleted', await deleteGroup(deps, params.groupId, admin)), {
      adminKey: true,
      params: groupParams,
      detail: {
        summary: 'Delete a group',
        description: 'Its memberships go with it. A group that an OpenID client (its allowedGroups) or an access rule admits by, or an identity provider maps to, cannot be deleted: 409 naming them.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'Deleted', data: t.Object({ groupId: t.String() }) }, [401, 403, 404, 409, 503]),
      },
    })
    .get(
      '/groups/:groupId/members',
      async ({ params, query, admin }) => {
        const { items, nextCursor } = await memberPage(deps, params.groupId, { after: query.after, limit: toLimit(query.limit) }, admin)
        return envelope(200, 'Members', { items, nextCursor })
      },
      {
        adminKey: true,
        params: groupParams,
        query: t.Object({ after: t.Optional(t.String()), limit: t.Optional(t.String()) }),
        detail: {
          summary: "A group's members",
          description: 'By user id (the order users were created), a page at a time (limit 1-100, default 50); pass nextCursor as after for the next page.',
          security: ADMIN_KEY,
          responses: responses({ status: 200, description: 'A page of members', data: MemberPage }, [400, 401, 403, 404, 503]),
        },
      },
    )
    .put(
      '/groups/:groupId/members/:userId',
      async ({ params, admin }) => {
        const { added } = await addMembers(deps, params.groupId, [params.userId], admin)
        return envelope(200, 'Member added', { groupId: params.groupId, userId: params.userId, added: added > 0 })
      },
      {
        adminKey: true,
        params: memberParams,
        detail: {
          summary: 'Add a user to a group',
          description: 'A user of the tenant; one already in the group stays (added: false), no error. A user in 100 groups already is a 409.',
          security: ADMIN_KEY,
          responses: responses({ status: 200, description: 'A member', data: t.Object({ groupId: t.String(), userId: t.String(), added: t.Boolean({ description: 'false when the user was a member already' }) }) }, [401, 403, 404, 409, 503]),
        },
      },
    )
    .delete(
      '/groups/:groupId/members/:userId',
      async ({ params, admin }) => {
        const { removed } = await removeMembers(deps, params.groupId, [params.userId], admin)
        return envelope(200, 'Member removed', { groupId: params.groupId, userId: params.userId, removed: removed > 0 })
      },
      {
        adminKey: true,
        params: memberParams,
        detail: {
          summary: 'Remove a user from a group',
          description: 'A user who is not in it is no error (removed: false). Their next token has the group no more.',
          security: ADMIN_KEY,
          responses: responses({ status: 200, description: 'Not a member', data: t.Object({ groupId: t.String(), userId: t.String(), removed: t.Boolean({ description: 'false when the user was not a member' }) }) }, [401, 403, 404, 503]),
        },
      },
    )
    .get('/users/:userId/groups', async ({ params, admin }) => envelope(200, 'Groups', (await groupsOfUser(deps, params.userId, admin)).map(toGroupView)), {
      adminKey: true,
      params: t.Object({ userId: t.String() }),
      detail: { summary: "A user's groups", security: ADMIN_KEY, responses: responses({ status: 200, description: 'By name', data: t.Array(GroupView) }, [401, 403, 404, 503]) },
    })
