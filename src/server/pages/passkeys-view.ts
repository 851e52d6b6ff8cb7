// The pages' passkeys as drawn: the account page's section (each passkey with rename and
// remove, and the button that adds one), the script tag, and a credential as the script sends it.
import type { Deps } from '../../core/deps'
import { listOwnPasskeys } from '../../core/passkeys/manage'
import { passkeysPossible } from '../../core/tenants/relying-party'
import type { Caller } from '../../core/sessions/signed-in-user'
import { formValue } from './forms'
import { html } from './html'
import type { Page } from './page'
import { formatMoment } from './strings'

/** A credential as the script sends it (JSON text); anything else is none, which the domain refuses. */
export function credentialOf(body: unknown): unknown {
  try {
    return JSON.parse(formValue(body, 'response'))
  } catch {
    return undefined
  }
}

/** Whether this page offers passkeys: not where the tenant's RP ID is an IP address, where
 *  browsers refuse every ceremony (the operator learns why from the log and `authd doctor`). */
export const offersPasskeys = (page: Page) => passkeysPossible({ publicUrl: page.origin }, page.tenant)

/** The page's script, for the forms that passkeys enhance. */
export const passkeysScript = (page: Page) => html`<script src="${page.base}/passkeys.js" nonce="${page.nonce}"></script>`

/** The account page's passkeys: each with rename and remove, and the button that adds one
 *  (where the page offers passkeys at all). */
export async function passkeysSection(deps: Deps, page: Page, caller: Caller) {
  const { t } = page
  const lang = t('layout.language')
  const passkeys = await listOwnPasskeys(deps, caller)
  const item = (passkey: (typeof passkeys)[number]) => {
    const id = `f-passkey-${passkey.passkeyId}`
    return html`<li><span>${passkey.name}<span class="meta">${t('passkeys.detail', { createdAt: formatMoment(lang, passkey.createdAt, false), lastUsedAt: passkey.lastUsedAt === null ? t('passkeys.neverUsed') : formatMoment(lang, passkey.lastUsedAt, false) })}</span></span>
<span class="actions"><form method="post" action="${page.base}/account/passkeys/rename" novalidate><input type="hidden" name="_form" value="${page.token}"><input type="hidden" name="passkeyId" value="${passkey.passkeyId}"><label class="visually-hidden" for="${id}">${t('passkeys.name', { name: passkey.name })}</label><input id="${id}" name="name" type="text" required value="${passkey.name}"><button type="submit" class="secondary" aria-label="${t('passkeys.renameLabel', { name: passkey.name })}">${t('passkeys.rename')}</button></form>
<form method="post" action="${page.base}/account/passkeys/remove" novalidate><input type="hidden" name="_form" value="${page.token}"><input type="hidden" name="passkeyId" value="${passkey.passkeyId}"><button type="submit" class="secondary" aria-label="${t('passkeys.removeLabel', { name: passkey.name })}">${t('passkeys.remove')}</button></form></span></li>`
  }
  // (passkeys of an earlier, usable RP ID can still be renamed and removed)
  if (!offersPasskeys(page)) return passkeys.length > 0 && html`<h2>${t('passkeys.heading')}</h2><ul class="sessions">${passkeys.map(item)}</ul>`
  return html`<h2>${t('passkeys.heading')}</h2>
<p>${t('passkeys.intro')}</p>
${passkeys.length === 0 ? html`<p>${t('passkeys.none')}</p>` : html`<ul class="sessions">${passkeys.map(item)}</ul>`}
<form method="post" action="${page.base}/account/passkeys" data-passkey-register data-options-url="${page.base}/account/passkeys/options" novalidate>
<input type="hidden" name="_form" value="${page.token}">
<button type="submit" hidden>${t('passkeys.add')}</button>
</form>
<p data-passkey-unsupported>${t('passkeys.unsupported')}</p>
${passkeysScript(page)}`
}
