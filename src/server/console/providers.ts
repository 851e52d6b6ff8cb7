// The console's upstream identity providers (product spec §25, §27): list them; add one (a
// preset's type, its name, the issuer or the Microsoft directory where the type takes one, the
// client id and secret the upstream issued); a provider's page with the redirect URI to register
// upstream, its settings to change and itself to delete (the name typed, saying how many linked
// identities go with it). Each action is its admin API twin's function (/api/v1/admin/providers…)
// with the console's actor. The client secret goes in and is never drawn again, not even once:
// the domain stores it sealed.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { AppError } from '../../core/errors'
import { PRESETS } from '../../core/federation/presets'
import { createProvider, deleteProvider, getProvider, listProviders, providerWithIdentities, toProviderView, updateProvider, type ProviderInput, type ProviderView } from '../../core/federation/providers'
import { PROVIDER_TYPES, type ProviderType } from '../../core/federation/types'
import { clientActor } from '../plugins/client-ip'
import { field, form, formValue, notice, problems, type FormState } from '../pages/forms'
import { html, type SafeHtml } from '../pages/html'
import { PAGE_PREFIX, type PageRequest } from '../pages/page'
import { formatMoment } from '../pages/strings'
import { consoleChange, consoleProblem, openConsole, type Console } from './frame'
import type { ConsoleKey } from './strings/en'

const DONE: Record<string, ConsoleKey> = {
  created: 'console.provider.created.notice',
  updated: 'console.provider.updated.notice',
  deleted: 'console.provider.deleted.notice',
}
const doneOf = (console: Console, raw: string | undefined, values: Record<string, string> = {}) => (raw !== undefined && Object.hasOwn(DONE, raw) ? console.c(DONE[raw]!, values) : undefined)

const TYPE_NAMES: Record<ProviderType, ConsoleKey> = {
  oidc: 'console.providers.type.oidc',
  google: 'console.providers.type.google',
  microsoft: 'console.providers.type.microsoft',
  gitlab: 'console.providers.type.gitlab',
  github: 'console.providers.type.github',
}

/** The directory of a Microsoft provider, read back from its issuer (https://login.microsoftonline.com/{tenant}/v2.0). */
const entraTenantOf = (issuer: string | null) => /^https:\/\/login\.microsoftonline\.com\/([^/]+)\/v2\.0$/.exec(issuer ?? '')?.[1] ?? ''

function typeSelect(console: Console, selected = 'oidc'): SafeHtml {
  return html`<div class="field"><label for="f-type">${console.c('console.providers.type')}</label>
<select id="f-type" name="type">${PROVIDER_TYPES.map((type) => html`<option value="${type}"${type === selected ? ' selected' : ''}>${console.c(TYPE_NAMES[type])}</option>`)}</select></div>`
}

async function providersPage(deps: Deps, console: Console, done?: string, doneValues: Record<string, string> = {}, state: FormState = {}, status = 200): Promise<string> {
  const { c, page } = console
  const providers = (await listProviders(deps, page.tenant.id, console.actor)).map((p) => toProviderView(deps.config, p))
  const rows = providers.map(
    (p) => html`<tr><td><a href="${console.home}/providers/${p.providerId}">${p.name}</a></td><td>${c(TYPE_NAMES[p.type])}</td><td>${p.issuer ?? 'https://github.com'}</td><td><code>${p.clientId}</code></td><td>${formatMoment(page.t.language, p.createdAt, false)}</td></tr>`,
  )
  const main = html`${notice({ notice: doneOf(console, done, doneValues) })}
${rows.length === 0 ? html`<p>${c('console.providers.none')}</p>` : html`<table><thead><tr><th scope="col">${c('console.providers.name')}</th><th scope="col">${c('console.providers.type')}</th><th scope="col">${c('console.providers.issuer')}</th><th scope="col">${c('console.providers.clientId')}</th><th scope="col">${c('console.providers.created')}</th></tr></thead><tbody>${rows}</tbody></table>`}
<h2 id="create">${c('console.providers.create')}</h2>
<p>${c('console.providers.create.intro')}</p>
${problems(page.t, state)}
${form(
  { action: `${console.home}/providers`, token: page.token, submit: c('console.providers.createButton') },
  typeSelect(console, state.values?.type),
  field({ name: 'name', label: c('console.providers.name'), hint: c('console.providers.name.hint'), autocomplete: 'off', keepValue: true, optional: true }, state),
  field({ name: 'issuer', label: c('console.providers.issuer'), hint: c('console.providers.issuer.hint'), autocomplete: 'off', keepValue: true, optional: true }, state),
  field({ name: 'entraTenant', label: c('console.providers.entraTenant'), hint: c('console.providers.entraTenant.hint'), autocomplete: 'off', keepValue: true, optional: true }, state),
  field({ name: 'clientId', label: c('console.providers.clientId'), autocomplete: 'off', keepValue: true }, state),
  field({ name: 'clientSecret', label: c('console.providers.clientSecret'), hint: c('console.providers.clientSecret.hint'), type: 'password', autocomplete: 'off' }, state),
)}
<p class="hint">${c('console.providers.cliOnly')}</p>`
  return console.render('providers', c('console.section.providers'), main, { status })
}

