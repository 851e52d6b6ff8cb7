// GET|POST /t/{tenant}/authorize and the consent form (product spec §21). The browser's page
// session (server/pages) is the provider's session: a browser not signed in is sent to the
// login page with return_to back here; a third-party client's first request shows the
// consent page. Until the client and redirect URI are known good, errors are drawn as a page;
// after that they go back to the client (RFC 6749 §4.1.2.1), with `state` and `iss`.
import { tenantTitle } from '../../core/tenants/tenants'
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { authorize, clientRedirect, findClientAndRedirect, paramsOf, parseAuthorizationRequest, SIGNED_IN_AFTER, signedInAfterOf, signInMark, type AuthorizationRequest, type Params } from '../../core/oidc/authorization'
import { OAuthError } from '../../core/oidc/errors'
import { clientActor } from '../plugins/client-ip'
import { readCookie } from '../pages/cookies'
import { form, formValue } from '../pages/forms'
import { html } from '../pages/html'
import { openPage, PAGE_PREFIX, type Page, type PageRequest } from '../pages/page'
import type { MessageKey } from '../pages/strings'
import { sourceOf } from './form-targets'
import { isIssuerSpelling } from '../../core/oidc/issuer'
import { issuerOf, stringFields } from './protocol'

/** The page shown when the request cannot be sent back to the client. */
function cannotGoOn(page: Page) {
  const { t } = page
  return page.render(t('error.title'), html`<p role="alert">${t('oidc.error.client', { tenant: tenantTitle(page.tenant) })}</p>`, { status: 400 })
}

/** The browser's own random value (its form cookie, set by openPage if it had none): what a sign-in mark is bound to. */
const browserOf = (page: Page) => readCookie(page.jar, page.cookies.form)

/**
 * This authorize request again, as a path on authd, marked (when `signedInAfter` is set) so the
 * sign-in it waits for satisfies its prompt=login or max_age once it has happened: a mark only
 * authd can make, for this request in this browser (signInMark). The request keeps its prompt:
 * followed before the sign-in, it asks for it again.
 */
function resumePath(deps: Deps, page: Page, params: Params, signedInAfter: number | null): string {
  const again: Params = new Map([...params].filter(([name]) => name !== SIGNED_IN_AFTER))
  const browser = browserOf(page)
  if (signedInAfter !== null && browser) again.set(SIGNED_IN_AFTER, signInMark(deps.serverKeys.hmac, browser, again, signedInAfter))
  return `${page.base}/authorize?${new URLSearchParams([...again])}`
}

function consentPage(page: Page, request: AuthorizationRequest, resume: string) {
  const { t } = page
  const client = request.client.name
  const tenant = tenantTitle(page.tenant)
  // The consent form's answer is a redirect to the client: its redirect URI must be a form target.
  page.returnOrigins.push(sourceOf(request.redirectUri))
  const main = html`<p>${t('oidc.consent.intro', { client, tenant })}</p>
<ul>${request.scopes.map((scope) => html`<li>${t(`oidc.scope.${scope}` as MessageKey)}</li>`)}</ul>
<form method="post" action="${page.base}/authorize/consent" novalidate>
<input type="hidden" name="_form" value="${page.token}">
<input type="hidden" name="return_to" value="${resume}">
<button type="submit" name="decision" value="allow">${t('oidc.consent.allow')}</button>
<button type="submit" name="decision" value="deny" class="secondary">${t('oidc.consent.deny')}</button>
</form>`
  return page.render(t('oidc.consent.title', { client }), main)
}

/**
 * A signed-in user the client does not admit (its allowed groups, product spec §23): authd says
 * so and offers to sign out and come back to this request as someone else. Never a redirect to
 * the client: no code, and no error the client could turn into another attempt unseen.
 */
function noAccessPage(page: Page, request: AuthorizationRequest, resume: string) {
  const { t } = page
  const client = request.client.name
  const main = html`<p role="alert">${t('oidc.denied.intro', { client, tenant: tenantTitle(page.tenant) })}</p>
${form({ action: `${page.base}/logout`, token: page.token, submit: t('oidc.denied.switch'), hidden: { return_to: resume } })}`
  return page.render(t('oidc.denied.title', { client }), main)
}

/**
 * One authorize request, from its parameters to its answer.
 * @param decision what the user chose on the consent page, if this is its answer
 */
async function answer(deps: Deps, page: Page, entries: Iterable<[string, string]>, decision?: 'allow' | 'deny') {
  const params = paramsOf(entries)
  if (params === 'repeated') return cannotGoOn(page)
  // (an id in upper case is no issuer: see core/oidc/issuer.ts)
  if (!isIssuerSpelling(decodeURIComponent(page.base.slice('/t/'.length)))) return cannotGoOn(page)
  let target: Awaited<ReturnType<typeof findClientAndRedirect>>
  try {
    target = await findClientAndRedirect(deps, page.tenant, params)
  } catch (error) {
    if (error instanceof OAuthError) return cannotGoOn(page)
    throw error
  }
  const issuer = issuerOf(deps.config, decodeURIComponent(page.base.slice('/t/'.length)))
  const state = params.get('state') || null
  try {
    const signedInAfter = signedInAfterOf(deps.serverKeys.hmac, browserOf(page), params, deps.clock.now())
    const request = parseAuthorizationRequest(params, target.client, target.redirectUri, signedInAfter)
    if (decision === 'deny') throw new OAuthError('access_denied', 'the user denied the request')
    const next = await authorize(deps, page.tenant, issuer, request, page.caller, page.actor, decision === 'allow')
    if (next.step === 'code') return page.redirect(clientRedirect(target.redirectUri, issuer, state, { code: next.code }))
    // (the consent page's answer resumes the request with the sign-in it may just have had)
    if (next.step === 'consent') return consentPage(page, request, resumePath(deps, page, params, signedInAfter))
    // (the request resumed after the other account's sign-in counts that sign-in, as after the login page)
    if (next.step === 'denied') return noAccessPage(page, request, resumePath(deps, page, params, deps.clock.now()))
    const login = new URLSearchParams({ return_to: resumePath(deps, page, params, deps.clock.now()) })
    // A signed-in browser asked to sign in again sees the form rather than passing straight through.
    if (page.caller) login.set('prompt', 'login')
    if (request.loginHint) login.set('login_hint', request.loginHint)
    return page.redirect(`${page.base}/login?${login}`)
  } catch (error) {
    if (error instanceof OAuthError) return page.redirect(clientRedirect(target.redirectUri, issuer, state, { error: error.error, error_description: error.description }))
    throw error
  }
}

export const authorizeRoutes = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/authorize', async (ctx: PageRequest) => answer(deps, await openPage(deps, ctx), new URL(ctx.request.url).searchParams))
    // (a client may send the request as a form, Core §3.1.2.1: no anti-forgery token, it comes from the client's page)
    .post('/authorize', async (ctx: PageRequest) => answer(deps, await openPage(deps, ctx), stringFields(ctx.body)))
    .post('/authorize/consent', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      const resume = URL.parse(formValue(ctx.body, 'return_to'), page.origin)
      if (!resume || resume.origin !== page.origin || resume.pathname !== `${page.base}/authorize`) return cannotGoOn(page)
      return answer(deps, page, resume.searchParams, formValue(ctx.body, 'decision') === 'allow' ? 'allow' : 'deny')
    })
