// The console's access rules (product spec §27, §24): the tenant's protected domains (read only:
// the operator's, `authd tenants update --forward-auth-domain`), its rules in the order they are
// asked in (the first match decides), a rule added at a position, a rule deleted. Each action is
// its admin API twin's function (POST/DELETE /api/v1/admin/access-rules) with the console's
// actor. Rules are not moved: the admin API and the CLI have no reorder either (a position is
// given when a rule is added).
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { ACCESS_METHODS, addAccessRule, listAccessRules, removeAccessRule } from '../../core/forward-auth/rules'
import { ACCESS_POLICIES } from '../../core/forward-auth/types'
import { toForwardAuthSettingsView } from '../../core/forward-auth/view'
import { listGroups } from '../../core/groups/groups'
import { clientActor } from '../plugins/client-ip'
import { field, form, formValue, notice, problems, type FormState } from '../pages/forms'
import { html } from '../pages/html'
import { PAGE_PREFIX, type PageRequest } from '../pages/page'
import { missing } from '../pages/problems'
import { consoleChange, openConsole, type Console } from './frame'
import { checkboxes, formValues, optionalField, problemOnForm, select } from './inputs'

const RULE_FIELDS = ['domain', 'paths', 'methods', 'policy', 'groups', 'position'] as const

/** What the form sent, as kept to draw it again. */
interface RuleForm {
  values: Record<string, string>
  methods: string[]
  groups: string[]
}

async function rulesPage(deps: Deps, console: Console, query: { done?: string; position?: string }, state: FormState = {}, sent?: RuleForm, status = 200): Promise<string> {
  const { c, page } = console
  const [rules, groups] = await Promise.all([listAccessRules(deps, page.tenant.id, console.actor), listGroups(deps, page.tenant.id, console.actor)])
  const { forwardAuthDomains, cookieDomain } = toForwardAuthSettingsView(deps.config, page.tenant)
  const done =
    query.done === 'created' && /^\d{1,3}$/.test(query.position ?? '') ? c('console.rules.created.notice', { position: query.position! }) : query.done === 'deleted' ? c('console.rules.deleted.notice') : undefined
  const rows = rules.map(
    (rule) => html`<tr><td>${rule.position}</td><td>${rule.domain}</td><td>${rule.paths.length === 0 ? c('console.rules.any') : rule.paths.join(' ')}</td><td>${rule.methods.length === 0 ? c('console.rules.any') : rule.methods.join(' ')}</td><td>${rule.policy}</td><td>${rule.policy === 'bypass' || rule.policy === 'deny' ? '—' : rule.groups.length === 0 ? c('console.rules.anySignedIn') : rule.groups.join(', ')}</td><td>${form({ action: `${console.home}/rules/${rule.id}/delete`, token: page.token, submit: c('console.rules.delete'), secondary: true, submitLabel: c('console.rules.deleteLabel', { position: rule.position, domain: rule.domain }) })}</td></tr>`,
  )
  const values = sent?.values ?? { policy: 'one_factor' }
  const formState: FormState = { ...state, values }
  const main = html`${notice({ notice: done })}
<p>${c('console.rules.intro')}</p>
<h2>${c('console.rules.domains')}</h2>
${
  forwardAuthDomains.length === 0
    ? html`<p>${c('console.rules.domains.none')}</p>`
    : html`<p>${c('console.rules.domains.intro')}</p><ul>${forwardAuthDomains.map((domain) => html`<li>${domain}</li>`)}</ul>
<p>${cookieDomain ? c('console.rules.cookieDomain', { domain: cookieDomain }) : c('console.rules.cookieDomain.none')}</p>`
}
<h2>${c('console.rules.list')}</h2>
${
  rows.length === 0
    ? html`<p>${c('console.rules.none')}</p>`
    : html`<table><thead><tr><th scope="col">${c('console.rules.position')}</th><th scope="col">${c('console.rules.domain')}</th><th scope="col">${c('console.rules.paths')}</th><th scope="col">${c('console.rules.methods')}</th><th scope="col">${c('console.rules.policy')}</th><th scope="col">${c('console.rules.groups')}</th><th scope="col">${c('console.actions')}</th></tr></thead><tbody>${rows}</tbody></table>
<p class="hint">${c('console.rules.noReorder')}</p>`
}
<h2 id="create">${c('console.rules.create')}</h2>
${problems(page.t, formState)}
${form(
  { action: `${console.home}/rules`, token: page.token, submit: c('console.rules.createButton') },
  field({ name: 'domain', label: c('console.rules.domain'), hint: c('console.rules.domain.hint'), autocomplete: 'off', keepValue: true }, formState),
  optionalField({ name: 'paths', label: c('console.rules.paths'), hint: c('console.rules.paths.hint') }, formState),
  checkboxes({ name: 'methods', legend: c('console.rules.methods'), hint: c('console.rules.methods.hint'), options: ACCESS_METHODS.map((method) => ({ value: method, label: method })), checked: sent?.methods ?? [] }, formState),
  select({ name: 'policy', label: c('console.rules.policy'), options: ACCESS_POLICIES.map((policy) => ({ value: policy, label: c(`console.rules.policy.${policy}`) })), selected: values.policy }, formState),
  groups.length === 0
    ? html`<p class="hint">${c('console.rules.groups')}: ${c('console.rules.groups.empty')}</p>`
    : checkboxes({ name: 'groups', legend: c('console.rules.groups'), hint: c('console.rules.groups.hint'), options: groups.map((group) => ({ value: group.name, label: group.name })), checked: sent?.groups ?? [] }, formState),
  optionalField({ name: 'position', label: c('console.rules.position'), hint: c('console.rules.position.hint'), inputmode: 'numeric' }, formState),
)}`
  return console.render('rules', c('console.section.rules'), main, { status })
}

