// /t/{tenant}/forgot and /t/{tenant}/reset: the OTP of product spec §5, through the domain
// functions of GET /forgot-password and POST /change-password. The forgot form's answer is
// the reset form with the same notice for every address, registered or not (the domain does
// the same work for both; test/http/pages-forms.test.ts compares the pages).
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { changePassword, requestPasswordReset } from '../../core/accounts/password-reset'
import { clientActor } from '../plugins/client-ip'
import { DEVICE_MAX_AGE_SEC, readCookie, setCookie } from './cookies'
import { field, form, formValue, notice, problems, type FormState } from './forms'
import { html } from './html'
import { openPage, PAGE_PREFIX, type Page, type PageRequest } from './page'
import { missing, problemOf } from './problems'

function forgotPage(page: Page, state: FormState, status = 200, retryAfter?: number) {
  const { t } = page
  const main = html`${problems(t, state)}<p>${t('forgot.intro')}</p>
${form({ action: `${page.base}/forgot`, token: page.token, submit: t('forgot.submit') }, field({ name: 'email', label: t('field.email'), type: 'email', autocomplete: 'username', keepValue: true }, state))}`
  return page.render(t('forgot.title'), main, { status, retryAfter })
}

function resetPage(deps: Deps, page: Page, state: FormState, status = 200, retryAfter?: number) {
  const { t } = page
  const main = html`${notice(state)}${problems(t, state)}
${form(
  { action: `${page.base}/reset`, token: page.token, submit: t('reset.submit') },
  field({ name: 'email', label: t('field.email'), type: 'email', autocomplete: 'username', keepValue: true }, state),
  field({ name: 'code', label: t('reset.code'), autocomplete: 'one-time-code', inputmode: 'numeric' }, state),
  field({ name: 'newPassword', label: t('field.newPassword'), type: 'password', autocomplete: 'new-password', hint: t('field.newPassword.hint', { min: deps.config.passwordMinLength }) }, state),
)}
<p class="links"><a href="${page.base}/forgot">${t('reset.again')}</a></p>`
  return page.render(t('reset.title'), main, { status, retryAfter })
}

export const passwordResetPages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/forgot', async (ctx: PageRequest) => forgotPage(await openPage(deps, ctx), {}))
    .post('/forgot', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      const values = { email: formValue(ctx.body, 'email') }
      const empty = missing(page.t, values, ['email'])
      if (empty) return forgotPage(page, { ...empty, values }, 400)
      let email: string
      try {
        email = await requestPasswordReset(deps, { tenant: page.tenant, email: values.email }, page.actor)
      } catch (error) {
        const { state, status, retryAfter } = problemOf(page.t, error, {})
        return forgotPage(page, { ...state, values }, status, retryAfter)
      }
      // The same page for every address: the one it was given, normalised, and the same notice.
      return resetPage(deps, page, { values: { email }, notice: page.t('forgot.sent') })
    })
    .get('/reset', async (ctx: PageRequest) => resetPage(deps, await openPage(deps, ctx), {}))
    .post('/reset', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      const values = { email: formValue(ctx.body, 'email'), code: formValue(ctx.body, 'code'), newPassword: formValue(ctx.body, 'newPassword') }
      const keep = { email: values.email }
      const empty = missing(page.t, values, ['email', 'code', 'newPassword'])
      if (empty) return resetPage(deps, page, { ...empty, values: keep }, 400)
      try {
        const deviceCookie = readCookie(page.jar, page.cookies.device)
        // (spaces are allowed in what is typed: "123 456" is the code 123456)
        const changed = await changePassword(deps, { tenant: page.tenant, email: values.email, otp: values.code.replace(/\s+/g, ''), newPassword: values.newPassword, deviceCookie }, page.actor)
        setCookie(page.jar, page.cookies, page.cookies.device, changed.deviceCookie, DEVICE_MAX_AGE_SEC)
      } catch (error) {
        const { state, status, retryAfter } = problemOf(page.t, error, { invalid_otp: { field: 'code', key: 'reset.invalid' } }, 'newPassword')
        return resetPage(deps, page, { ...state, values: keep }, status, retryAfter)
      }
      return page.redirect(`${page.base}/login?done=reset`)
    })
