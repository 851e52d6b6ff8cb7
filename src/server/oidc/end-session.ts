// GET|POST /t/{tenant}/end_session: RP-initiated logout 1.0. With an id_token_hint issued in
// this very page session (its `sid`), the page session ends at once (the hint of another
// session of the same user, a leaked one say, is no proof this browser asked); otherwise the user confirms with a form
// (a link alone must not sign anyone out). Then the browser goes to the client's registered
// post_logout_redirect_uri (with `state`), or to the login page. Only a valid id_token_hint
// sends it there by itself: without one, anybody's link would make authd's address a redirector
// to whatever URI a tenant admin registered (RP-Initiated Logout 1.0 §3), so the signed-out
// page offers that URI as a link the user may follow.
import { tenantTitle } from '../../core/tenants/tenants'
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { paramsOf } from '../../core/oidc/authorization'
import { verifyIdTokenHint } from '../../core/oidc/access'
import { clientActor } from '../plugins/client-ip'
import { endPageSession } from '../pages/page-session'
import { form, formValue } from '../pages/forms'
import { html } from '../pages/html'
import { openPage, PAGE_PREFIX, type Page, type PageRequest } from '../pages/page'
import { sourceOf } from './form-targets'
import { issuerOf, stringFields } from './protocol'

function cannotGoOn(page: Page) {
  const { t } = page
  return page.render(t('error.title'), html`<p role="alert">${t('oidc.error.client', { tenant: tenantTitle(page.tenant) })}</p>`, { status: 400 })
}

function signedOut(page: Page, target: string, clientName: string) {
  const { t } = page
  return page.render(t('logout.title'), html`<p role="status">${t('login.signedOut')}</p><p><a href="${target}">${t('logout.return', { client: clientName })}</a></p>`)
}

async function signOut(deps: Deps, page: Page, leave: () => string) {
  await endPageSession(deps, page.jar, page.cookies, page.tenant, page.actor)
  return leave()
}

/** @param confirmed the user pressed "Sign out" on the confirmation form */
async function answer(deps: Deps, page: Page, entries: Iterable<[string, string]>, confirmed: boolean) {
  const params = paramsOf(entries)
  if (params === 'repeated') return cannotGoOn(page)
  const issuer = issuerOf(deps.config, decodeURIComponent(page.base.slice('/t/'.length)))
  const hintToken = params.get('id_token_hint')
  let hint: Awaited<ReturnType<typeof verifyIdTokenHint>> | null = null
  if (hintToken) {
    try {
      hint = await verifyIdTokenHint(deps, issuer, hintToken)
    } catch {
      return cannotGoOn(page)
    }
  }
  const clientId = params.get('client_id') || hint?.aud
  if (params.get('client_id') && hint && hint.aud !== params.get('client_id')) return cannotGoOn(page)
  const client = clientId && clientId.length <= 100 ? await deps.store.oidc.getClient(clientId) : null
  if (clientId && (!client || client.tenantId !== page.tenant.id)) return cannotGoOn(page)
  const postLogout = params.get('post_logout_redirect_uri')
  // Only a URI the client registered, matched exactly: never an open redirect.
  if (postLogout && !client?.postLogoutRedirectUris.includes(postLogout)) return cannotGoOn(page)
  let target = `${page.base}/login?done=logout`
  if (postLogout) {
    const url = new URL(postLogout)
    const state = params.get('state')
    if (state) url.searchParams.append('state', state)
    target = url.href
    page.returnOrigins.push(sourceOf(postLogout))
  }
  const leave = () => (postLogout && client && hint === null ? signedOut(page, target, client.name) : page.redirect(target))
  if (!page.caller) return leave()
  if (confirmed || (hint !== null && hint.sub === page.caller.user.id && hint.sid === page.caller.sessionId)) return signOut(deps, page, leave)
  const { t } = page
  const again = `${page.base}/end_session?${new URLSearchParams([...params])}`
  const main = html`<p>${t('logout.intro', { tenant: tenantTitle(page.tenant) })}</p>${form({ action: `${page.base}/end_session/confirm`, token: page.token, submit: t('logout.submit'), hidden: { return_to: again } })}`
  return page.render(t('logout.title'), main)
}

export const endSessionRoutes = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/end_session', async (ctx: PageRequest) => answer(deps, await openPage(deps, ctx), new URL(ctx.request.url).searchParams, false))
    .post('/end_session', async (ctx: PageRequest) => answer(deps, await openPage(deps, ctx), stringFields(ctx.body), false))
    .post('/end_session/confirm', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      const again = URL.parse(formValue(ctx.body, 'return_to'), page.origin)
      if (!again || again.origin !== page.origin || again.pathname !== `${page.base}/end_session`) return cannotGoOn(page)
      return answer(deps, page, again.searchParams, true)
    })
