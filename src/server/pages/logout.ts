// /t/{tenant}/logout: a page with one button (signing out changes state, so it is a form sent
// with POST, never a link another site could make the browser follow), calling logout as
// POST /logout does: the session ends, its cookie is cleared.
import { tenantTitle } from '../../core/tenants/tenants'
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { clientActor } from '../plugins/client-ip'
import { endPageSession } from './page-session'
import { form, formValue } from './forms'
import { html } from './html'
import { openPage, PAGE_PREFIX, type PageRequest } from './page'

export const logoutPages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/logout', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx)
      if (!page.caller) return page.redirect(`${page.base}/login`)
      const { t } = page
      const main = html`<p>${t('logout.intro', { tenant: tenantTitle(page.tenant) })}</p>${form({ action: `${page.base}/logout`, token: page.token, submit: t('logout.submit') })}`
      return page.render(t('logout.title'), main)
    })
    .post('/logout', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      await endPageSession(deps, page.jar, page.cookies, page.tenant, page.actor)
      // Signing out to switch accounts (the OpenID no-access page) comes back where it was after
      // the next sign-in; the login page judges the return_to as any other (no open redirect).
      const returnTo = formValue(ctx.body, 'return_to')
      return page.redirect(`${page.base}/login?${new URLSearchParams({ done: 'logout', ...(returnTo && { return_to: returnTo }) })}`)
    })
