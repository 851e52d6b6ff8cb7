// The console's applications (product spec §27): the tenant's OpenID clients and service
// clients. List them; create an OpenID client (redirect URIs, public or confidential, first
// party, allowed groups) or a service client (scopes, audiences); a client's page with its
// settings, its redirect URIs and allowed groups to edit, its secret to rotate and itself to
// delete (the name typed). Each action is its admin API twin's function (/api/v1/admin/clients…)
// with the console's actor. A secret is drawn once, on the answer page of the POST that made
// it (create or rotate): never in a redirect, a GET page or a log.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { AppError } from '../../core/errors'
import { listGroups } from '../../core/groups/groups'
import { createClient, deleteClient, getClient, listClients, rotateClientSecret, toClientView, updateClient, type ClientView } from '../../core/oidc/clients'
import { clientActor } from '../plugins/client-ip'
import { checkbox, field, fieldId, form, formValue, notice, problems, type FormState } from '../pages/forms'
import { html, type SafeHtml } from '../pages/html'
import { PAGE_PREFIX, type PageRequest } from '../pages/page'
import { formatMoment } from '../pages/strings'
import { consoleChange, consoleProblem, openConsole, type Console } from './frame'
import type { ConsoleKey } from './strings/en'

const DONE: Record<string, ConsoleKey> = {
  updated: 'console.app.updated.notice',
  deleted: 'console.app.deleted.notice',
}
const doneOf = (console: Console, raw: string | undefined) => (raw !== undefined && Object.hasOwn(DONE, raw) ? console.c(DONE[raw]!) : undefined)

/**
 * The values of a list of checkboxes `name.0`, `name.1`, …: a page's form keeps each name's
 * first value only (plugins/body-limit.ts), so each box has its own name and its item as value.
 */
export const formValues = (body: unknown, name: string): string[] => {
  if (body === null || typeof body !== 'object') return []
  const prefix = `${name}.`
  return Object.entries(body as Record<string, unknown>)
    .filter(([key, value]) => key.startsWith(prefix) && /^\d{1,3}$/.test(key.slice(prefix.length)) && typeof value === 'string')
    .map(([, value]) => value as string)
}

/** A textarea's lines, trimmed, the empty ones dropped: one URI a line. */
export const linesOf = (text: string) => text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '')