/** A position as typed: none, a whole number, or what was typed (for the domain to refuse in its words). */
const positionOf = (raw: string): unknown => (raw.trim() === '' ? undefined : /^\d{1,9}$/.test(raw.trim()) ? Number(raw.trim()) : raw)

export const consoleRules = (deps: Deps) =>
  new Elysia({ prefix: `${PAGE_PREFIX}/admin` })
    .use(clientActor(deps.config.trustedProxies))
    .get('/rules', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return rulesPage(deps, open, { done: ctx.query?.done, position: ctx.query?.position })
    })
    .post('/rules', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx, true)
      if ('answer' in open) return open.answer
      const values = { domain: formValue(ctx.body, 'domain'), paths: formValue(ctx.body, 'paths'), policy: formValue(ctx.body, 'policy'), position: formValue(ctx.body, 'position') }
      const sent: RuleForm = { values, methods: formValues(ctx.body, 'methods'), groups: formValues(ctx.body, 'groups') }
      return consoleChange(deps, open, `${open.home}/rules`, async () => {
        const empty = missing(open.page.t, values, ['domain', 'policy'])
        if (empty) return rulesPage(deps, open, {}, empty, sent, 400)
        let position: number
        try {
          // (POST /admin/access-rules, with the lists the form sent as the JSON body's arrays)
          const input = { domain: values.domain, paths: values.paths.split(/[\s,]+/).filter(Boolean), methods: sent.methods, policy: values.policy, groups: sent.groups, position: positionOf(values.position) }
          position = (await addAccessRule(deps, open.page.tenant.id, input, open.actor)).position
        } catch (error) {
          const { state, status } = problemOnForm(open.page, error, RULE_FIELDS)
          return rulesPage(deps, open, {}, state, sent, status)
        }
        return open.page.redirect(`${open.home}/rules?done=created&position=${position}`)
      })
    })
    .post('/rules/:ruleId/delete', async (ctx: PageRequest & { params: { ruleId: string } }) => {
      const open = await openConsole(deps, ctx, true)
      if ('answer' in open) return open.answer
      return consoleChange(deps, open, `${open.home}/rules`, async () => {
        // (DELETE /admin/access-rules/{ruleId}: another tenant's rule is a 404, thrown on to the error page)
        await removeAccessRule(deps, ctx.params.ruleId, open.actor)
        return open.page.redirect(`${open.home}/rules?done=deleted`)
      })
    })
