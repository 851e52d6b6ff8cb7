// Signing in through an upstream provider (product spec §25): "Continue with {name}" sends the
// browser to the upstream with a state this browser's cookie also holds; the callback draws
// what core/federation decided: the session, the second factor, the local account to prove
// once (the login page, with the address filled in), or a page saying what went wrong, in
// the reader's language. And the account page's "Link" and "Unlink" of identities.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { finishUpstreamSignIn, startUpstreamSignIn, type FederationFailure, type FederationOutcome } from '../../core/federation/sign-in'
import { unlinkOwnIdentity } from '../../core/federation/own-identities'
import { UpstreamFailure } from '../../core/federation/upstream-failure'
import { FLOW_TTL_MS } from '../../core/federation/types'
import { tenantTitle } from '../../core/tenants/tenants'
import { clientActor } from '../plugins/client-ip'
import { oidcFormTargets } from '../oidc/form-targets'
import { accountPage, signedInPage } from './account-view'
import { clearCookie, readCookie, setCookie } from './cookies'
import { formValue } from './forms'
import { html } from './html'
import { loginPage, secondFactorPage, signedIn } from './login'
import { openPage, PAGE_PREFIX, type Page, type PageRequest } from './page'
import { problemOf } from './problems'
import { returnTarget } from './return-to'
import type { MessageKey } from './strings'

const FAILURES: Record<FederationFailure, MessageKey> = {
  refused: 'federation.failed.refused',
  unreachable: 'federation.failed.unreachable',
  failed: 'federation.failed.failed',
  mismatch: 'federation.failed.mismatch',
  invalid: 'federation.failed.invalid',
  expired: 'federation.failed.expired',
  'no-email': 'federation.failed.noEmail',
  'unverified-email': 'federation.failed.unverifiedEmail',
  'creation-closed': 'federation.failed.creationClosed',
  'user-disabled': 'federation.failed.userDisabled',
  'identity-taken': 'federation.failed.identityTaken',
  'not-signed-in': 'federation.failed.notSignedIn',
}

/** A failure the person can do nothing about here but start again (or another way). */
function failurePage(page: Page, outcome: Extract<FederationOutcome, { kind: 'failed' }>) {
  const { t } = page
  const provider = outcome.providerName ?? tenantTitle(page.tenant)
  // (the upstream's error code is shown as it sent it, escaped by the template, and cut short)
  const message = t(FAILURES[outcome.failure], { provider, error: (outcome.upstreamError ?? '').slice(0, 200) })
  const status = outcome.failure === 'unreachable' || outcome.failure === 'failed' ? 502 : outcome.failure === 'user-disabled' || outcome.failure === 'identity-taken' ? 403 : 400
  const back = outcome.failure === 'identity-taken' || outcome.failure === 'not-signed-in' ? `${page.base}/account` : `${page.base}/login`
  return page.render(t('federation.failed.title', { provider }), html`<p role="alert">${message}</p><p class="links"><a href="${back}">${t('federation.again')}</a></p>`, { status, referrerPolicy: 'no-referrer' })
}

/** The flow's state, for this browser only, while the sign-in is under way. */
function keepFlow(page: Page, state: string) {
  setCookie(page.jar, page.cookies, page.cookies.federation, state, FLOW_TTL_MS / 1000)
}

