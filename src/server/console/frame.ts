// What every console handler starts with (product spec §27): the page (tenant, language, form
// token, Origin check for a form), then the door (core/console/access.ts: signed in, an admin of
// this tenant, a second factor in this session, the console on), and for a change the step-up
// window. Behind the door a handler reads its form, calls the domain function of its admin API
// twin with the console's actor, and draws the answer in the console's frame.
import type { Actor } from '../../core/audit/types'
import type { Deps } from '../../core/deps'
import { AppError, notFound } from '../../core/errors'
import { enterConsole, requireConsoleChange } from '../../core/console/access'
import type { Caller } from '../../core/sessions/signed-in-user'
import { hasRecentAuth, STEP_UP_WINDOW_MS } from '../../core/sessions/recent-auth'
import { tenantTitle } from '../../core/tenants/tenants'
import { field, form, type FormState, problems } from '../pages/forms'
import { html, type SafeHtml } from '../pages/html'
import { openPage, type Page, type PageRequest } from '../pages/page'
import { findTenantForPages } from '../../core/tenants/tenant-pages'
import { problemOf, type ProblemPlaces } from '../pages/problems'
import { formatMoment } from '../pages/strings'
import { consoleDe } from './strings/de'
import { consoleEn, type ConsoleCatalogue, type ConsoleKey } from './strings/en'

const CATALOGUES: Record<string, ConsoleCatalogue> = { en: consoleEn, de: consoleDe }

export type ConsoleTranslate = (key: ConsoleKey, values?: Record<string, string | number>) => string

export const SECTIONS = ['home', 'users', 'groups', 'applications', 'rules', 'providers', 'webhooks', 'audit', 'settings'] as const
export type Section = (typeof SECTIONS)[number]
const SECTION_PATHS: Record<Section, string> = { home: '', users: '/users', groups: '/groups', applications: '/applications', rules: '/rules', providers: '/providers', webhooks: '/webhooks', audit: '/audit', settings: '/settings' }

export interface Console {
  page: Page
  caller: Caller
  /** The admin, confined to the tenant: what every domain call of the console acts as. */
  actor: Actor
  c: ConsoleTranslate
  /** `/t/{tenant}/admin` as the URL wrote the tenant. */
  home: string
  render(section: Section, title: string, main: SafeHtml, options?: { status?: number; retryAfter?: number }): string
}

export function translatorFor(language: string): ConsoleTranslate {
  const catalogue = CATALOGUES[language] ?? consoleEn
  return (key, values = {}) => (catalogue[key] ?? consoleEn[key]).replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole))
}

/** The console's sections as a navigation bar, the current one marked. */
function navigation(c: ConsoleTranslate, home: string, current: Section): SafeHtml {
  return html`<nav class="console-nav" aria-label="${c('console.nav')}"><ul>${SECTIONS.map(
    (section) => html`<li><a href="${home}${SECTION_PATHS[section]}"${section === current ? html` aria-current="page"` : ''}>${c(`console.section.${section}`)}</a></li>`,
  )}</ul></nav>`
}

const SAME_ORIGIN = 'http://console.invalid'

/**
 * Where the console sends a browser back to: one of its own pages, never anywhere else, as a
 * browser would read it (dot segments resolved, anything not plain ASCII percent-encoded: a line
 * break or a character no header may carry goes into a Location header as no raw byte).
 */
export function consolePath(home: string, raw: string | undefined): string {
  if (typeof raw !== 'string' || raw.length > 2000 || !raw.startsWith('/') || raw.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(raw)) return home
  let url: URL
  try {
    url = new URL(raw, SAME_ORIGIN)
  } catch {
    return home
  }
  const path = url.pathname + url.search
  return url.origin === SAME_ORIGIN && (path === home || path.startsWith(`${home}/`) || path.startsWith(`${home}?`)) ? path : home
}

/**
 * The page behind the console's door, or a 404 while the operator has the console off: as if
 * it did not exist, for a form too (a form's refusal for its token or Origin is answered 404
 * then; the tenant is read a second time only in that case).
 */
export async function openConsolePage(deps: Deps, ctx: PageRequest, form: boolean): Promise<Page> {
  let page: Page
  try {
    page = await openPage(deps, ctx, form)
  } catch (error) {
    const tenant = form && typeof ctx.params.tenant === 'string' ? await findTenantForPages(deps, ctx.params.tenant) : null
    if (tenant && !tenant.consoleEnabled) throw notFound()
    throw error
  }
  if (!page.tenant.consoleEnabled) throw notFound()
  return page
}

/**
 * The console for this request, or the answer that stands in its door: the login page (not
 * signed in), a 404 (the console is off: as if it did not exist), a refusal (not an admin of
 * this tenant), or the second factor to set up or prove first.
 * @param form a POST: refused (403) unless it came from authd's own page with this browser's token
 */
