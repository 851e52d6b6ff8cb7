// /t/{tenant}/login: e-mail and password, then the second factor for a user who has one (a
// TOTP or recovery code). The same domain functions as POST /login and POST /mfa/verify, so
// the same back-off, limits, audit events and enumeration resistance; the session they start
// is the page session (cookies.ts).
import { tenantTitle } from '../../core/tenants/tenants'
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { signInWithPasskey, startPasskeySignIn } from '../../core/passkeys/sign-in'
import { login, loginWithSecondFactor } from '../../core/sign-in/login'
import type { LoginResult } from '../../core/sessions/sessions'
import { clientActor } from '../plugins/client-ip'
import { clearCookie, readCookie } from './cookies'
import { linkAfterProof } from '../../core/federation/sign-in'
import { startPageSession } from './page-session'
import { checkbox, field, form, formValue, notice, problems, type FormState } from './forms'
import { html } from './html'
import { openPage, PAGE_PREFIX, type Page, type PageRequest } from './page'
import { credentialOf, offersPasskeys, passkeysScript } from './passkeys-view'
import { missing, problemOf } from './problems'
import { returnTarget } from './return-to'
import { continueToApplication, toProtectedApplication } from './forward-auth'
import { signupOpen } from './signup'
import { noticeOf, type MessageKey } from './strings'

/** Notices a redirect to the login page may ask for (`?done=`). */
const DONE: Record<string, MessageKey> = { logout: 'login.signedOut', reset: 'reset.done', invite: 'invite.done' }

/** What a sign-in's forms carry to their next step: where to go afterwards, and the upstream
 *  identity waiting to be linked by this very sign-in (the page that asked for it named it). */
function carried(page: Page, returnTo: string): Record<string, string> {
  return { ...(returnTo && { return_to: returnTo }), ...(page.linkFlow && { link_flow: page.linkFlow }) }
}

/** Takes the pending link off the page (a failure's page is drawn without it); returns it. */
function withoutLinkFlow(page: Page): string {
  const linkFlow = page.linkFlow
  page.linkFlow = ''
  return linkFlow
}

/** "Continue with {name}" for each of the tenant's upstream providers (links: the upstream's own page follows). */
function providerButtons(page: Page, returnTo: string) {
  if (page.providers.length === 0) return html``
  const query = returnTo ? `?${new URLSearchParams({ return_to: returnTo })}` : ''
  return html`<div class="providers"><p class="or">${page.t('login.or')}</p>
${page.providers.map((provider) => html`<a class="button secondary" href="${page.base}/login/${provider.id}${query}">${page.t('login.continueWith', { provider: provider.name })}</a>`)}</div>`
}

