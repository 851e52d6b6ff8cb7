// The account page as drawn: the profile, the sessions (each with "End"), and the changes that
// need a recent proof of the user (password, two-step verification), behind the step-up form
// when the session's proof is older than the window. Its forms are handled in account.ts and
// two-factor.ts, which draw it again with their problems.
import type { Deps } from '../../core/deps'
import { groupsOfUser } from '../../core/groups/groups'
import { hasConfirmedTotp } from '../../core/mfa/factor'
import { listSessions, type Caller, type SessionView } from '../../core/sessions/signed-in-user'
import { hasRecentAuth } from '../../core/sessions/recent-auth'
import { field, form, problems, type FormState } from './forms'
import { html } from './html'
import { openPage, type Page, type PageRequest } from './page'
import { passkeysSection } from './passkeys-view'
import { listOwnIdentities } from '../../core/federation/own-identities'
import type { IdentityView } from '../../core/federation/identities'
import { stepUpSection } from './step-up-view'
import { formatMoment } from './strings'
import { describeUserAgent } from './user-agent'

export interface AccountState {
  notice?: string
  sessions?: FormState
  password?: FormState
  stepUp?: FormState
  totp?: FormState
  passkeys?: FormState
  identities?: FormState
}

function sessionItem(page: Page, lang: string, session: SessionView) {
  const { t } = page
  const agent = session.current ? t('account.session.current') : describeUserAgent(t, session.userAgent)
  const createdAt = formatMoment(lang, session.createdAt)
  const end = form({
    action: `${page.base}/account/sessions/end`,
    token: page.token,
    submit: t('account.session.end'),
    submitLabel: t('account.session.endLabel', { agent, createdAt }),
    hidden: { sessionId: session.sessionId },
    secondary: true,
  })
  // (the session of this browser ends with "Sign out")
  return html`<li><span>${agent}<span class="meta">${t('account.session.detail', { createdAt, ip: session.ip ?? '?' })}</span></span>${!session.current && end}</li>`
}

async function protectedChanges(deps: Deps, page: Page, caller: Caller, state: AccountState) {
  const { t } = page
  if (!hasRecentAuth(deps, caller)) return stepUpSection(deps, page, caller, state.stepUp ?? {})
  const totp = (await hasConfirmedTotp(deps, caller.user.id))
    ? html`<p>${t('totp.on')}</p><p>${t('totp.turnOff.intro')}</p>${form(
        { action: `${page.base}/account/totp/disable`, token: page.token, submit: t('totp.turnOff'), secondary: true },
        field({ name: 'code', label: t('field.code'), autocomplete: 'one-time-code' }, state.totp ?? {}),
      )}`
    : html`<p>${t('totp.off')}</p>${form({ action: `${page.base}/account/totp`, token: page.token, submit: t('totp.turnOn') })}`
  return html`<h2>${t('account.password')}</h2>
${form(
  { action: `${page.base}/account/password`, token: page.token, submit: t('account.password.submit') },
  field({ name: 'newPassword', label: t('field.newPassword'), type: 'password', autocomplete: 'new-password', hint: t('field.newPassword.hint', { min: deps.config.passwordMinLength }) }, state.password ?? {}),
)}
<h2>${t('totp.heading')}</h2>
${totp}
${await passkeysSection(deps, page, caller)}
${await identitiesSection(deps, page, caller)}`
}

/** Linked upstream accounts (core/federation): each with Unlink, and Link for each provider not linked yet. */
async function identitiesSection(deps: Deps, page: Page, caller: Caller) {
  const { t } = page
  if (page.providers.length === 0) return html``
  const lang = t('layout.language')
  const identities = await listOwnIdentities(deps, caller)
  const linked = new Set(identities.map((identity) => identity.providerId))
  const item = (identity: IdentityView) => {
    const detail = t('identities.detail', { linkedAt: formatMoment(lang, identity.linkedAt), lastUsedAt: identity.lastUsedAt ? formatMoment(lang, identity.lastUsedAt) : t('identities.neverUsed') })
    const unlink = form({
      action: `${page.base}/account/identities/unlink`,
      token: page.token,
      submit: t('identities.unlink'),
      submitLabel: t('identities.unlinkLabel', { provider: identity.providerName, email: identity.email ?? identity.subject }),
      hidden: { identityId: identity.identityId },
      secondary: true,
    })
    return html`<li><span>${identity.providerName}${identity.email && html` · ${identity.email}`}<span class="meta">${detail}</span></span>${unlink}</li>`
  }
  const links = page.providers
    .filter((provider) => !linked.has(provider.id))
    .map((provider) => form({ action: `${page.base}/account/identities/link`, token: page.token, submit: t('identities.link', { provider: provider.name }), hidden: { providerId: provider.id }, secondary: true }))
  return html`<h2>${t('identities.heading')}</h2>
${identities.length > 0 ? html`<ul class="sessions">${identities.map(item)}</ul>` : html`<p>${t('identities.none')}</p>`}
${links}`
}

/** The problems of whichever of the page's forms was sent (one at a time), for the summary. */
function formProblems(state: AccountState): FormState {
  const sent = [state.sessions, state.password, state.stepUp, state.totp, state.passkeys, state.identities].find((form) => form !== undefined)
  return sent ?? {}
}

export async function accountPage(deps: Deps, page: Page, caller: Caller, state: AccountState, status = 200, retryAfter?: number) {
  const { t } = page
  const lang = t('layout.language')
  const sessions = await listSessions(deps, caller.user.id, caller.sessionId)
  const groups = await groupsOfUser(deps, caller.user.id)
  const main = html`${state.notice && html`<p class="notice" role="status">${state.notice}</p>`}
${problems(t, formProblems(state))}
<h2>${t('account.profile')}</h2>
<dl><dt>${t('account.name')}</dt><dd>${caller.user.firstName} ${caller.user.lastName}</dd><dt>${t('account.email')}</dt><dd>${caller.user.email}</dd></dl>
${groups.length > 0 && html`<h2>${t('account.groups')}</h2>
<ul class="groups">${groups.map((group) => html`<li>${group.name}${group.description && html`<span class="meta">${group.description}</span>`}</li>`)}</ul>`}
<h2>${t('account.sessions')}</h2>
<ul class="sessions">${sessions.map((session) => sessionItem(page, lang, session))}</ul>
${form({ action: `${page.base}/account/logout-all`, token: page.token, submit: t('account.endAll'), secondary: true })}
${await protectedChanges(deps, page, caller, state)}
<p class="links"><a href="${page.base}/account/apps">${t('oidc.apps.title')}</a> · <a href="${page.base}/logout">${t('account.signOut')}</a></p>`
  return page.render(t('account.title'), main, { status, retryAfter })
}

/** The page for the signed-in user, or (signed out) the way to the login page. */
export async function signedInPage(deps: Deps, ctx: PageRequest, form = false): Promise<{ page: Page; caller: Caller } | { redirect: string }> {
  const page = await openPage(deps, ctx, form)
  if (!page.caller) return { redirect: page.redirect(`${page.base}/login`) }
  return { page, caller: page.caller }
}
