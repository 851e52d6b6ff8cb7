// Two-step verification on the account page: turning TOTP on (the key as a QR code drawn by
// authd, and as text; the first code confirms it and shows the recovery codes, once; until
// then, a link back to the account page leaves it off) and off
// (with a code). The domain functions of POST /mfa/totp, /mfa/totp/confirm and DELETE
// /mfa/totp: the same step-up, back-off, audit events and mails.
import { Elysia } from 'elysia'
import QRCode from 'qrcode'
import type { Deps } from '../../core/deps'
import { confirmTotpEnrolment, disableTotp, startTotpEnrolment } from '../../core/mfa/enrolment'
import type { Caller } from '../../core/sessions/signed-in-user'
import { clientActor } from '../plugins/client-ip'
import { accountPage, signedInPage } from './account-view'
import { readCookie } from './cookies'
import { field, form, formValue, problems, type FormState } from './forms'
import { html, unsafeRaw } from './html'
import { PAGE_PREFIX, type Page, type PageRequest } from './page'
import { missing, problemOf } from './problems'

/** The QR code of the otpauth:// URL as SVG markup: path data only, no text of the URL in it. */
const qrSvg = (otpauthUrl: string) => QRCode.toString(otpauthUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })

/** @param enrolment the key, on the first drawing only: the domain never shows it again */
async function setupPage(page: Page, state: FormState, enrolment?: { secret: string; otpauthUrl: string }, status = 200, retryAfter?: number) {
  const { t } = page
  const key = enrolment &&
    html`<p>${t('totp.setup.scan')}</p>
<div class="qr" role="img" aria-label="${t('totp.setup.qr')}">${unsafeRaw(await qrSvg(enrolment.otpauthUrl))}</div>
<p>${t('totp.setup.key')}: <code>${enrolment.secret.replace(/(.{4})(?=.)/g, '$1 ')}</code></p>`
  const main = html`${problems(t, state)}${key}
${form(
  { action: `${page.base}/account/totp/confirm`, token: page.token, submit: t('totp.setup.submit') },
  field({ name: 'code', label: t('field.code'), autocomplete: 'one-time-code', inputmode: 'numeric' }, state),
)}
${!enrolment && form({ action: `${page.base}/account/totp`, token: page.token, submit: t('totp.setup.again'), secondary: true })}
<p class="links"><a href="${page.base}/account">${t('totp.setup.cancel')}</a></p>`
  return page.render(t('totp.setup.title'), main, { status, retryAfter })
}

function recoveryCodesPage(page: Page, codes: string[]) {
  const { t } = page
  const main = html`<p>${t('totp.codes.intro')}</p>
<ul class="codes">${codes.map((code) => html`<li><code>${code}</code></li>`)}</ul>
<p class="links"><a href="${page.base}/account">${t('totp.codes.continue')}</a></p>`
  return page.render(t('totp.codes.title'), main)
}

/** A form of the account page whose error belongs on the account page. */
type Handler = (page: Page, caller: Caller, body: unknown) => Promise<string>
const signedIn = (deps: Deps, handle: Handler) => async (ctx: PageRequest) => {
  const open = await signedInPage(deps, ctx, true)
  return 'redirect' in open ? open.redirect : handle(open.page, open.caller, ctx.body)
}

export const twoFactorPages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .post(
      '/account/totp',
      signedIn(deps, async (page, caller) => {
        try {
          return await setupPage(page, {}, await startTotpEnrolment(deps, caller, page.actor))
        } catch (error) {
          const { state, status } = problemOf(page.t, error, { step_up_required: { key: 'account.stepUp.intro' }, conflict: { key: 'totp.alreadyOn' } })
          return accountPage(deps, page, caller, { totp: state }, status)
        }
      }),
    )
    .post(
      '/account/totp/confirm',
      signedIn(deps, async (page, caller, body) => {
        const code = formValue(body, 'code')
        const empty = missing(page.t, { code }, ['code'])
        if (empty) return setupPage(page, empty, undefined, 400)
        try {
          const { recoveryCodes } = await confirmTotpEnrolment(deps, caller, code, page.actor, readCookie(page.jar, page.cookies.device))
          return recoveryCodesPage(page, recoveryCodes)
        } catch (error) {
          const { state, status, retryAfter } = problemOf(page.t, error, {
            invalid_code: { field: 'code', key: 'totp.setup.invalid' },
            invalid_request: { key: 'totp.setup.gone' },
            conflict: { key: 'totp.alreadyOn' },
          })
          return setupPage(page, state, undefined, status, retryAfter)
        }
      }),
    )
    .post(
      '/account/totp/disable',
      signedIn(deps, async (page, caller, body) => {
        const code = formValue(body, 'code')
        const empty = missing(page.t, { code }, ['code'])
        if (empty) return accountPage(deps, page, caller, { totp: empty }, 400)
        try {
          await disableTotp(deps, caller, code, page.actor, readCookie(page.jar, page.cookies.device))
        } catch (error) {
          const { state, status, retryAfter } = problemOf(page.t, error, {
            invalid_code: { field: 'code', key: 'totp.invalid' },
            step_up_required: { key: 'account.stepUp.intro' },
            invalid_request: { key: 'totp.turnedOff' },
          })
          return accountPage(deps, page, caller, { totp: state }, status, retryAfter)
        }
        return page.redirect(`${page.base}/account?done=totp-off`)
      }),
    )