export function loginPage(page: Page, state: FormState, returnTo: string, status = 200, retryAfter?: number) {
  const { t } = page
  const goingTo = returnTo && new URL(returnTo).origin !== page.origin ? new URL(returnTo).host : null
  const main = html`${notice(state)}${problems(t, state)}${goingTo && html`<p>${t('login.continueTo', { host: goingTo })}</p>`}
${form(
  { action: `${page.base}/login`, token: page.token, submit: t('login.submit'), hidden: carried(page, returnTo) },
  // (webauthn: the browser's autofill may offer a passkey on this field, passkeys-script.ts)
  field({ name: 'email', label: t('field.email'), type: 'email', autocomplete: 'username webauthn', keepValue: true }, state),
  field({ name: 'password', label: t('field.password'), type: 'password', autocomplete: 'current-password' }, state),
  checkbox('rememberMe', t('field.rememberMe'), state.values?.rememberMe === 'on'),
)}
${offersPasskeys(page) && html`<form method="post" action="${page.base}/login/passkey" data-passkey-signin data-options-url="${page.base}/login/passkey/options">
<input type="hidden" name="_form" value="${page.token}">${Object.entries(carried(page, returnTo)).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit" class="secondary" hidden>${t('passkey.signIn')}</button>
</form>
${passkeysScript(page)}`}
${providerButtons(page, returnTo)}
<p class="links"><a href="${page.base}/forgot">${t('login.forgot')}</a>${signupOpen(page.tenant) && html` · <a href="${page.base}/signup">${t('signup.link')}</a>`}</p>`
  return page.render(t('login.heading', { tenant: tenantTitle(page.tenant) }), main, { status, retryAfter })
}

/** @param passkeyOptions the challenge's, for a user with passkeys (on its first drawing only) */
export function secondFactorPage(page: Page, challengeToken: string, state: FormState, returnTo: string, status = 200, retryAfter?: number, passkeyOptions?: PublicKeyCredentialRequestOptionsJSON) {
  const { t } = page
  const hidden = { challengeToken, ...carried(page, returnTo) }
  const main = html`${problems(t, state)}<p>${t('mfa.intro')}</p>
${form(
  { action: `${page.base}/login/second-factor`, token: page.token, submit: t('mfa.submit'), hidden },
  field({ name: 'code', label: t('field.code'), autocomplete: 'one-time-code', inputmode: 'numeric' }, state),
)}
${passkeyOptions && offersPasskeys(page) && html`<form method="post" action="${page.base}/login/second-factor" data-passkey-second-factor data-options="${JSON.stringify(passkeyOptions)}">
<input type="hidden" name="_form" value="${page.token}">${Object.entries(hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit" class="secondary" hidden>${t('passkey.secondFactor')}</button>
</form>
${passkeysScript(page)}`}`
  return page.render(t('mfa.title'), main, { status, retryAfter })
}

/** Signed in: the page session's cookie (and the device cookie), then on to where the user was
 *  going. A sign-in made on the page that asked for it, proving the account an upstream identity
 *  waits for, links it (core/federation); any other sign-in in this browser links nothing. */
export async function signedIn(deps: Deps, page: Page, session: LoginResult, returnTo: string | null) {
  await startPageSession(deps, page.jar, page.cookies, page.tenant, session, page.actor)
  const linked = page.linkFlow ? await linkAfterProof(deps, { tenant: page.tenant, cookieState: readCookie(page.jar, page.cookies.federation), flowId: page.linkFlow, userId: session.user.userId }, page.actor) : null
  if (linked !== null) clearCookie(page.jar, page.cookies, page.cookies.federation)
  return page.redirect(returnTo ?? `${page.base}/account${linked !== null ? '?done=identity-linked' : ''}`)
}

/** The return_to a sign-in form carries: kept if allowed; else the form says why and drops it. */
function returnToOf(page: Page, raw: string): { returnTo: string | null; refused: FormState | null } {
  const target = returnTarget(page, raw)
  if (target !== 'refused') return { returnTo: target, refused: null }
  return { returnTo: null, refused: { formError: page.t('login.returnTo.invalid', { tenant: tenantTitle(page.tenant) }) } }
}

export const loginPages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/login', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx)
      const { returnTo, refused } = returnToOf(page, ctx.query?.return_to ?? '')
      if (refused) return loginPage(page, refused, '', 400)
      // (prompt=login: an OpenID client asked for a fresh sign-in, server/oidc/authorize.ts)
      if (page.caller && ctx.query?.prompt !== 'login') {
        const application = returnTo && toProtectedApplication(page, returnTo)
        return application ? continueToApplication(deps, page, page.caller, application) : page.redirect(returnTo ?? `${page.base}/account`)
      }
      const done = noticeOf(DONE, ctx.query?.done)
      const hint = ctx.query?.login_hint ? { values: { email: ctx.query.login_hint.slice(0, 320) } } : {}
      return loginPage(page, done ? { notice: page.t(done), ...hint } : hint, returnTo ?? '')
    })
    .post('/login', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      // The identity this sign-in would link goes on only with a sign-in that succeeds (to the
      // session, or the second factor): a page drawn again after a failure says nothing of it,
      // so it must link nothing either (the next person at a shared browser would sign in there).
      const linkFlow = withoutLinkFlow(page)
      const values = { email: formValue(ctx.body, 'email'), password: formValue(ctx.body, 'password'), rememberMe: formValue(ctx.body, 'rememberMe') }
      const { returnTo, refused } = returnToOf(page, formValue(ctx.body, 'return_to'))
      if (refused) return loginPage(page, { ...refused, values }, '', 400)
      const empty = missing(page.t, values, ['email', 'password'])
      if (empty) return loginPage(page, { ...empty, values }, returnTo ?? '', 400)
      try {
        const deviceCookie = readCookie(page.jar, page.cookies.device)
        const answer = await login(deps, { tenant: page.tenant, email: values.email, password: values.password, rememberMe: values.rememberMe === 'on', deviceCookie }, page.actor)
        page.linkFlow = linkFlow
        if (answer.kind === 'mfa') return secondFactorPage(page, answer.challengeToken, {}, returnTo ?? '', 200, undefined, answer.passkeyOptions)
        return await signedIn(deps, page, answer, returnTo)
      } catch (error) {
        page.linkFlow = ''
        const { state, status, retryAfter } = problemOf(page.t, error, { unauthorized: { field: 'password', key: 'login.invalid' } })
        return loginPage(page, { ...state, values }, returnTo ?? '', status, retryAfter)
      }
    })
    // (JSON for the script; the form's token and Origin are checked as for any form)
    .post('/login/passkey/options', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      return startPasskeySignIn(deps, page.tenant, undefined, page.actor)
    })
    .post('/login/passkey', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      const linkFlow = withoutLinkFlow(page)
      const { returnTo, refused } = returnToOf(page, formValue(ctx.body, 'return_to'))
      if (refused) return loginPage(page, refused, '', 400)
      try {
        const deviceCookie = readCookie(page.jar, page.cookies.device)
        const session = await signInWithPasskey(deps, { tenant: page.tenant, challengeId: formValue(ctx.body, 'challengeId'), response: credentialOf(ctx.body), deviceCookie }, page.actor)
        page.linkFlow = linkFlow
        return await signedIn(deps, page, session, returnTo)
      } catch (error) {
        const { state, status, retryAfter } = problemOf(page.t, error, { unauthorized: { key: 'passkey.failed' }, invalid_request: { key: 'passkey.failed' } })
        return loginPage(page, state, returnTo ?? '', status, retryAfter)
      }
    })
    .post('/login/second-factor', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      const challengeToken = formValue(ctx.body, 'challengeToken')
      const code = formValue(ctx.body, 'code')
      // A passkey's credential (sent by the script) in place of a code.
      const response = formValue(ctx.body, 'response') === '' ? undefined : credentialOf(ctx.body)
      const { returnTo, refused } = returnToOf(page, formValue(ctx.body, 'return_to'))
      if (refused) return loginPage(page, refused, '', 400)
      const empty = response === undefined && missing(page.t, { code }, ['code'])
      if (empty) return secondFactorPage(page, challengeToken, empty, returnTo ?? '', 400)
      try {
        const deviceCookie = readCookie(page.jar, page.cookies.device)
        const proof = response === undefined ? { code } : { response }
        return await signedIn(deps, page, await loginWithSecondFactor(deps, { tenant: page.tenant, challengeToken, ...proof, deviceCookie }, page.actor), returnTo)
      } catch (error) {
        const { state, status, retryAfter } = problemOf(page.t, error, { invalid_code: { field: 'code', key: 'mfa.invalid' } })
        return secondFactorPage(page, challengeToken, state, returnTo ?? '', status, retryAfter)
      }
    })
