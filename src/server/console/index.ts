// The admin console (product spec §27) under /t/{tenant}/admin: a section per file, each a
// view over the admin API's domain functions (never a second source of rules), drawn like the
// pages (server-rendered, no JavaScript, CSP default-src 'none', form tokens, Origin checks).
// This file holds the door's own forms: proving the second factor to enter, and confirming it
// is you (step-up) before a change.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { reauthenticate, proveSecondFactorInSession } from '../../core/sign-in/step-up'
import { enterConsole } from '../../core/console/access'
import { tenantTitle } from '../../core/tenants/tenants'
import { clientActor } from '../plugins/client-ip'
import { readCookie } from '../pages/cookies'
import { formValue } from '../pages/forms'
import { html } from '../pages/html'
import { PAGE_PREFIX, type PageRequest } from '../pages/page'
import { missing, problemOf } from '../pages/problems'
import { confirmPage, consolePath, openConsole, openConsolePage, proveFactorPage, translatorFor } from './frame'
import { consoleGroups } from './groups'
import { consoleRules } from './rules'
import { consoleUsers } from './users'
import { consoleApplications } from './applications'
import { consoleProviders } from './providers'
import { consoleWebhooks } from './webhooks'
import { consoleAudit } from './audit'
import { consoleSettings } from './settings'

export const consolePages = (deps: Deps) =>
  new Elysia()
    .use(consoleDoor(deps))
    .use(consoleUsers(deps))
    .use(consoleGroups(deps))
    .use(consoleApplications(deps))
    .use(consoleRules(deps))
    .use(consoleProviders(deps))
    .use(consoleWebhooks(deps))
    .use(consoleAudit(deps))
    .use(consoleSettings(deps))

const consoleDoor = (deps: Deps) =>
  new Elysia({ prefix: `${PAGE_PREFIX}/admin` })
    .use(clientActor(deps.config.trustedProxies))
    .get('', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      const { c, page, caller } = open
      return open.render('home', c('console.title'), html`<p>${c('console.home.intro', { tenant: tenantTitle(page.tenant), email: caller.user.email })}</p>`)
    })
    // The second factor, proved in the session to enter (an admin who signed in with the password alone).
    .post('/factor', async (ctx: PageRequest) => {
      const page = await openConsolePage(deps, ctx, true)
      const home = `${page.base}/admin`
      const back = consolePath(home, formValue(ctx.body, 'return_to'))
      if (!page.caller) return page.redirect(`${page.base}/login?${new URLSearchParams({ return_to: back })}`)
      const entry = await enterConsole(deps, page.tenant, page.caller, page.actor)
      if (entry.kind !== 'prove_factor' || !entry.hasTotp) return page.redirect(back)
      const c = translatorFor(page.t.language)
      const code = formValue(ctx.body, 'code')
      const empty = missing(page.t, { code }, ['code'])
      if (empty) return proveFactorPage(page, c, back, true, empty, 400)
      try {
        await proveSecondFactorInSession(deps, page.caller, { code, deviceCookie: readCookie(page.jar, page.cookies.device) }, page.actor)
      } catch (error) {
        const { state, status, retryAfter } = problemOf(page.t, error, { invalid_credentials: { field: 'code', key: 'forwardAuth.factor.invalid' } })
        return proveFactorPage(page, c, back, true, state, status, retryAfter)
      }
      return page.redirect(back)
    })
    .post('/confirm', async (ctx: PageRequest) => confirm(deps, ctx, 'password'))
    .post('/confirm/code', async (ctx: PageRequest) => confirm(deps, ctx, 'code'))

/** Step-up for the console: the password or a TOTP code (reauthenticate, POST /reauthenticate's function), then back. */
async function confirm(deps: Deps, ctx: PageRequest, proof: 'password' | 'code') {
  const open = await openConsole(deps, ctx, true)
  if ('answer' in open) return open.answer
  const { page, caller } = open
  const back = consolePath(open.home, formValue(ctx.body, 'return_to'))
  const value = formValue(ctx.body, proof)
  const empty = missing(page.t, { [proof]: value }, [proof])
  if (empty) return confirmPage(open, back, { [proof]: empty }, 400)
  try {
    await reauthenticate(deps, caller, { [proof]: value, deviceCookie: readCookie(page.jar, page.cookies.device) }, page.actor)
  } catch (error) {
    const { state, status, retryAfter } = problemOf(page.t, error, { invalid_credentials: { field: proof, key: proof === 'password' ? 'account.stepUp.invalid' : 'account.stepUp.codeInvalid' } })
    return confirmPage(open, back, { [proof]: state }, status, retryAfter)
  }
  return page.redirect(back)
}
