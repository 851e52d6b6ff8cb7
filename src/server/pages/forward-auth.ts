// A sign-in on its way back to an application behind the tenant's reverse proxy (product spec
// §24). Before the browser is sent there, the page asks the same decision the proxy's check will
// (core/forward-auth/check.ts) and answers what the check could only refuse: a session that needs
// a second factor proves one here (or is told to set one up), a user the rules keep out is told
// so with a way to switch accounts, and an admitted one gets the domain cookie and goes on. Doing
// it here, per request, keeps the return URL in the request (no redirect loops between tabs).
import { Elysia } from 'elysia'
import { checkReturn } from '../../core/forward-auth/check'
import { isOnProtectedDomain } from '../../core/forward-auth/domains'
import type { Deps } from '../../core/deps'
import { hasConfirmedTotp } from '../../core/mfa/factor'
import { proveSecondFactorInSession } from '../../core/sign-in/step-up'
import type { Caller } from '../../core/sessions/signed-in-user'
import { tenantTitle } from '../../core/tenants/tenants'
import { clientActor } from '../plugins/client-ip'
import { setDomainCookie } from './domain-cookie'
import { readCookie } from './cookies'
import { field, form, formValue, problems, type FormState } from './forms'
import { html } from './html'
import { openPage, PAGE_PREFIX, type Page, type PageRequest } from './page'
import { pageSessionToken } from './page-session'
import { missing, problemOf } from './problems'
import { returnTarget } from './return-to'

/** Whether a return_to leads to an application on a forward-auth domain of the tenant (not to
 *  authd itself; an origin the operator also registered for return_to counts as one, or a
 *  browser without the domain cookie would go round between it and the login page). */
export function toProtectedApplication(page: Page, target: string): URL | null {
  const url = new URL(target)
  if (url.origin === page.origin) return null
  return isOnProtectedDomain(page.protectedDomains, url, page.publicUrl) ? url : null
}

/** A signed-in browser sent on to a protected application: judged, then on its way or told why not. */
export async function continueToApplication(deps: Deps, page: Page, caller: Caller, target: URL, state: FormState = {}, status = 200, retryAfter?: number): Promise<string> {
  const answer = await checkReturn(deps, page.tenant, caller, target, page.actor)
  const host = target.host
  const { t } = page
  if (answer.outcome === 'allowed' || answer.outcome === 'sign_in') {
    // (the browser may hold no domain cookie yet: signed in before the tenant protected a domain,
    // or the cookie cleared; this one is its page session's)
    const token = pageSessionToken(deps, page.jar, page.cookies)
    if (token) setDomainCookie(deps, page.jar, page.tenant, token)
    return page.redirect(target.href)
  }
  if (answer.outcome === 'denied') {
    const main = html`<p role="alert">${t('forwardAuth.denied.intro', { host, tenant: tenantTitle(page.tenant) })}</p>
${form({ action: `${page.base}/logout`, token: page.token, submit: t('oidc.denied.switch'), hidden: { return_to: target.href } })}`
    return page.render(t('forwardAuth.denied.title', { host }), main, { status: 403 })
  }
  if (!(await hasConfirmedTotp(deps, caller.user.id))) {
    const hasPasskey = (await deps.store.passkeys.listByUser(caller.user.id)).length > 0
    const main = html`<p>${t('forwardAuth.setup.intro', { host })}</p>
<p class="links"><a href="${page.base}/account">${t('forwardAuth.setup.link')}</a> · <a href="${target.href}">${t('forwardAuth.back', { host })}</a>${hasPasskey && html` · <a href="${page.base}/login?prompt=login&return_to=${encodeURIComponent(target.href)}">${t('forwardAuth.factor.again')}</a>`}</p>`
    return page.render(t('forwardAuth.factor.title'), main, { status })
  }
  const main = html`${problems(t, state)}<p>${t('forwardAuth.factor.intro', { host })}</p>
${form(
  { action: `${page.base}/login/session-factor`, token: page.token, submit: t('mfa.submit'), hidden: { return_to: target.href } },
  field({ name: 'code', label: t('field.code'), autocomplete: 'one-time-code', inputmode: 'numeric' }, state),
)}
<p class="links"><a href="${page.base}/login?prompt=login&return_to=${encodeURIComponent(target.href)}">${t('forwardAuth.factor.again')}</a></p>`
  return page.render(t('forwardAuth.factor.title'), main, { status, retryAfter })
}

/** POST /t/{tenant}/login/session-factor: the signed-in session proves a TOTP code, then goes on. */
export const forwardAuthPages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX }).use(clientActor(deps.config.trustedProxies)).post('/login/session-factor', async (ctx: PageRequest) => {
    const page = await openPage(deps, ctx, true)
    const raw = formValue(ctx.body, 'return_to')
    const target = returnTarget(page, raw)
    const url = target === null || target === 'refused' ? null : toProtectedApplication(page, target)
    if (!page.caller || !url) return page.redirect(`${page.base}/login${url ? `?return_to=${encodeURIComponent(url.href)}` : ''}`)
    const code = formValue(ctx.body, 'code')
    const empty = missing(page.t, { code }, ['code'])
    if (empty) return continueToApplication(deps, page, page.caller, url, empty, 400)
    try {
      const { amr } = await proveSecondFactorInSession(deps, page.caller, { code, deviceCookie: readCookie(page.jar, page.cookies.device) }, page.actor)
      return await continueToApplication(deps, page, { ...page.caller, amr, authAt: deps.clock.now() }, url)
    } catch (error) {
      const { state, status, retryAfter } = problemOf(page.t, error, { invalid_credentials: { field: 'code', key: 'forwardAuth.factor.invalid' } })
      return continueToApplication(deps, page, page.caller, url, state, status, retryAfter)
    }
  })