interface ProviderState {
  edit?: FormState
  delete?: FormState
}

async function providerPage(deps: Deps, console: Console, providerId: string, done?: string, state: ProviderState = {}, status = 200): Promise<string> {
  const { c, page } = console
  const { provider: stored, identities } = await providerWithIdentities(deps, providerId, console.actor)
  const p: ProviderView = toProviderView(deps.config, stored)
  const base = `${console.home}/providers/${p.providerId}`
  const issuerKind = PRESETS[p.type].issuer.kind
  const edit = state.edit ?? {}
  const value = (name: string, current: string) => ({ ...edit, values: { [name]: current, ...edit.values } })
  const map = Object.entries(p.groupMap)
  const main = html`${notice({ notice: doneOf(console, done) })}
<h2>${c('console.provider.redirectUri')}</h2>
<p>${c('console.provider.redirectUri.intro')}</p>
<p class="secret" id="redirect-uri">${p.redirectUri}</p>
<h2>${c('console.provider.settings')}</h2>
<dl><dt>${c('console.providers.type')}</dt><dd>${c(TYPE_NAMES[p.type])}</dd>
<dt>${c('console.providers.issuer')}</dt><dd>${p.issuer ?? 'https://github.com'}</dd>
<dt>${c('console.providers.clientId')}</dt><dd><code>${p.clientId}</code></dd>
<dt>${c('console.providers.clientSecret')}</dt><dd>${c('console.provider.secretSealed')}</dd>
<dt>${c('console.provider.scopes')}</dt><dd><code>${p.scopes}</code></dd>
<dt>${c('console.provider.linkByEmail')}</dt><dd>${p.linkByEmail}</dd>
<dt>${c('console.provider.createUsers')}</dt><dd>${p.createUsers ?? c('console.provider.createUsers.policy')}</dd>
<dt>${c('console.provider.trustMfa')}</dt><dd>${c(p.trustUpstreamMfa ? 'console.yes' : 'console.no')}</dd>
<dt>${c('console.provider.groupsClaim')}</dt><dd>${p.groupsClaim ?? c('console.none')}</dd>
<dt>${c('console.provider.groupMap')}</dt><dd>${map.length === 0 ? c('console.none') : map.map(([from, to]) => `${from} → ${to}`).join(', ')}</dd>
<dt>${c('console.provider.identities')}</dt><dd>${identities}</dd>
<dt>${c('console.providers.created')}</dt><dd>${formatMoment(page.t.language, p.createdAt)}</dd></dl>
<p class="hint">${c('console.providers.cliOnly')}</p>
<h2>${c('console.provider.edit')}</h2>
${problems(page.t, edit)}
${form(
  { action: `${base}/edit`, token: page.token, submit: c('console.provider.save') },
  field({ name: 'name', label: c('console.providers.name'), autocomplete: 'off', keepValue: true }, value('name', p.name)),
  issuerKind === 'required' || issuerKind === 'optional' ? field({ name: 'issuer', label: c('console.providers.issuer'), hint: c('console.providers.issuer.hint'), autocomplete: 'off', keepValue: true, optional: true }, value('issuer', p.issuer ?? '')) : html``,
  issuerKind === 'entra' ? field({ name: 'entraTenant', label: c('console.providers.entraTenant'), hint: c('console.providers.entraTenant.hint'), autocomplete: 'off', keepValue: true }, value('entraTenant', entraTenantOf(p.issuer))) : html``,
  field({ name: 'clientId', label: c('console.providers.clientId'), autocomplete: 'off', keepValue: true }, value('clientId', p.clientId)),
  field({ name: 'clientSecret', label: c('console.provider.newSecret'), hint: c('console.provider.newSecret.hint'), type: 'password', autocomplete: 'off', optional: true }, edit),
)}
<h2>${c('console.provider.delete')}</h2>
<p>${c('console.provider.delete.intro', { count: identities })}</p>
${problems(page.t, state.delete ?? {})}
${form({ action: `${base}/delete`, token: page.token, submit: c('console.provider.delete'), secondary: true }, field({ name: 'confirm_name', label: c('console.provider.delete.confirm'), autocomplete: 'off' }, state.delete ?? {}))}`
  return console.render('providers', p.name, main, { status })
}

