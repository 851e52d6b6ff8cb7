// The console's settings of the tenant (product spec §27): what PATCH /api/v1/admin/tenant lets
// an admin key change, and nothing more: the pages' slug and branding, the passkeys' relying
// party and the sign-up policy, in one change (updateTenantSettings, as that route calls it).
// What the operator alone sets (return-to origins, forward-auth domains, audience, the console
// itself, a logo file) is shown read-only with the command that changes it.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { toForwardAuthSettingsView } from '../../core/forward-auth/view'
import { toTenantPagesView, type TenantPagesInput } from '../../core/tenants/tenant-pages'
import { updateTenantSettings } from '../../core/tenants/settings'
import { toTenantSettingsView } from '../../core/tenants/tenants'
import type { Tenant } from '../../core/types'
import { clientActor } from '../plugins/client-ip'
import { field, form, formValue, notice, problems, type FormState } from '../pages/forms'
import { html } from '../pages/html'
import { PAGE_PREFIX, type PageRequest } from '../pages/page'
import { consoleChange, consoleProblem, openConsole, type Console } from './frame'

const PAGES_FIELDS = ['slug', 'displayName', 'accentColor', 'logoUrl'] as const
const FIELDS = [...PAGES_FIELDS, 'passkeyRpId', 'passkeyOrigins', 'signup'] as const
type SettingsField = (typeof FIELDS)[number]

/** The tenant as GET /api/v1/admin/tenant shows it. */
const viewOf = (deps: Deps, tenant: Tenant) => ({ ...toTenantSettingsView(deps, tenant), ...toTenantPagesView(deps.config, tenant), ...toForwardAuthSettingsView(deps.config, tenant) })

/** The form's values as the tenant has them now. */
function currentValues(deps: Deps, tenant: Tenant): Record<SettingsField, string> {
  const view = viewOf(deps, tenant)
  return { slug: view.slug ?? '', displayName: view.displayName ?? '', accentColor: view.accentColor ?? '', logoUrl: view.logoUrl ?? '', passkeyRpId: view.passkeyRpId, passkeyOrigins: view.passkeyOrigins.join(', '), signup: view.signup }
}

function settingsPage(deps: Deps, console: Console, done?: string, state: FormState = {}, status = 200): string {
  const { c, page } = console
  const tenant = page.tenant
  const view = viewOf(deps, tenant)
  const values = { ...currentValues(deps, tenant), ...state.values }
  const shown = { ...state, values }
  const keep = (name: SettingsField, label: string, hint?: string) => field({ name, label, hint, autocomplete: 'off', keepValue: true }, shown)
  const command = (option: string) => html`<code>authd tenants update ${tenant.id} ${option}</code>`
  const list = (items: string[]) => (items.length === 0 ? c('console.none') : items.join(', '))
  const main = html`${notice({ notice: done === 'saved' ? c('console.settings.saved.notice') : undefined })}
<h2>${c('console.settings.pages')}</h2>
<p>${c('console.settings.pages.intro')}</p>
${view.logoFile && html`<p>${c('console.settings.logoFile', { type: view.logoFile })}</p>`}
${problems(page.t, state)}
${form(
  { action: `${console.home}/settings`, token: page.token, submit: c('console.settings.save') },
  keep('slug', c('console.settings.slug'), c('console.settings.slug.hint')),
  keep('displayName', c('console.settings.displayName')),
  keep('accentColor', c('console.settings.accentColor'), c('console.settings.accentColor.hint')),
  keep('logoUrl', c('console.settings.logoUrl'), c('console.settings.logoUrl.hint')),
  html`<h3>${c('console.settings.passkeys')}</h3>`,
  keep('passkeyRpId', c('console.settings.passkeyRpId'), c('console.settings.passkeyRpId.hint')),
  keep('passkeyOrigins', c('console.settings.passkeyOrigins'), c('console.settings.passkeyOrigins.hint')),
  html`<h3>${c('console.settings.signup')}</h3>`,
  keep('signup', c('console.settings.signup'), c('console.settings.signup.hint')),
)}
<h2>${c('console.settings.operator')}</h2>
<p>${c('console.settings.operator.intro')}</p>
<table><thead><tr><th scope="col">${c('console.settings.setting')}</th><th scope="col">${c('console.settings.value')}</th><th scope="col">${c('console.settings.command')}</th></tr></thead><tbody>
<tr><td>${c('console.settings.tenantId')}</td><td>${tenant.id}</td><td>—</td></tr>
<tr><td>${c('console.settings.name')}</td><td>${view.name}</td><td>—</td></tr>
<tr><td>${c('console.settings.returnTo')}</td><td>${list(view.returnToOrigins)}</td><td>${command('--return-to-origin https://app.example.com')}</td></tr>
<tr><td>${c('console.settings.forwardAuth')}</td><td>${list(view.forwardAuthDomains)}</td><td>${command('--forward-auth-domain example.com')}</td></tr>
<tr><td>${c('console.settings.audience')}</td><td>${view.audience}</td><td>${command('--audience <aud>')}</td></tr>
<tr><td>${c('console.settings.console')}</td><td>${c('console.settings.on')}</td><td>${command('--console off')}</td></tr>
</tbody></table>`
  return console.render('settings', c('console.section.settings'), main, { status })
}

/** A refusal naming its field first ("accentColor must be …", "The slug … belongs to another tenant") shown on that field. */
function placed(state: FormState): FormState {
  const message = state.formError
  if (!message) return state
  const named = message.startsWith('The slug ') ? 'slug' : FIELDS.find((name) => message.startsWith(`${name} `))
  return named ? { ...state, formError: undefined, errors: { [named]: message } } : state
}

export const consoleSettings = (deps: Deps) =>
  new Elysia({ prefix: `${PAGE_PREFIX}/admin` })
    .use(clientActor(deps.config.trustedProxies))
    .get('/settings', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return settingsPage(deps, open, ctx.query?.done)
    })
    .post('/settings', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx, true)
      if ('answer' in open) return open.answer
      const tenant = open.page.tenant
      const values = Object.fromEntries(FIELDS.map((name) => [name, formValue(ctx.body, name).trim()])) as Record<SettingsField, string>
      const current = currentValues(deps, tenant)
      return consoleChange(deps, open, `${open.home}/settings`, async () => {
        let updated = tenant
        try {
          // (PATCH /admin/tenant with the fields that changed, all checked before any is written: an empty one is null, the default again)
          const pages: TenantPagesInput = {}
          for (const name of PAGES_FIELDS) if (values[name] !== current[name]) pages[name] = values[name] === '' ? null : values[name]
          const relyingParty = {
            rpId: values.passkeyRpId !== current.passkeyRpId ? values.passkeyRpId : undefined,
            origins: values.passkeyOrigins !== current.passkeyOrigins ? values.passkeyOrigins.split(',').map((o) => o.trim()).filter((o) => o !== '') : undefined,
          }
          // (a policy is never empty: an empty field, as from a form without it, changes nothing)
          const signup = values.signup !== '' && values.signup !== current.signup ? values.signup : undefined
          updated = await updateTenantSettings(deps, tenant.id, { pages, relyingParty, signup }, open.actor)
        } catch (error) {
          const { state, status } = consoleProblem(open.page, error)
          return settingsPage(deps, open, undefined, { ...placed(state), values }, status)
        }
        // The pages' address follows a new slug when the console was reached by the old one.
        const ref = open.page.base.slice('/t/'.length)
        const base = ref === tenant.id ? open.page.base : `/t/${updated.slug ?? updated.id}`
        return open.page.redirect(`${base}/admin/settings?done=saved`)
      })
    })