export async function openConsole(deps: Deps, ctx: PageRequest, form = false): Promise<Console | { answer: string }> {
  const page = await openConsolePage(deps, ctx, form)
  const home = `${page.base}/admin`
  const here = consolePath(home, form ? home : new URL(ctx.request.url).pathname + new URL(ctx.request.url).search)
  if (!page.caller) return { answer: page.redirect(`${page.base}/login?${new URLSearchParams({ return_to: here })}`) }
  const c = translatorFor(page.t.language)
  const entry = await enterConsole(deps, page.tenant, page.caller, page.actor)
  if (entry.kind === 'off') throw notFound()
  if (entry.kind === 'not_admin') return { answer: notAdminPage(page, c, page.caller, here) }
  if (entry.kind === 'set_up_factor') return { answer: setUpFactorPage(page, c) }
  if (entry.kind === 'prove_factor') return { answer: proveFactorPage(page, c, here, entry.hasTotp) }
  const caller = page.caller
  return {
    page,
    caller,
    actor: entry.actor,
    c,
    home,
    render(section, title, main, options = {}) {
      const window = confirmationLine(deps, page, c, caller)
      return page.render(title, html`${window}${main}`, { ...options, wide: true, nav: navigation(c, home, section) })
    },
  }
}

/** Whether changes can be made now without confirming, said on every console page. */
function confirmationLine(deps: Pick<Deps, 'clock'>, page: Page, c: ConsoleTranslate, caller: Caller): SafeHtml {
  if (!hasRecentAuth(deps, caller)) return html`<p class="hint">${c('console.confirm.stale')}</p>`
  return html`<p class="hint">${c('console.confirm.fresh', { time: formatMoment(page.t.language, new Date(caller.authAt + STEP_UP_WINDOW_MS).toISOString()) })}</p>`
}

function notAdminPage(page: Page, c: ConsoleTranslate, caller: Caller, here: string): string {
  const main = html`<p role="alert">${c('console.notAdmin.intro', { email: caller.user.email, tenant: tenantTitle(page.tenant) })}</p>
${form({ action: `${page.base}/logout`, token: page.token, submit: c('console.notAdmin.switch'), hidden: { return_to: here } })}`
  return page.render(c('console.notAdmin.title'), main, { status: 403 })
}

function setUpFactorPage(page: Page, c: ConsoleTranslate): string {
  const main = html`<p>${c('console.factor.setUp')}</p>
<p class="links"><a href="${page.base}/account">${c('console.factor.setUpLink')}</a></p>`
  return page.render(c('console.factor.title'), main, { status: 403 })
}

export function proveFactorPage(page: Page, c: ConsoleTranslate, here: string, hasTotp: boolean, state: FormState = {}, status = 403, retryAfter?: number): string {
  const again = html`<p class="links"><a href="${page.base}/login?${new URLSearchParams({ prompt: 'login', return_to: here }).toString()}">${c('console.factor.again')}</a></p>`
  const main = hasTotp
    ? html`${problems(page.t, state)}<p>${c('console.factor.prove')}</p>
${form({ action: `${page.base}/admin/factor`, token: page.token, submit: page.t('mfa.submit'), hidden: { return_to: here } }, field({ name: 'code', label: page.t('field.code'), autocomplete: 'one-time-code', inputmode: 'numeric' }, state))}
${again}`
    : html`<p>${c('console.factor.setUp')}</p>${again}`
  return page.render(c('console.factor.title'), main, { status, retryAfter })
}

/** The page that asks for a fresh proof before a change (the change itself is not replayed: the admin makes it again). */
export function confirmPage(console: Console, back: string, state: { password?: FormState; code?: FormState } = {}, status = 403, retryAfter?: number): string {
  const { page, c } = console
  const hidden = { return_to: back }
  const main = html`<p>${c('console.confirm.intro')}</p>
<h2>${c('console.confirm.password')}</h2>
${problems(page.t, state.password ?? {})}
${form({ action: `${console.home}/confirm`, token: page.token, submit: c('console.confirm.password'), hidden }, field({ name: 'password', label: page.t('field.password'), type: 'password', autocomplete: 'current-password' }, state.password ?? {}))}
<h2>${c('console.confirm.code')}</h2>
${problems(page.t, state.code ?? {})}
${form({ action: `${console.home}/confirm/code`, token: page.token, submit: c('console.confirm.code'), hidden }, field({ name: 'code', label: page.t('field.code'), autocomplete: 'one-time-code', inputmode: 'numeric' }, state.code ?? {}))}
<p class="links"><a href="${page.base}/login?${new URLSearchParams({ prompt: 'login', return_to: back }).toString()}">${c('console.confirm.again')}</a> · <a href="${back}">${c('console.confirm.back')}</a></p>`
  return console.render('home', c('console.confirm.title'), main, { status, retryAfter })
}

/**
 * A change in the console: the step-up window checked first (else the confirmation page, which
 * brings the admin back to `back`), then `change`, whose domain errors it leaves to the caller.
 */
export async function consoleChange(deps: Pick<Deps, 'clock'>, console: Console, back: string, change: () => Promise<string>): Promise<string> {
  try {
    requireConsoleChange(deps, console.caller)
  } catch (error) {
    if (error instanceof AppError && error.code === 'step_up_required') return confirmPage(console, consolePath(console.home, back))
    throw error
  }
  return change()
}

/**
 * A domain refusal as a console form shows it: the pages' wording where they have one (a
 * field's format, a limit), else the domain's own message (the admin API's, which names the
 * field and what it must be). A 404 or a bug is thrown on, to the error page.
 */
export function consoleProblem(page: Page, error: unknown, places: ProblemPlaces = {}): { state: FormState; status: number; retryAfter?: number } {
  try {
    return problemOf(page.t, error, places)
  } catch (thrown) {
    if (thrown instanceof AppError && thrown.status >= 400 && thrown.status < 500 && thrown.status !== 404) return { state: { formError: thrown.message }, status: thrown.status, retryAfter: thrown.retryAfter }
    throw thrown
  }
}