export const federationPages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    // "Continue with {name}": a link, so the browser's next stop (the upstream) needs no CSP
    // form target; it starts no session here, and whoever signs in at the upstream is who comes back.
    .get('/login/:providerId', async (ctx: PageRequest & { params: { providerId: string } }) => {
      const page = await openPage(deps, ctx)
      const target = returnTarget(page, ctx.query?.return_to ?? '')
      if (target === 'refused') return loginPage(page, { formError: page.t('login.returnTo.invalid', { tenant: tenantTitle(page.tenant) }) }, '', 400)
      try {
        // (?reauthenticate=1: the account page's "Confirm with {name}", a fresh sign-in at the upstream)
        const reauthenticate = ctx.query?.reauthenticate === '1'
        const { state, location } = await startUpstreamSignIn(deps, { tenant: page.tenant, providerId: ctx.params.providerId, returnTo: target, reauthenticate }, page.actor)
        keepFlow(page, state)
        return page.redirect(location)
      } catch (error) {
        if (!(error instanceof UpstreamFailure)) throw error
        const provider = page.providers.find((p) => p.id === ctx.params.providerId)
        return failurePage(page, { kind: 'failed', failure: error.kind, providerName: provider?.name ?? null, upstreamError: error.upstreamError })
      }
    })
    .get('/login/:providerId/callback', async (ctx: PageRequest & { params: { providerId: string } }) => {
      const page = await openPage(deps, ctx)
      const query = new URL(ctx.request.url).searchParams
      const outcome = await finishUpstreamSignIn(deps, { tenant: page.tenant, providerId: ctx.params.providerId, cookieState: readCookie(page.jar, page.cookies.federation), query, caller: page.caller }, page.actor)
      // The flow waits for the local account's proof in this browser; every other outcome ends it.
      if (outcome.kind !== 'prove') clearCookie(page.jar, page.cookies, page.cookies.federation)
      // A page drawn here (the second factor, the account to prove) has a form whose answer
      // redirects on to where the sign-in was going; the upstream's answer carries no return_to,
      // so openPage could not add an OpenID client's redirect URI to the CSP's form-action.
      if ((outcome.kind === 'second-factor' || outcome.kind === 'prove') && outcome.returnTo) page.returnOrigins.push(...(await oidcFormTargets(deps, page.tenant, page.origin, outcome.returnTo)))
      switch (outcome.kind) {
        case 'signed-in':
          return signedIn(deps, page, outcome.session, outcome.returnTo)
        case 'second-factor':
          return secondFactorPage(page, outcome.challenge.challengeToken, {}, outcome.returnTo ?? '', 200, undefined, outcome.challenge.passkeyOptions)
        case 'prove':
          page.linkFlow = outcome.flowId
          return loginPage(page, { notice: page.t('federation.prove.intro', { email: outcome.email, provider: outcome.providerName }), values: { email: outcome.email } }, outcome.returnTo ?? '')
        case 'linked':
          return page.redirect(`${page.base}/account?done=identity-linked`)
        case 'failed':
          return failurePage(page, outcome)
      }
    })
    // The account page: linking adds a way into the account, so it asks for a recent proof (§18),
    // and is a form (with the page's token): a link anyone could send would let an attacker who
    // signed the victim's browser in at the upstream attach the attacker's upstream account.
    .post('/account/identities/link', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx, true)
      if ('redirect' in open) return open.redirect
      const { page, caller } = open
      try {
        const { state, location } = await startUpstreamSignIn(deps, { tenant: page.tenant, providerId: formValue(ctx.body, 'providerId'), returnTo: null, link: caller }, page.actor)
        keepFlow(page, state)
        return page.redirect(location)
      } catch (error) {
        if (error instanceof UpstreamFailure) {
          const provider = page.providers.find((p) => p.id === formValue(ctx.body, 'providerId'))
          return failurePage(page, { kind: 'failed', failure: error.kind, providerName: provider?.name ?? null, upstreamError: error.upstreamError })
        }
        const { state, status } = problemOf(page.t, error, { step_up_required: { key: 'account.stepUp.intro' }, not_found: { key: 'identities.gone' } })
        return accountPage(deps, page, caller, { identities: state }, status)
      }
    })
    .post('/account/identities/unlink', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx, true)
      if ('redirect' in open) return open.redirect
      const { page, caller } = open
      try {
        await unlinkOwnIdentity(deps, caller, formValue(ctx.body, 'identityId'), page.actor)
      } catch (error) {
        const { state, status } = problemOf(page.t, error, { step_up_required: { key: 'account.stepUp.intro' }, not_found: { key: 'identities.gone' }, conflict: { key: 'identities.last' } })
        return accountPage(deps, page, caller, { identities: state }, status)
      }
      return page.redirect(`${page.base}/account?done=identity-unlinked`)
    })
