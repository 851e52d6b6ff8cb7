// The admin API's access rules (product spec §24), under /api/v1/admin: the same domain
// functions as `authd access-rules …`, confined to the key's tenant (another tenant's rule is a
// 404, as an unknown one is) and audited with the key's id. The protected domains the rules
// live in are the operator's (authd tenants update --forward-auth-domain), never a key's.
import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'
import { addAccessRule, getAccessRule, listAccessRules, MAX_RULES, removeAccessRule } from '../../core/forward-auth/rules'
import { ACCESS_POLICIES } from '../../core/forward-auth/types'
import { toAccessRuleView } from '../../core/forward-auth/view'
import { envelope } from '../errors'
import { ADMIN_KEY, responses } from '../openapi'
import { adminKeyGuard } from '../plugins/admin-key'
import { strictBody } from '../plugins/strict-body'
import { ADMIN_PREFIX } from './admin'

const POLICIES = ACCESS_POLICIES.join(', ')

const AccessRuleView = t.Object({
  ruleId: t.String({ format: 'uuid' }),
  position: t.Integer({ minimum: 1, description: 'The order rules are asked in: 1 first; the first that matches a request decides' }),
  domain: t.String({ description: 'A host (app.example.com) or every host under a domain (*.example.com)' }),
  paths: t.Array(t.String(), { description: 'Path prefixes, any of which matches; [] for every path' }),
  methods: t.Array(t.String(), { description: 'HTTP methods, any of which matches; [] for every method' }),
  policy: t.Union(ACCESS_POLICIES.map((policy) => t.Literal(policy))),
  groups: t.Array(t.String(), { description: 'Groups any of whose members the rule admits; [] for any signed-in user' }),
  createdAt: t.String({ format: 'date-time' }),
})
const ruleParams = t.Object({ ruleId: t.String() })
const list = (description: string) => t.Optional(t.Array(t.String(), { description }))

export const adminAccessRuleRoutes = (deps: Deps) =>
  new Elysia({ prefix: ADMIN_PREFIX })
    .use(adminKeyGuard(deps))
    .get('/access-rules', async ({ tenant, admin }) => envelope(200, 'Access rules', (await listAccessRules(deps, tenant.id, admin)).map(toAccessRuleView)), {
      adminKey: true,
      detail: {
        summary: "The tenant's access rules",
        description: 'In the order they are asked in (position 1 first): the first rule whose domain, path and method match a request decides; a request no rule matches is denied.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'In order', data: t.Array(AccessRuleView) }, [401, 403, 503]),
      },
    })
    .post(
      '/access-rules',
      async ({ body, tenant, admin, set }) => {
        const rule = await addAccessRule(deps, tenant.id, body, admin)
        set.status = 201
        return envelope(201, 'Access rule created', toAccessRuleView(rule))
      },
      {
        adminKey: true,
        parse: 'json',
        ...strictBody({
          domain: t.String({ description: "app.example.com, or *.example.com for every host under a domain; inside one of the tenant's forward-auth domains" }),
          paths: list('Path prefixes starting with / (at most 20); none: every path'),
          methods: list('HTTP methods (at most 20); none: every method'),
          policy: t.String({ description: POLICIES }),
          groups: list('Names of groups of the tenant (one_factor and two_factor only; at most 20): any of their members is admitted; none: any signed-in user'),
          // (t.Number, not t.Integer: Elysia's Integer also takes "2", a string, in a JSON body)
          position: t.Optional(t.Number({ description: `A whole number from 1 to ${MAX_RULES}: the rule goes there and those at and after it move down; past the end, or none: last` })),
        }),
        detail: {
          summary: 'Add an access rule',
          description: `policy: ${POLICIES} (two_factor admits only a sign-in that used a second factor). An unknown group is a 400 naming it; so is a domain outside the tenant's forward-auth domains, which the operator sets (authd tenants update --forward-auth-domain). A tenant has at most ${MAX_RULES} rules (409 after).`,
          security: ADMIN_KEY,
          responses: responses({ status: 201, description: 'Created, with the position it took', data: AccessRuleView }, [400, 401, 403, 409, 413, 503]),
        },
      },
    )
    .get('/access-rules/:ruleId', async ({ params, admin }) => envelope(200, 'Access rule', toAccessRuleView(await getAccessRule(deps, params.ruleId, admin))), {
      adminKey: true,
      params: ruleParams,
      detail: { summary: 'An access rule', security: ADMIN_KEY, responses: responses({ status: 200, description: 'The rule', data: AccessRuleView }, [401, 403, 404, 503]) },
    })
    .delete('/access-rules/:ruleId', async ({ params, admin }) => envelope(200, 'Access rule deleted', { ruleId: (await removeAccessRule(deps, params.ruleId, admin)).id }), {
      adminKey: true,
      params: ruleParams,
      detail: {
        summary: 'Delete an access rule',
        description: 'The rules after it move up one place. In force at once on this instance, within 15 seconds on the others.',
        security: ADMIN_KEY,
        responses: responses({ status: 200, description: 'Deleted', data: t.Object({ ruleId: t.String() }) }, [401, 403, 404, 503]),
      },
    })
