// /t/{tenant}/account: the signed-in user's profile, sessions (each with "End", and "Sign out
// everywhere") and password (changed after a recent proof of the user: the step-up form
// comes first when the session's proof is older than the window). Each form calls the domain
// function of its API twin: endSession (DELETE /sessions/{id}), endAllSessions
// (/logout-all), reauthenticate (/reauthenticate), changePasswordInSession (/me/password).
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { changePasswordInSession, endAllSessions, endSession, listSessions, type Caller, type SessionView } from '../../core/signed-in-user'
import { hasRecentAuth, reauthenticate } from '../../core/step-up'
import { clientActor } from '../plugins/client-ip'
import { clearCookie, readCookie } from './cookies'
import { field, form, formValue, problems, type FormState } from './forms'
import { html } from './html'
import { openPage, PAGE_PREFIX, type Page, type PageRequest } from './page'
import { missing, problemOf } from './problems'
import type { MessageKey } from './strings'

/** Notices a redirect to the account page may ask for (`?done=`). */
const DONE: Record<string, MessageKey> = { password: 'account.password.changed', session: 'account.session.ended', reauth: 'account.stepUp.done' }

interface AccountState {
  notice?: string
  sessions?: FormState
  password?: FormState
  stepUp?: FormState
}

const when = (lang: string, iso: string) => `${new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(iso))} UTC`

function sessionItem(page: Page, lang: string, session: SessionView) {
  const { t } = page
  const agent = session.current ? t('account.session.current') : (session.userAgent?.slice(0, 80) ?? t('account.session.unknownAgent'))
  const createdAt = when(lang, session.createdAt)
  const end = form({
    action: `${page.base}/account/sessions/end`,
    token: page.token,
    submit: t('account.session.end'),
    submitLabel: t('account.session.endLabel', { agent, createdAt }),
    hidden: { sessionId: session.sessionId },
    secondary: true,
  })
  // (the session of this browser ends with "Sign out")
  return html`<li><span>${agent}<span class="meta">${t('account.session.detail', { createdAt, ip: session.ip ?? '?' })}</span></span>${!session.current && end}</li>`
}

async function accountPage(deps: Deps, page: Page, caller: Caller, state: AccountState, status = 200, retryAfter?: number) {
  const { t } = page
  const lang = t('layout.language')
  const sessions = await listSessions(deps, caller.user.id, caller.sessionId)
  const password = hasRecentAuth(deps, caller)
    ? form(
        { action: `${page.base}/account/password`, token: page.token, submit: t('account.password.submit') },
        field({ name: 'newPassword', label: t('field.newPassword'), type: 'password', autocomplete: 'new-password', hint: t('field.newPassword.hint', { min: deps.config.passwordMinLength }) }, state.password ?? {}),
      )
    : html`<h3>${t('account.stepUp.heading')}</h3><p>${t('account.stepUp.intro')}</p>${form(
        { action: `${page.base}/account/reauthenticate`, token: page.token, submit: t('account.stepUp.submit') },
        field({ name: 'password', label: t('account.stepUp.password'), type: 'password', autocomplete: 'current-password' }, state.stepUp ?? {}),
      )}`
  const main = html`${state.notice && html`<p class="notice" role="status">${state.notice}</p>`}
${problems(t, { ...state.sessions, ...state.password, ...state.stepUp, values: {} })}
<h2>${t('account.profile')}</h2>
<dl><dt>${t('account.name')}</dt><dd>${caller.user.firstName} ${caller.user.lastName}</dd><dt>${t('account.email')}</dt><dd>${caller.user.email}</dd></dl>
<h2>${t('account.sessions')}</h2>
<ul class="sessions">${sessions.map((session) => sessionItem(page, lang, session))}</ul>
${form({ action: `${page.base}/account/logout-all`, token: page.token, submit: t('account.endAll'), secondary: true })}
<h2>${t('account.password')}</h2>
${password}
<p class="links"><a href="${page.base}/logout">${t('account.signOut')}</a></p>`
  return page.render(t('account.title'), main, { status, retryAfter })
}

/** The page for the signed-in user, or (signed out) the way to the login page. */
async function signedInPage(deps: Deps, ctx: PageRequest, form = false): Promise<{ page: Page; caller: Caller } | { redirect: string }> {
  const page = await openPage(deps, ctx, form)
  if (!page.caller) return { redirect: page.redirect(`${page.base}/login`) }
  return { page, caller: page.caller }
}

export const accountPages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/account', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx)
      if ('redirect' in open) return open.redirect
      const done = DONE[ctx.query?.done ?? '']
      return accountPage(deps, open.page, open.caller, { notice: done && open.page.t(done) })
    })
    .post('/account/sessions/end', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx, true)
      if ('redirect' in open) return open.redirect
      const { page, caller } = open
      try {
        await endSession(deps, caller.user.id, formValue(ctx.body, 'sessionId'), page.actor)
      } catch (error) {
        const { state, status } = problemOf(page.t, error, { not_found: { key: 'account.session.gone' } })
        return accountPage(deps, page, caller, { sessions: state }, status)
      }
      return page.redirect(`${page.base}/account?done=session`)
    })
    .post('/account/logout-all', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx, true)
      if ('redirect' in open) return open.redirect
      await endAllSessions(deps, open.caller, open.page.actor)
      clearCookie(open.page.jar, open.page.cookies, open.page.cookies.session)
      return open.page.redirect(`${open.page.base}/login?done=logout`)
    })
    .post('/account/reauthenticate', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx, true)
      if ('redirect' in open) return open.redirect
      const { page, caller } = open
      const password = formValue(ctx.body, 'password')
      const empty = missing(page.t, { password }, ['password'])
      if (empty) return accountPage(deps, page, caller, { stepUp: empty }, 400)
      try {
        await reauthenticate(deps, caller, { password, deviceCookie: readCookie(page.jar, page.cookies.device) }, page.actor)
      } catch (error) {
        const { state, status, retryAfter } = problemOf(page.t, error, { invalid_credentials: { field: 'password', key: 'account.stepUp.invalid' } })
        return accountPage(deps, page, caller, { stepUp: state }, status, retryAfter)
      }
      return page.redirect(`${page.base}/account?done=reauth`)
    })
    .post('/account/password', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx, true)
      if ('redirect' in open) return open.redirect
      const { page, caller } = open
      const newPassword = formValue(ctx.body, 'newPassword')
      const empty = missing(page.t, { newPassword }, ['newPassword'])
      if (empty) return accountPage(deps, page, caller, { password: empty }, 400)
      try {
        await changePasswordInSession(deps, caller, newPassword, page.actor)
      } catch (error) {
        // (step-up lapsed between the page and the form: the page now shows the proof's form)
        const { state, status } = problemOf(page.t, error, { step_up_required: { key: 'account.stepUp.intro' } }, 'newPassword')
        return accountPage(deps, page, caller, { password: state }, status)
      }
      return page.redirect(`${page.base}/account?done=password`)
    })
