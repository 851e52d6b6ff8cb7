// The account page's step-up as drawn (product spec §18): "confirm it is you" before a change
// to how the account is protected, with the current password, or a code of the user's
// authenticator app when they have TOTP, or one of their passkeys where the browser has
// WebAuthn (the script shows that button; without it the other forms remain).
import type { Deps } from '../../core/deps'
import { hasConfirmedTotp } from '../../core/mfa/factor'
import { listOwnPasskeys } from '../../core/passkeys/manage'
import type { Caller } from '../../core/sessions/signed-in-user'
import { field, form, type FormState } from './forms'
import { html } from './html'
import type { Page } from './page'
import { offersPasskeys, passkeysScript } from './passkeys-view'
import { listOwnIdentities } from '../../core/federation/own-identities'

export async function stepUpSection(deps: Deps, page: Page, caller: Caller, state: FormState) {
  const { t } = page
  const [totp, passkeys, identities] = await Promise.all([hasConfirmedTotp(deps, caller.user.id), listOwnPasskeys(deps, caller), listOwnIdentities(deps, caller)])
  const byCode =
    totp &&
    form(
      { action: `${page.base}/account/reauthenticate/code`, token: page.token, submit: t('account.stepUp.submitCode'), secondary: true },
      field({ name: 'code', label: t('account.stepUp.code'), autocomplete: 'one-time-code', inputmode: 'numeric' }, state),
    )
  // (the options are those of a passkey sign-in: any of the user's own passkeys proves them)
  const byPasskey =
    passkeys.length > 0 &&
    offersPasskeys(page) &&
    html`<form method="post" action="${page.base}/account/reauthenticate/passkey" data-passkey-reauthenticate data-options-url="${page.base}/login/passkey/options">
<input type="hidden" name="_form" value="${page.token}">
<button type="submit" class="secondary" hidden>${t('account.stepUp.passkey')}</button>
</form>
${passkeysScript(page)}`
  // (a user who signs in through a provider only has no password to enter)
  const byPassword =
    caller.user.passwordHash !== null &&
    form(
      { action: `${page.base}/account/reauthenticate`, token: page.token, submit: t('account.stepUp.submit') },
      field({ name: 'password', label: t('account.stepUp.password'), type: 'password', autocomplete: 'current-password' }, state),
    )
  return html`<h2>${t('account.stepUp.heading')}</h2><p>${t(byPassword ? 'account.stepUp.intro' : 'account.stepUp.introNoPassword')}</p>${byPassword}
${byCode && html`${byPassword && html`<p>${t('account.stepUp.orCode')}</p>`}${byCode}`}
${byPasskey}
${byUpstream(page, identities)}`
}

/** A user who signs in through a provider (perhaps without any password) proves it is them by
 *  signing in there again, freshly (prompt=login, max_age=0, its auth_time checked): the new
 *  session is the proof (core/federation). GitHub cannot be asked for a fresh sign-in, so it is
 *  no step-up. */
function byUpstream(page: Page, identities: Array<{ providerId: string }>) {
  const providers = page.providers.filter((provider) => provider.type !== 'github' && identities.some((identity) => identity.providerId === provider.id))
  if (providers.length === 0) return html``
  const query = new URLSearchParams({ return_to: `${page.origin}${page.base}/account`, reauthenticate: '1' })
  return html`<div class="providers">${providers.map((provider) => html`<a class="button secondary" href="${page.base}/login/${provider.id}?${query.toString()}">${page.t('account.stepUp.upstream', { provider: provider.name })}</a>`)}</div>`
}
