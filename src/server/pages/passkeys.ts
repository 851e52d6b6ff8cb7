// Passkeys on the pages, where the browser has them (assets/passkeys-script.ts): the script
// itself, and the account page's passkeys: added (options, then the credential), renamed and
// removed, through the domain functions of POST /passkeys/register/options, /register,
// PATCH and DELETE /passkeys/{id}. (Signing in with one is on the login page: login.ts.)
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { removeOwnPasskey, renameOwnPasskey } from '../../core/passkeys/manage'
import { finishPasskeyRegistration, startPasskeyRegistration } from '../../core/passkeys/registration'
import type { Caller } from '../../core/sessions/signed-in-user'
import { clientActor } from '../plugins/client-ip'
import { accountPage, signedInPage } from './account-view'
import { PASSKEYS_SCRIPT } from './assets/passkeys-script'
import { formValue } from './forms'
import { PAGE_PREFIX, type Page, type PageRequest } from './page'
import { credentialOf } from './passkeys-view'
import { problemOf } from './problems'

type Handler = (page: Page, caller: Caller, body: unknown) => Promise<unknown>
const signedIn = (deps: Deps, handle: Handler) => async (ctx: PageRequest) => {
  const open = await signedInPage(deps, ctx, true)
  return 'redirect' in open ? open.redirect : handle(open.page, open.caller, ctx.body)
}

export const passkeyPages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/passkeys.js', ({ set }) => {
      set.headers['content-type'] = 'text/javascript; charset=utf-8'
      set.headers['cache-control'] = 'public, max-age=300'
      set.headers['x-content-type-options'] = 'nosniff'
      return PASSKEYS_SCRIPT
    })
    // (JSON for the script; the form's token and Origin are checked as for any form)
    .post('/account/passkeys/options', signedIn(deps, (_, caller) => startPasskeyRegistration(deps, caller)))
    .post(
      '/account/passkeys',
      signedIn(deps, async (page, caller, body) => {
        try {
          await finishPasskeyRegistration(deps, caller, { challengeId: formValue(body, 'challengeId'), response: credentialOf(body) }, page.actor)
        } catch (error) {
          const { state, status } = problemOf(page.t, error, { invalid_request: { key: 'passkeys.failed' }, conflict: { key: 'passkeys.tooMany' }, step_up_required: { key: 'account.stepUp.intro' } })
          return accountPage(deps, page, caller, { passkeys: state }, status)
        }
        return page.redirect(`${page.base}/account?done=passkey-added`)
      }),
    )
    .post(
      '/account/passkeys/rename',
      signedIn(deps, async (page, caller, body) => {
        try {
          await renameOwnPasskey(deps, caller, formValue(body, 'passkeyId'), formValue(body, 'name'), page.actor)
        } catch (error) {
          const { state, status } = problemOf(page.t, error, { invalid_request: { key: 'passkeys.badName' }, not_found: { key: 'passkeys.gone' } })
          return accountPage(deps, page, caller, { passkeys: state }, status)
        }
        return page.redirect(`${page.base}/account?done=passkey-renamed`)
      }),
    )
    .post(
      '/account/passkeys/remove',
      signedIn(deps, async (page, caller, body) => {
        try {
          await removeOwnPasskey(deps, caller, formValue(body, 'passkeyId'), page.actor)
        } catch (error) {
          const { state, status } = problemOf(page.t, error, { not_found: { key: 'passkeys.gone' }, step_up_required: { key: 'account.stepUp.intro' } })
          return accountPage(deps, page, caller, { passkeys: state }, status)
        }
        return page.redirect(`${page.base}/account?done=passkey-removed`)
      }),
    )
