// /t/{tenant}/device: where a person signs a device in (RFC 8628, product spec §26). Signed in
// first (the login page, return_to back here with the code), the person types the code the
// device shows (or finds it filled in from verification_uri_complete), sees the client and the
// scopes, and approves or denies. A code in the URL is only filled in, never looked up or
// approved by following a link. Every look-up of a code counts against the client IP's and the
// account's guesses (core/oidc/device.ts findByUserCode). A person the client does not admit
// is told so, with the sign-out form to come back as someone else. No JavaScript.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { decideDevice, findByUserCode, formatUserCode, userCodeKey, type DeviceLookup } from '../../core/oidc/device'
import { tenantTitle } from '../../core/tenants/tenants'
import { clientActor } from '../plugins/client-ip'
import type { Caller } from '../../core/sessions/signed-in-user'
import { field, form, formValue, notice, problems, type FormState } from './forms'
import { html } from './html'
import { openPage, PAGE_PREFIX, type Page, type PageRequest } from './page'
import { problemOf } from './problems'
import type { MessageKey } from './strings'

/** The user code as the form carries it (at most a few characters more than one: anything longer is no code). */
const typedCode = (raw: string | undefined) => (raw ?? '').trim().slice(0, 20)

function codePage(page: Page, state: FormState, status = 200, retryAfter?: number) {
  const { t } = page
  const main = html`${problems(t, state)}${notice(state)}<p>${t('device.intro', { tenant: tenantTitle(page.tenant) })}</p>
${form(
  { action: `${page.base}/device`, token: page.token, submit: t('device.continue') },
  field({ name: 'user_code', label: t('device.code'), hint: t('device.code.hint'), autocomplete: 'off', keepValue: true }, state),
)}`
  return page.render(t('device.title'), main, { status, retryAfter })
}

function confirmPage(page: Page, found: Extract<DeviceLookup, { status: 'pending' }>, code: string) {
  const { t } = page
  const client = found.client.name
  const main = html`<p>${t('device.confirm.intro', { code, client, tenant: tenantTitle(page.tenant) })}</p>
<ul>${found.scopes.map((scope) => html`<li>${t(`oidc.scope.${scope}` as MessageKey)}</li>`)}</ul>
<p><strong>${t('device.confirm.warning')}</strong></p>
<form method="post" action="${page.base}/device/decide" novalidate>
<input type="hidden" name="_form" value="${page.token}">
<input type="hidden" name="user_code" value="${code}">
<button type="submit" name="decision" value="approve">${t('device.approve')}</button>
<button type="submit" name="decision" value="deny" class="secondary">${t('device.deny')}</button>
</form>`
  return page.render(t('device.confirm.title', { client }), main)
}

/** This page again with the code filled in (not looked up). */
const withCode = (page: Page, code: string) => `${page.base}/device${code ? `?${new URLSearchParams({ user_code: code })}` : ''}`

/** The login page, coming back here with the code. */
function signInFirst(page: Page, code: string) {
  return page.redirect(`${page.base}/login?${new URLSearchParams({ return_to: withCode(page, code) })}`)
}

/**
 * A person the client does not admit by its allowed groups (product spec §23): told so, and
 * offered what the authorization endpoint's no-access page offers, the sign-out form (a POST
 * with the form token) that comes back here after the next sign-in, the code filled in.
 */
function refusedPage(page: Page, client: string, code: string) {
  const { t } = page
  const main = html`${problems(t, { formError: t('device.refused', { client }) })}
${form({ action: `${page.base}/logout`, token: page.token, submit: t('oidc.denied.switch'), hidden: { return_to: withCode(page, code) } })}`
  return page.render(t('oidc.denied.title', { client }), main, { status: 403 })
}

/** The code looked up (one guess), or the code form again with why not. */
async function lookUp(deps: Deps, page: Page, caller: Caller, code: string): Promise<{ found: Extract<DeviceLookup, { status: 'pending' }> } | { answer: string }> {
  const values = { user_code: code }
  let found: DeviceLookup
  try {
    found = await findByUserCode(deps, page.tenant, code, caller, page.actor)
  } catch (error) {
    const { state, status, retryAfter } = problemOf(page.t, error, {})
    return { answer: codePage(page, { ...state, values }, status, retryAfter) }
  }
  if (found.status === 'unknown') return { answer: codePage(page, { values, errors: { user_code: page.t('device.unknown') } }, 400) }
  if (found.status === 'used') return { answer: codePage(page, { formError: page.t('device.used') }, 400) }
  if (found.status === 'refused') return { answer: refusedPage(page, found.client.name, formatUserCode(userCodeKey(code)!)) }
  return { found }
}

export const devicePages = (deps: Deps) =>
  new Elysia({ prefix: PAGE_PREFIX })
    .use(clientActor(deps.config.trustedProxies))
    .get('/device', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx)
      const code = typedCode(ctx.query?.user_code)
      if (!page.caller) return signInFirst(page, code)
      return codePage(page, { values: { user_code: code } })
    })
    .post('/device', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      const code = typedCode(formValue(ctx.body, 'user_code'))
      if (!page.caller) return signInFirst(page, code)
      if (code === '') return codePage(page, { errors: { user_code: page.t('field.required') } }, 400)
      const looked = await lookUp(deps, page, page.caller, code)
      if ('answer' in looked) return looked.answer
      return confirmPage(page, looked.found, formatUserCode(userCodeKey(code)!))
    })
    .post('/device/decide', async (ctx: PageRequest) => {
      const page = await openPage(deps, ctx, true)
      const code = typedCode(formValue(ctx.body, 'user_code'))
      if (!page.caller) return signInFirst(page, code)
      const looked = await lookUp(deps, page, page.caller, code)
      if ('answer' in looked) return looked.answer
      const decision = formValue(ctx.body, 'decision') === 'approve' ? 'approve' : 'deny'
      const outcome = await decideDevice(deps, page.tenant, looked.found, page.caller, decision, page.actor)
      if (outcome === 'used') return codePage(page, { formError: page.t('device.used') }, 400)
      if (outcome === 'refused') return refusedPage(page, looked.found.client.name, formatUserCode(userCodeKey(code)!))
      return codePage(page, { notice: page.t(outcome === 'approved' ? 'device.approved' : 'device.denied') })
    })
