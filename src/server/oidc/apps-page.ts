// /t/{tenant}/account/apps: the applications the user allowed (consents of §21), each with
// "Withdraw", which also signs the application out (core/oidc/grants.ts).
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { AppError } from '../../core/errors'
import { listConsents, withdrawConsent } from '../../core/oidc/grants'
import { clientActor } from '../plugins/client-ip'
import { signedInPage } from '../pages/account-view'
import { form, formValue } from '../pages/forms'
import { html } from '../pages/html'
import { PAGE_PREFIX, type Page, type PageRequest } from '../pages/page'
import type { Caller } from '../../core/sessions/signed-in-user'
import { formatMoment, type MessageKey } from '../pages/strings'

/** What a consent allows, as a sentence's list: "know who you are, see your name, and …" */
const scopeList = (page: Page, scopes: string[]) =>
  new Intl.ListFormat(page.t.language, { type: 'conjunction' }).format(scopes.map((scope) => page.t(`oidc.scope.${scope}` as MessageKey)))

async function appsPage(deps: Deps, page: Page, caller: Caller, notice?: string) {
  const { t } = page
  const lang = t('layout.language')
  const consents = await listConsents(deps, caller)
  const main = html`${notice && html`<p class="notice" role="status">${notice}</p>`}
<p>${t('oidc.apps.intro')}</p>
${consents.length === 0 ? html`<p>${t('oidc.apps.none')}</p>` : html`<ul class="sessions">${consents.map(
    (c) => html`<li><span><strong>${c.clientName}</strong><span class="meta">${t('oidc.apps.detail', { scopes: scopeList(page, c.scopes), givenAt: formatMoment(lang, c.givenAt) })}</span></span>
${form({ action: `${page.base}/account/apps/withdraw`, token: page.token, submit: t('oidc.apps.withdraw'), submitLabel: `${t('oidc.apps.withdraw')}: ${c.clientName}`, secondary: true, hidden: { clientId: c.clientId } })}</li>`,
  )}</ul>`}
<p class="links"><a href="${page.base}/account">${t('account.title')}</a></p>`
  return page.render(t('oidc.apps.title'), main)
}

export const appsPages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/account/apps', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx)
      if ('redirect' in open) return open.redirect
      return appsPage(deps, open.page, open.caller, ctx.query?.done === 'withdrawn' ? open.page.t('oidc.apps.withdrawn') : undefined)
    })
    .post('/account/apps/withdraw', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx, true)
      if ('redirect' in open) return open.redirect
      try {
        await withdrawConsent(deps, open.caller, formValue(ctx.body, 'clientId'), open.page.actor)
      } catch (error) {
        // (withdrawn already, in another tab: the list shows what is left)
        if (!(error instanceof AppError && error.code === 'not_found')) throw error
      }
      return open.page.redirect(`${open.page.base}/account/apps?done=withdrawn`)
    })
