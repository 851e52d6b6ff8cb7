// The console's audit log (product spec §27): the tenant's events newest first, filtered by type
// (one or a family), by user (an address, found through the users' domain function, or an id)
// and by time, so many at a time. Read with readAudit as GET /api/v1/admin/audit reads it, with
// the console's actor: the reading is itself an audit.read event under the admin's name.
import { Elysia } from 'elysia'
import { AUDIT_TYPES, MAX_AUDIT_LIMIT, readAudit, type AuditView } from '../../core/audit/audit'
import { listUsers } from '../../core/accounts/users'
import { consoleActorEmails } from '../../core/console/actors'
import type { Deps } from '../../core/deps'
import { AppError } from '../../core/errors'
import { clientActor } from '../plugins/client-ip'
import { fieldId, problems, type FormState } from '../pages/forms'
import { html, type SafeHtml } from '../pages/html'
import { PAGE_PREFIX, type PageRequest } from '../pages/page'
import { formatMoment } from '../pages/strings'
import { openConsole, type Console } from './frame'

const PAGE_SIZES = [25, 50, 100, 250, 1000] as const
const DEFAULT_PAGE_SIZE = 50
const FAMILIES = [...new Set(AUDIT_TYPES.map((type) => type.split('.')[0]!))]
/** A datetime-local field's value (seconds optional), read as UTC as every time in the console is shown. */
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?)?$/

interface Filter {
  type: string
  user: string
  since: string
  limit: string
}

function selectField(id: string, name: string, label: string, options: SafeHtml): SafeHtml {
  return html`<div class="field"><label for="${fieldId(id)}">${label}</label>
<select id="${fieldId(id)}" name="${name}">${options}</select></div>`
}

/** A filter's input field: its label, its error tied to it. */
function inputField(name: string, label: string, type: string, value: string, error: string | undefined): SafeHtml {
  const id = fieldId(name)
  return html`<div class="field"><label for="${id}">${label}</label>
${error && html`<p class="error" id="${id}-error">${error}</p>`}
<input id="${id}" name="${name}" type="${type}" value="${value}"${error && html` aria-invalid="true" aria-describedby="${id}-error"`}></div>`
}

function filterForm(console: Console, filter: Filter, state: FormState): SafeHtml {
  const { c } = console
  const option = (value: string, label: string, selected: string) => html`<option value="${value}"${value === selected ? ' selected' : ''}>${label}</option>`
  // A type typed into the URL that is no type here (the API takes any text) stays chosen.
  const known = filter.type === '' || AUDIT_TYPES.some((t) => t === filter.type) || FAMILIES.some((f) => `${f}.*` === filter.type)
  const types = html`${option('', c('console.audit.type.any'), filter.type)}${!known && option(filter.type, filter.type, filter.type)}
<optgroup label="${c('console.audit.type.families')}">${FAMILIES.map((family) => option(`${family}.*`, c('console.audit.type.family', { family }), filter.type))}</optgroup>
<optgroup label="${c('console.audit.type.types')}">${AUDIT_TYPES.map((type) => option(type, type, filter.type))}</optgroup>`
  return html`<form method="get" action="${console.home}/audit" role="search" aria-label="${c('console.audit.filter')}">
${selectField('type', 'type', c('console.audit.type'), types)}
${inputField('user', c('console.audit.user'), 'text', filter.user, state.errors?.user)}
${inputField('since', c('console.audit.since'), 'datetime-local', filter.since, state.errors?.since)}
${selectField('limit', 'limit', c('console.audit.limit'), html`${PAGE_SIZES.map((size) => option(String(size), String(size), filter.limit))}`)}
<button type="submit" class="secondary">${c('console.audit.apply')}</button>
</form>
<p class="links"><a href="${console.home}/audit">${c('console.audit.reset')}</a></p>`
}