/** What the create form sent, as the admin API's body: a field left empty is not given (the preset's default). */
function createInput(body: unknown): ProviderInput {
  const given = (name: string) => (formValue(body, name).trim() === '' ? undefined : formValue(body, name).trim())
  return { type: formValue(body, 'type'), name: given('name'), issuer: given('issuer'), entraTenant: given('entraTenant'), clientId: formValue(body, 'clientId').trim(), clientSecret: formValue(body, 'clientSecret') }
}

/** What the edit form changed, as the admin API's body: only the fields that differ (an empty secret keeps the old one). */
function changesOf(p: ProviderView, body: unknown): ProviderInput {
  const sent = (name: string) => formValue(body, name).trim()
  const kind = PRESETS[p.type].issuer.kind
  const changes: ProviderInput = {}
  if (sent('name') !== p.name) changes.name = sent('name')
  if (sent('clientId') !== p.clientId) changes.clientId = sent('clientId')
  if ((kind === 'required' || kind === 'optional') && sent('issuer') !== (p.issuer ?? '')) changes.issuer = sent('issuer') === '' ? null : sent('issuer')
  if (kind === 'entra' && sent('entraTenant').toLowerCase() !== entraTenantOf(p.issuer)) changes.entraTenant = sent('entraTenant')
  if (formValue(body, 'clientSecret') !== '') changes.clientSecret = formValue(body, 'clientSecret')
  return changes
}

function providerAction(deps: Deps, place: keyof ProviderState, act: (console: Console, providerId: string, body: unknown) => Promise<string>, keep: (body: unknown) => Record<string, string> = () => ({})) {
  return async (ctx: PageRequest & { params: Record<string, string> }) => {
    const open = await openConsole(deps, ctx, true)
    if ('answer' in open) return open.answer
    const providerId = ctx.params.providerId!
    return consoleChange(deps, open, `${open.home}/providers/${encodeURIComponent(providerId)}`, async () => {
      try {
        return open.page.redirect(await act(open, providerId, ctx.body))
      } catch (error) {
        const { state, status } = consoleProblem(open.page, error)
        return providerPage(deps, open, providerId, undefined, { [place]: { ...state, values: keep(ctx.body) } }, status)
      }
    })
  }
}

export const consoleProviders = (deps: Deps) =>
  new Elysia({ prefix: `${PAGE_PREFIX}/admin` })
    .use(clientActor(deps.config.trustedProxies))
    .get('/providers', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return providersPage(deps, open, ctx.query?.done, { count: /^\d{1,9}$/.test(ctx.query?.count ?? '') ? ctx.query!.count! : '0' })
    })
    .post('/providers', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx, true)
      if ('answer' in open) return open.answer
      return consoleChange(deps, open, `${open.home}/providers`, async () => {
        let providerId: string
        try {
          providerId = (await createProvider(deps, open.page.tenant.id, createInput(ctx.body), open.actor)).provider.providerId
        } catch (error) {
          const { state, status } = consoleProblem(open.page, error)
          // (what was typed stays, the secret excepted)
          const values = Object.fromEntries(['type', 'name', 'issuer', 'entraTenant', 'clientId'].map((name) => [name, formValue(ctx.body, name)]))
          return providersPage(deps, open, undefined, {}, { ...state, values }, status)
        }
        return open.page.redirect(`${open.home}/providers/${providerId}?done=created`)
      })
    })
    .get('/providers/:providerId', async (ctx: PageRequest & { params: { providerId: string } }) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return providerPage(deps, open, ctx.params.providerId, ctx.query?.done)
    })
    .post(
      '/providers/:providerId/edit',
      providerAction(
        deps,
        'edit',
        async (o, id, body) => {
          const provider = toProviderView(deps.config, await getProvider(deps, id, o.actor))
          await updateProvider(deps, id, changesOf(provider, body), o.actor)
          return `${o.home}/providers/${id}?done=updated`
        },
        (body) => Object.fromEntries(['name', 'issuer', 'entraTenant', 'clientId'].map((name) => [name, formValue(body, name)])),
      ),
    )
    .post(
      '/providers/:providerId/delete',
      providerAction(deps, 'delete', async (o, id, body) => {
        const provider = await getProvider(deps, id, o.actor)
        // (typed to confirm: a slip of the mouse unlinks nobody)
        if (formValue(body, 'confirm_name').trim() !== provider.name) throw new AppError(400, 'invalid_request', o.c('console.provider.delete.mismatch'))
        const { identitiesDeleted } = await deleteProvider(deps, id, o.actor)
        return `${o.home}/providers?done=deleted&count=${identitiesDeleted}`
      }),
    )