/** A field of several lines (the pages' forms have none): labelled, its hint and error tied to it. */
export function textarea(spec: { name: string; label: string; hint?: string; value?: string }, state: FormState): SafeHtml {
  const id = fieldId(spec.name)
  const error = state.errors?.[spec.name]
  const describedBy = [spec.hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ')
  return html`<div class="field">
<label for="${id}">${spec.label}</label>
${spec.hint && html`<p class="hint" id="${id}-hint">${spec.hint}</p>`}
${error && html`<p class="error" id="${id}-error">${error}</p>`}
<textarea id="${id}" name="${spec.name}" rows="4" autocomplete="off" spellcheck="false"${describedBy && html` aria-describedby="${describedBy}"`}${error && html` aria-invalid="true"`}>${spec.value ?? ''}</textarea>
</div>`
}

/** The tenant's groups as checkboxes (none ticked: anyone may sign in). */
function groupChoices(console: Console, groups: string[], chosen: string[]): SafeHtml {
  if (groups.length === 0) return html`<p class="hint">${console.c('console.apps.groups.noGroups')}</p>`
  return html`<fieldset><legend>${console.c('console.apps.groups')}</legend>
<p class="hint">${console.c('console.apps.groups.hint')}</p>
${groups.map((name, i) => groupBox(i, name, chosen.includes(name)))}
</fieldset>`
}

/** One group's checkbox: allowedGroups.{i}, its group's name as value. */
const groupBox = (i: number, name: string, checked: boolean) =>
  html`<div class="field check"><input id="f-group-${i}" name="allowedGroups.${i}" type="checkbox" value="${name}"${checked && html` checked`}><label for="f-group-${i}">${name}</label></div>`

/** What kind of client it is, as the list and its page say it. */
function kindOf(console: Console, client: ClientView): string {
  if (client.service) return console.c('console.apps.kind.service')
  if (client.device) return console.c('console.apps.kind.device')
  return console.c(client.type === 'public' ? 'console.apps.kind.public' : 'console.apps.kind.confidential')
}

const AUTH_METHODS: Record<ClientView['authMethod'], ConsoleKey> = { client_secret: 'console.apps.auth.secret', private_key_jwt: 'console.apps.auth.keys', none: 'console.apps.auth.none' }

function typeSelect(console: Console, selected = 'confidential'): SafeHtml {
  const option = (value: string, key: ConsoleKey) => html`<option value="${value}"${value === selected ? ' selected' : ''}>${console.c(key)}</option>`
  return html`<div class="field"><label for="f-type">${console.c('console.apps.type')}</label>
<p class="hint" id="f-type-hint">${console.c('console.apps.type.hint')}</p>
<select id="f-type" name="type" aria-describedby="f-type-hint">${option('confidential', 'console.apps.kind.confidential')}${option('public', 'console.apps.kind.public')}</select></div>`
}

const groupNames = async (deps: Deps, console: Console) => (await listGroups(deps, console.page.tenant.id, console.actor)).map((g) => g.name).sort()

interface CreateState {
  oidc?: FormState & { groups?: string[] }
  service?: FormState
}

async function applicationsPage(deps: Deps, console: Console, done?: string, state: CreateState = {}, status = 200): Promise<string> {
  const { c, page } = console
  const [clients, groups] = await Promise.all([listClients(deps, page.tenant.id), groupNames(deps, console)])
  const rows = clients.map(toClientView).map(
    (client) =>
      html`<tr><td><a href="${console.home}/applications/${client.clientId}">${client.name}</a></td><td>${kindOf(console, client)}</td><td>${c(AUTH_METHODS[client.authMethod])}</td><td>${client.redirectUris.length === 0 ? c('console.none') : html`<ul class="uris">${client.redirectUris.map((uri) => html`<li><code>${uri}</code></li>`)}</ul>`}</td><td>${formatMoment(page.t.language, client.createdAt, false)}</td></tr>`,
  )
  const oidc = state.oidc ?? {}
  const service = state.service ?? {}
  const main = html`${notice({ notice: doneOf(console, done) })}
${rows.length === 0 ? html`<p>${c('console.apps.none')}</p>` : html`<table><thead><tr><th scope="col">${c('console.apps.name')}</th><th scope="col">${c('console.apps.kind')}</th><th scope="col">${c('console.apps.auth')}</th><th scope="col">${c('console.apps.redirectUris')}</th><th scope="col">${c('console.apps.created')}</th></tr></thead><tbody>${rows}</tbody></table>`}
<h2 id="create">${c('console.apps.create')}</h2>
<p>${c('console.apps.create.intro')}</p>
${problems(page.t, oidc)}
${form(
  { action: `${console.home}/applications`, token: page.token, submit: c('console.apps.createButton') },
  field({ name: 'name', label: c('console.apps.name'), autocomplete: 'off', keepValue: true }, oidc),
  textarea({ name: 'redirectUris', label: c('console.apps.redirectUris'), hint: c('console.apps.redirectUris.hint'), value: oidc.values?.redirectUris }, oidc),
  typeSelect(console, oidc.values?.type),
  checkbox('firstParty', c('console.apps.firstParty'), oidc.values?.firstParty === 'on'),
  groupChoices(console, groups, oidc.groups ?? []),
)}
<h2 id="create-service">${c('console.apps.createService')}</h2>
<p>${c('console.apps.createService.intro')}</p>
${problems(page.t, service)}
${form(
  { action: `${console.home}/applications/service`, token: page.token, submit: c('console.apps.createServiceButton') },
  field({ name: 'serviceName', label: c('console.apps.name'), autocomplete: 'off', keepValue: true }, service),
  textarea({ name: 'scopes', label: c('console.apps.scopes'), hint: c('console.apps.scopes.hint'), value: service.values?.scopes }, service),
  textarea({ name: 'audiences', label: c('console.apps.audiences'), hint: c('console.apps.audiences.hint'), value: service.values?.audiences }, service),
)}
<p class="hint">${c('console.apps.cliOnly')}</p>`
  return console.render('applications', c('console.section.applications'), main, { status })
}

interface ClientState {
  edit?: FormState & { groups?: string[] }
  rotate?: FormState
  delete?: FormState
}

/**
 * A client's page. `secret`: the secret just made by this very POST (create or rotate), drawn
 * once here with the line to store it now; no other call passes one.
 */
async function clientPage(deps: Deps, console: Console, clientId: string, options: { done?: string; secret?: string; state?: ClientState; status?: number } = {}): Promise<string> {
  const { c, page } = console
  const client = toClientView(await getClient(deps, clientId, console.actor))
  const groups = client.service ? [] : await groupNames(deps, console)
  const state = options.state ?? {}
  const base = `${console.home}/applications/${client.clientId}`
  const lang = page.t.language
  const list = (items: string[]) => (items.length === 0 ? c('console.none') : html`<ul class="uris">${items.map((item) => html`<li><code>${item}</code></li>`)}</ul>`)
  const edit = state.edit ?? {}
  const editForm = client.service
    ? form(
        { action: `${base}/edit`, token: page.token, submit: c('console.app.save') },
        textarea({ name: 'scopes', label: c('console.apps.scopes'), hint: c('console.apps.scopes.hint'), value: edit.values?.scopes ?? client.scopes.join('\n') }, edit),
        textarea({ name: 'audiences', label: c('console.apps.audiences'), hint: c('console.apps.audiences.hint'), value: edit.values?.audiences ?? client.audiences.join('\n') }, edit),
      )
    : form(
        { action: `${base}/edit`, token: page.token, submit: c('console.app.save') },
        textarea({ name: 'redirectUris', label: c('console.apps.redirectUris'), hint: c('console.apps.redirectUris.hint'), value: edit.values?.redirectUris ?? client.redirectUris.join('\n') }, edit),
        groupChoices(console, groups, edit.groups ?? client.allowedGroups ?? []),
      )
  const main = html`${options.secret !== undefined && html`<div class="notice" role="status"><h2>${c('console.app.secret')}</h2>
<p>${c('console.app.secret.once')}</p>
<p class="secret" id="client-secret">${options.secret}</p></div>`}
${notice({ notice: doneOf(console, options.done) })}
<h2>${c('console.app.settings')}</h2>
<dl><dt>${c('console.app.clientId')}</dt><dd><code>${client.clientId}</code></dd>
<dt>${c('console.apps.kind')}</dt><dd>${kindOf(console, client)}</dd>
<dt>${c('console.apps.auth')}</dt><dd>${c(AUTH_METHODS[client.authMethod])}</dd>
${client.secretPrefix && html`<dt>${c('console.app.secretPrefix')}</dt><dd><code>${client.secretPrefix}…</code></dd>`}
${client.jwks && html`<dt>${c('console.app.keys')}</dt><dd>${c('console.app.keys.count', { count: client.jwks.keys.length })}</dd>`}
${!client.service && html`<dt>${c('console.apps.redirectUris')}</dt><dd>${list(client.redirectUris)}</dd>
<dt>${c('console.app.postLogout')}</dt><dd>${list(client.postLogoutRedirectUris)}</dd>
<dt>${c('console.apps.firstParty')}</dt><dd>${c(client.firstParty ? 'console.yes' : 'console.no')}</dd>
<dt>${c('console.apps.groups')}</dt><dd>${client.allowedGroups === null ? c('console.app.anyone') : client.allowedGroups.join(', ')}</dd>
<dt>${c('console.app.groupsClaim')}</dt><dd><code>${client.groupsClaim}</code></dd>
<dt>${c('console.app.idTokenAlg')}</dt><dd><code>${client.idTokenAlg}</code></dd>`}
${client.service && html`<dt>${c('console.apps.scopes')}</dt><dd>${list(client.scopes)}</dd>
<dt>${c('console.app.tokenLifetime')}</dt><dd>${c('console.app.seconds', { count: client.tokenLifetime })}</dd>`}
<dt>${c('console.apps.audiences')}</dt><dd>${list(client.audiences)}</dd>
<dt>${c('console.apps.created')}</dt><dd>${formatMoment(lang, client.createdAt)}</dd></dl>
<p class="hint">${c('console.apps.cliOnly')}</p>
<h2>${c('console.app.edit')}</h2>
${problems(page.t, edit)}
${editForm}
${client.authMethod === 'client_secret' && html`<h2>${c('console.app.rotate')}</h2>
<p>${c('console.app.rotate.intro')}</p>
${problems(page.t, state.rotate ?? {})}
${form({ action: `${base}/rotate`, token: page.token, submit: c('console.app.rotate'), secondary: true })}`}
${client.authMethod === 'private_key_jwt' && html`<p>${c('console.app.keys.cli', { clientId: client.clientId })}</p>`}
<h2>${c('console.app.delete')}</h2>
<p>${c('console.app.delete.intro')}</p>
${problems(page.t, state.delete ?? {})}
${form({ action: `${base}/delete`, token: page.token, submit: c('console.app.delete'), secondary: true }, field({ name: 'confirm_name', label: c('console.app.delete.confirm'), autocomplete: 'off' }, state.delete ?? {}))}`
  return console.render('applications', client.name, main, { status: options.status })
}

/** A client's change: the door, the step-up window, the domain function, then its answer (or the problem drawn on the client's page). */
function clientAction(deps: Deps, place: keyof ClientState, act: (console: Console, clientId: string, body: unknown) => Promise<string>, again: (body: unknown) => ClientState[keyof ClientState] = () => ({})) {
  return async (ctx: PageRequest & { params: Record<string, string> }) => {
    const open = await openConsole(deps, ctx, true)
    if ('answer' in open) return open.answer
    const clientId = ctx.params.clientId!
    return consoleChange(deps, open, `${open.home}/applications/${encodeURIComponent(clientId)}`, async () => {
      try {
        return await act(open, clientId, ctx.body)
      } catch (error) {
        const { state, status } = consoleProblem(open.page, error)
        return clientPage(deps, open, clientId, { state: { [place]: { ...again(ctx.body), ...state } }, status })
      }
    })
  }
}

/** The OpenID client form's values as the admin API's body takes them. */
function openIdInput(body: unknown) {
  const type = formValue(body, 'type') || 'confidential'
  const groups = formValues(body, 'allowedGroups')
  return {
    name: formValue(body, 'name'),
    redirectUris: linesOf(formValue(body, 'redirectUris')),
    // (a value that is neither is passed on as it is: the domain says what public must be)
    public: type === 'public' ? true : type === 'confidential' ? false : type,
    firstParty: formValue(body, 'firstParty') === 'on',
    // (none ticked: anyone, as the admin API's absent allowedGroups)
    ...(groups.length > 0 && { allowedGroups: groups }),
  }
}

const serviceInput = (body: unknown) => ({ name: formValue(body, 'serviceName'), service: true, scopes: formValue(body, 'scopes').split(/\s+/).filter(Boolean), audiences: linesOf(formValue(body, 'audiences')) })

export const consoleApplications = (deps: Deps) =>
  new Elysia({ prefix: `${PAGE_PREFIX}/admin` })
    .use(clientActor(deps.config.trustedProxies))
    .get('/applications', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return applicationsPage(deps, open, ctx.query?.done)
    })
    .post('/applications', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx, true)
      if ('answer' in open) return open.answer
      return consoleChange(deps, open, `${open.home}/applications`, async () => {
        const values = { name: formValue(ctx.body, 'name'), redirectUris: formValue(ctx.body, 'redirectUris'), type: formValue(ctx.body, 'type'), firstParty: formValue(ctx.body, 'firstParty') }
        try {
          const { client, clientSecret } = await createClient(deps, open.page.tenant.id, openIdInput(ctx.body), open.actor)
          return await clientPage(deps, open, client.id, { secret: clientSecret ?? undefined, status: 201 })
        } catch (error) {
          const { state, status } = consoleProblem(open.page, error)
          return applicationsPage(deps, open, undefined, { oidc: { ...state, values, groups: formValues(ctx.body, 'allowedGroups') } }, status)
        }
      })
    })
    .post('/applications/service', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx, true)
      if ('answer' in open) return open.answer
      return consoleChange(deps, open, `${open.home}/applications`, async () => {
        const values = { serviceName: formValue(ctx.body, 'serviceName'), scopes: formValue(ctx.body, 'scopes'), audiences: formValue(ctx.body, 'audiences') }
        try {
          const { client, clientSecret } = await createClient(deps, open.page.tenant.id, serviceInput(ctx.body), open.actor)
          return await clientPage(deps, open, client.id, { secret: clientSecret ?? undefined, status: 201 })
        } catch (error) {
          const { state, status } = consoleProblem(open.page, error)
          return applicationsPage(deps, open, undefined, { service: { ...state, values } }, status)
        }
      })
    })
    .get('/applications/:clientId', async (ctx: PageRequest & { params: { clientId: string } }) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return clientPage(deps, open, ctx.params.clientId, { done: ctx.query?.done })
    })
    .post(
      '/applications/:clientId/edit',
      clientAction(
        deps,
        'edit',
        async (o, id, body) => {
          const client = await getClient(deps, id, o.actor)
          const groups = formValues(body, 'allowedGroups')
          const input = client.service
            ? { scopes: formValue(body, 'scopes').split(/\s+/).filter(Boolean), audiences: linesOf(formValue(body, 'audiences')) }
            : { redirectUris: linesOf(formValue(body, 'redirectUris')), allowedGroups: groups.length > 0 ? groups : null }
          await updateClient(deps, id, input, o.actor)
          return o.page.redirect(`${o.home}/applications/${id}?done=updated`)
        },
        (body) => ({ values: { redirectUris: formValue(body, 'redirectUris'), scopes: formValue(body, 'scopes'), audiences: formValue(body, 'audiences') }, groups: formValues(body, 'allowedGroups') }),
      ),
    )
    .post(
      '/applications/:clientId/rotate',
      clientAction(deps, 'rotate', async (o, id) => {
        const { clientSecret } = await rotateClientSecret(deps, id, o.actor)
        return clientPage(deps, o, id, { secret: clientSecret })
      }),
    )
    .post(
      '/applications/:clientId/delete',
      clientAction(deps, 'delete', async (o, id, body) => {
        const client = await getClient(deps, id, o.actor)
        // (typed to confirm: a slip of the mouse deletes no application)
        if (formValue(body, 'confirm_name').trim() !== client.name) throw new AppError(400, 'invalid_request', o.c('console.app.delete.mismatch'))
        await deleteClient(deps, id, o.actor)
        return o.page.redirect(`${o.home}/applications?done=deleted`)
      }),
    )
