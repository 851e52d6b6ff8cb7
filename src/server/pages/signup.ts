// /t/{tenant}/signup and /t/{tenant}/verify, where the tenant's sign-up policy allows it
// (product spec §15): the domain functions of POST /signup and POST /verify-email. The sign-up
// form's answer is the verify form with the same notice for every address (new, registered
// or refused: the domain does the same work for each); a verified code starts the page session.
import { tenantTitle } from '../../core/tenants/tenants'
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { requestSignup, verifyEmail } from '../../core/signup/signup'
import { parseSignupPolicy } from '../../core/tenants/signup-policy'
import type { Tenant } from '../../core/types'
import { clientActor } from '../plugins/client-ip'
import { readCookie } from './cookies'
import { startPageSession } from './page-session'
import { field, form, formValue, notice, problems, type FormState } from './forms'
import { html } from './html'
import { openPage, PAGE_PREFIX, type Page, type PageRequest } from './page'
import { missing, problemOf } from './problems'

/** Whether the tenant's policy lets anyone sign up (the domain still judges each address). */
export const signupOpen = (tenant: Tenant) => parseSignupPolicy(tenant.signup).kind !== 'closed'

function signupPage(deps: Deps, page: Page, state: FormState, status = 200, retryAfter?: number) {
  const { t } = page
  if (!signupOpen(page.tenant)) return page.render(t('signup.title'), problems(t, { formError: t('signup.closed') }), { status: 403 })
  const main = html`${problems(t, state)}<p>${t('signup.intro', { tenant: tenantTitle(page.tenant) })}</p>
${form(
  { action: `${page.base}/signup`, token: page.token, submit: t('signup.submit') },
  field({ name: 'firstName', label: t('field.firstName'), autocomplete: 'given-name', keepValue: true }, state),
  field({ name: 'lastName', label: t('field.lastName'), autocomplete: 'family-name', keepValue: true }, state),
  field({ name: 'email', label: t('field.email'), type: 'email', autocomplete: 'email', keepValue: true }, state),
  field({ name: 'newPassword', label: t('field.newPassword'), type: 'password', autocomplete: 'new-password', hint: t('field.newPassword.hint', { min: deps.config.passwordMinLength }) }, state),
)}`
  return page.render(t('signup.title'), main, { status, retryAfter })
}

function verifyPage(page: Page, state: FormState, status = 200, retryAfter?: number) {
  const { t } = page
  const main = html`${notice(state)}${problems(t, state)}
${form(
  { action: `${page.base}/verify`, token: page.token, submit: t('verify.submit') },
  field({ name: 'email', label: t('field.email'), type: 'email', autocomplete: 'email', keepValue: true }, state),
  field({ name: 'code', label: t('reset.code'), autocomplete: 'one-time-code', inputmode: 'numeric' }, state),
)}`
  return page.render(t('verify.title'), main, { status, retryAfter })
}

export const signupPages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/signup', async (ctx: PageRequest) => signupPage(deps, await openPage(deps, ctx), {}))
    .post('/signup', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      const values = { firstName: formValue(ctx.body, 'firstName'), lastName: formValue(ctx.body, 'lastName'), email: formValue(ctx.body, 'email'), newPassword: formValue(ctx.body, 'newPassword') }
      const keep = { firstName: values.firstName, lastName: values.lastName, email: values.email }
      const empty = missing(page.t, values, ['firstName', 'lastName', 'email', 'newPassword'])
      if (empty) return signupPage(deps, page, { ...empty, values: keep }, 400)
      let email: string
      try {
        email = await requestSignup(deps, { tenant: page.tenant, email: values.email, password: values.newPassword, firstName: values.firstName, lastName: values.lastName }, page.actor)
      } catch (error) {
        const { state, status, retryAfter } = problemOf(page.t, error, { signup_closed: { key: 'signup.closed' } }, 'newPassword')
        return signupPage(deps, page, { ...state, values: keep }, status, retryAfter)
      }
      return verifyPage(page, { values: { email }, notice: page.t('verify.sent') })
    })
    .get('/verify', async (ctx: PageRequest) => verifyPage(await openPage(deps, ctx), {}))
    .post('/verify', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      const values = { email: formValue(ctx.body, 'email'), code: formValue(ctx.body, 'code') }
      const empty = missing(page.t, values, ['email', 'code'])
      if (empty) return verifyPage(page, { ...empty, values: { email: values.email } }, 400)
      try {
        const deviceCookie = readCookie(page.jar, page.cookies.device)
        const session = await verifyEmail(deps, { tenant: page.tenant, email: values.email, otp: values.code.replace(/\s+/g, ''), deviceCookie }, page.actor)
        await startPageSession(deps, page.jar, page.cookies, page.tenant, session, page.actor)
      } catch (error) {
        const { state, status, retryAfter } = problemOf(page.t, error, { invalid_otp: { field: 'code', key: 'verify.invalid' }, signup_closed: { key: 'signup.closed' } })
        return verifyPage(page, { ...state, values: { email: values.email } }, status, retryAfter)
      }
      return page.redirect(`${page.base}/account`)
    })
