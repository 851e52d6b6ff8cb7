// /t/{tenant}/invite: the invitation mail's link (when AUTHD_INVITE_URL is not set) lands here
// with the setup token in the URL's fragment, which no server or log ever sees. A script of
// the page's own (allowed by its nonce) copies it into the form; without JavaScript, the user
// pastes the token the mail also shows. The form calls setupPassword, as POST /setup-password.
import { tenantTitle } from '../../core/tenants/tenants'
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { setupPassword } from '../../core/accounts/setup-password'
import { clientActor } from '../plugins/client-ip'
import { field, form, formValue, problems, type FormState } from './forms'
import { html } from './html'
import { openPage, PAGE_PREFIX, type Page, type PageRequest } from './page'
import { missing, problemOf } from './problems'

function invitePage(deps: Deps, page: Page, state: FormState, status = 200, retryAfter?: number) {
  const { t } = page
  const main = html`${problems(t, state)}<p>${t('invite.intro', { tenant: tenantTitle(page.tenant) })}</p>
${form(
  { action: `${page.base}/invite`, token: page.token, submit: t('invite.submit') },
  field({ name: 'token', label: t('invite.token'), autocomplete: 'off' }, state),
  field({ name: 'newPassword', label: t('field.newPassword'), type: 'password', autocomplete: 'new-password', hint: t('field.newPassword.hint', { min: deps.config.passwordMinLength }) }, state),
)}
<script nonce="${page.nonce}">
// The token from the fragment into the form. The fragment stays on the form's target too, so
// that the page drawn again after a refused password (it never repeats the token) has it still.
const token = /(?:^#|&)token=([^&]+)/.exec(location.hash)
const input = document.getElementById('f-token')
if (token && input && input.form) {
  if (!input.value) input.value = decodeURIComponent(token[1])
  input.form.action = input.form.action.split('#')[0] + location.hash
}
</script>`
  // The URL holds a secret: no Referer from this page, ever.
  return page.render(t('invite.title'), main, { status, retryAfter, referrerPolicy: 'no-referrer' })
}

export const invitePages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/invite', async (ctx: PageRequest) => invitePage(deps, await openPage(deps, ctx), {}))
    .post('/invite', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      const values = { token: formValue(ctx.body, 'token').trim(), newPassword: formValue(ctx.body, 'newPassword') }
      const empty = missing(page.t, values, ['token', 'newPassword'])
      if (empty) return invitePage(deps, page, empty, 400)
      try {
        await setupPassword(deps, { tenant: page.tenant, setupToken: values.token, password: values.newPassword }, page.actor)
      } catch (error) {
        const invalid = { field: 'token', key: 'invite.invalid' } as const
        const { state, status, retryAfter } = problemOf(
          page.t,
          error,
          { unauthorized: invalid, not_found: invalid, tenant_user_password: invalid, password_exists: { key: 'invite.hasPassword' } },
          'newPassword',
        )
        return invitePage(deps, page, state, status, retryAfter)
      }
      // (the empty fragment replaces the #token=… the browser would otherwise carry over)
      return page.redirect(`${page.base}/login?done=invite#`)
    })
