// The account page's step-up forms (drawn by step-up-view.ts): the current password, a TOTP
// code, or a passkey's credential (sent by the script). Each calls reauthenticate, the domain
// function of POST /reauthenticate: the same proofs, back-off and audit events.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { reauthenticate } from '../../core/sign-in/step-up'
import { clientActor } from '../plugins/client-ip'
import { accountPage, signedInPage } from './account-view'
import { readCookie } from './cookies'
import { formValue } from './forms'
import { PAGE_PREFIX, type PageRequest } from './page'
import { credentialOf } from './passkeys-view'
import { missing, problemOf, type ProblemPlaces } from './problems'

/** One way to prove who one is: the proof read from the form, its required field, where a refusal shows. */
interface ProofForm {
  proof: (body: unknown) => { password?: string; code?: string; challengeId?: string; response?: unknown }
  required: string[]
  places: ProblemPlaces
}

const PROOFS: Record<string, ProofForm> = {
  '/account/reauthenticate': {
    proof: (body) => ({ password: formValue(body, 'password') }),
    required: ['password'],
    places: { invalid_credentials: { field: 'password', key: 'account.stepUp.invalid' } },
  },
  '/account/reauthenticate/code': {
    proof: (body) => ({ code: formValue(body, 'code') }),
    required: ['code'],
    places: { invalid_credentials: { field: 'code', key: 'account.stepUp.codeInvalid' } },
  },
  // (no credential at all: the script could not run the ceremony, or the user cancelled it)
  '/account/reauthenticate/passkey': {
    proof: (body) => ({ challengeId: formValue(body, 'challengeId'), response: credentialOf(body) }),
    required: [],
    places: { invalid_credentials: { key: 'account.stepUp.passkeyFailed' }, invalid_request: { key: 'account.stepUp.passkeyFailed' } },
  },
}

export const stepUpPages = (deps: Deps) => {
  const app = new Elysia({ prefix: PAGE_PREFIX }).use(clientActor(deps.config.trustedProxies))
  for (const [path, { proof, required, places }] of Object.entries(PROOFS)) {
    app.post(path, async (ctx: PageRequest) => {
      const open = await signedInPage(deps, ctx, true)
      if ('redirect' in open) return open.redirect
      const { page, caller } = open
      const given = proof(ctx.body)
      const empty = missing(page.t, given as Record<string, string>, required)
      if (empty) return accountPage(deps, page, caller, { stepUp: empty }, 400)
      try {
        await reauthenticate(deps, caller, { ...given, deviceCookie: readCookie(page.jar, page.cookies.device) }, page.actor)
      } catch (error) {
        const { state, status, retryAfter } = problemOf(page.t, error, places)
        return accountPage(deps, page, caller, { stepUp: state }, status, retryAfter)
      }
      return page.redirect(`${page.base}/account?done=reauth`)
    })
  }
  return app
}