/** Who acted: the console's admin by address, an admin API key by id, else where the call came from (the CLI, a user's own request). */
function actorOf(console: Console, event: AuditView, emails: Map<string, string>): string {
  if (event.actorUserId) return console.c('console.audit.actor.console', { who: emails.get(event.actorUserId) ?? event.actorUserId })
  if (event.apiKeyId) return console.c('console.audit.actor.apiKey', { id: event.apiKeyId })
  return event.userAgent === 'authd-cli' ? 'authd-cli' : (event.ip ?? event.userAgent ?? '—')
}

async function auditPage(deps: Deps, console: Console, query: Record<string, string | undefined>): Promise<string> {
  const { c, page } = console
  const filter: Filter = {
    type: (query.type ?? '').trim().slice(0, 100),
    user: (query.user ?? '').trim().slice(0, 320),
    since: (query.since ?? '').trim().slice(0, 40),
    limit: PAGE_SIZES.some((size) => String(size) === query.limit) ? query.limit! : String(DEFAULT_PAGE_SIZE),
  }
  const errors: Record<string, string> = {}
  let since: number | undefined
  if (filter.since !== '') {
    since = LOCAL_TIME.test(filter.since) ? Date.parse(filter.since.length <= 10 ? `${filter.since}T00:00Z` : `${filter.since}Z`) : NaN
    if (Number.isNaN(since)) errors.since = c('console.audit.badSince')
  }
  let userId: string | undefined
  if (filter.user.includes('@')) {
    // (an address: the user of this tenant who has it, found as GET /admin/users?email= finds them)
    try {
      userId = (await listUsers(deps, page.tenant.id, { email: filter.user, limit: 1 }, console.actor)).items[0]?.userId
      if (userId === undefined) errors.user = c('console.audit.unknownUser')
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 400) throw error
      errors.user = error.message
    }
  } else if (filter.user !== '') userId = filter.user
  const state: FormState = Object.keys(errors).length > 0 ? { errors } : {}
  let events: AuditView[] = []
  if (!state.errors) events = await readAudit(deps, { type: filter.type || undefined, userId, since, limit: Math.min(Number(filter.limit), MAX_AUDIT_LIMIT) }, console.actor)
  const emails = await consoleActorEmails(
    deps,
    page.tenant.id,
    events.flatMap((e) => (e.actorUserId ? [e.actorUserId] : [])),
  )
  const lang = page.t.language
  const rows = events.map(
    (e) =>
      html`<tr><td>${formatMoment(lang, e.at)}</td><td>${e.type}</td><td>${e.userId ? html`<a href="${console.home}/users/${e.userId}">${e.userId}</a>` : '—'}</td><td>${actorOf(console, e, emails)}</td><td>${e.ip ?? '—'}</td><td>${e.detail === null ? '' : JSON.stringify(e.detail)}</td></tr>`,
  )
  const main = html`<p>${c('console.audit.intro')}</p>
${problems(page.t, state)}
${filterForm(console, filter, state)}
${state.errors ? '' : rows.length === 0 ? html`<p>${c('console.audit.none')}</p>` : html`<p>${c('console.audit.shown', { count: rows.length, limit: filter.limit })}</p>
<table><thead><tr><th scope="col">${c('console.audit.time')}</th><th scope="col">${c('console.audit.type')}</th><th scope="col">${c('console.audit.subject')}</th><th scope="col">${c('console.audit.actor')}</th><th scope="col">${c('console.audit.ip')}</th><th scope="col">${c('console.audit.detail')}</th></tr></thead><tbody>${rows}</tbody></table>`}`
  return console.render('audit', c('console.section.audit'), main, { status: state.errors ? 400 : 200 })
}

export const consoleAudit = (deps: Deps) =>
  new Elysia({ prefix: `${PAGE_PREFIX}/admin` })
    .use(clientActor(deps.config.trustedProxies))
    .get('/audit', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      const query = (ctx.query ?? {}) as Record<string, unknown>
      const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined)
      return auditPage(deps, open, { type: text('type'), user: text('user'), since: text('since'), limit: text('limit') })
    })
