// /t/{tenant}/account (drawn by account-view.ts): the sessions (each with "End", and "Sign out
// everywhere") and the password (the step-up forms: step-up.ts). Each form calls the domain
// function of its API twin: endSession (DELETE /sessions/{id}), endAllSessions
// (/logout-all), changePasswordInSession (/me/password).
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { changePasswordInSession, endAllSessions, endSession } from '../../core/sessions/signed-in-user'
import { clientActor } from '../plugins/client-ip'
import { accountPage, signedInPage } from './account-view'
import { clearCookie } from './cookies'
import { formValue } from './forms'
import { PAGE_PREFIX, type PageRequest } from './page'
import { missing, problemOf } from './problems'
import { noticeOf, type MessageKey } from './strings'

/** Notices a redirect to the account page may ask for (`?done=`). */
const DONE: Record<string, MessageKey> = {
  password: 'account.password.changed',
  session: 'account.session.ended',
  reauth: 'account.stepUp.done',
  'totp-off': 'totp.turnedOff',
  'passkey-added': 'passkeys.added',
  'passkey-renamed': 'passkeys.renamed',
  'passkey-removed': 'passkeys.removed',
  'identity-linked': 'identities.linkedNotice',
  'identity-unlinked': 'identities.unlinked',
}

export const accountPages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/account', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx)
      if ('redirect' in open) return open.redirect
      const done = noticeOf(DONE, ctx.query?.done)
      return accountPage(deps, open.page, open.caller, { notice: done && open.page.t(done) })
    })
    .post('/account/sessions/end', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx, true)
      if ('redirect' in open) return open.redirect
      const { page, caller } = open
      try {
        await endSession(deps, caller.user.id, formValue(ctx.body, 'sessionId'), page.actor)
      } catch (error) {
        const { state, status } = problemOf(page.t, error, { not_found: { key: 'account.session.gone' } })
        return accountPage(deps, page, caller, { sessions: state }, status)
      }
      return page.redirect(`${page.base}/account?done=session`)
    })
    .post('/account/logout-all', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx, true)
      if ('redirect' in open) return open.redirect
      await endAllSessions(deps, open.caller, open.page.actor)
      clearCookie(open.page.jar, open.page.cookies, open.page.cookies.session)
      return open.page.redirect(`${open.page.base}/login?done=logout`)
    })
    .post('/account/password', async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx, true)
      if ('redirect' in open) return open.redirect
      const { page, caller } = open
      const newPassword = formValue(ctx.body, 'newPassword')
      const empty = missing(page.t, { newPassword }, ['newPassword'])
      if (empty) return accountPage(deps, page, caller, { password: empty }, 400)
      try {
        await changePasswordInSession(deps, caller, newPassword, page.actor)
      } catch (error) {
        // (step-up lapsed between the page and the form: the page now shows the proof's form)
        const { state, status } = problemOf(page.t, error, { step_up_required: { key: 'account.stepUp.intro' } }, 'newPassword')
        return accountPage(deps, page, caller, { password: state }, status)
      }
      return page.redirect(`${page.base}/account?done=password`)
    })
