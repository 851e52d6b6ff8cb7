// The console's users (product spec §27): search by address and page through; create with an
// invitation; a user's profile, groups, sessions, second factor, passkeys and linked identities;
// disable, enable, end sessions, reset the second factor, invite again, remove a passkey, unlink
// an identity, delete with the address typed. Each action is its admin API twin's function
// (POST/PATCH/DELETE /api/v1/admin/users…) with the console's actor: same rules, same audit.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { AppError } from '../../core/errors'
import { createUser, deleteUser, listUsers, updateUser, viewUser, type UserView } from '../../core/accounts/users'
import { inviteUser } from '../../core/accounts/setup-password'
import { listIdentities, unlinkIdentity } from '../../core/federation/identities'
import { hasConfirmedTotp } from '../../core/mfa/factor'
import { resetMfa } from '../../core/mfa/enrolment'
import { deleteUserPasskey, listUserPasskeys } from '../../core/passkeys/manage'
import { listUserSessions, revokeUserSessions } from '../../core/sessions/sessions'
import { USER_TYPES } from '../../core/types'
import { clientActor } from '../plugins/client-ip'
import { field, form, formValue, notice, problems, type FormState } from '../pages/forms'
import { html, type SafeHtml } from '../pages/html'
import { PAGE_PREFIX, type PageRequest } from '../pages/page'
import { formatMoment } from '../pages/strings'
import { describeUserAgent } from '../pages/user-agent'
import { consoleChange, consoleProblem, openConsole, type Console } from './frame'
import type { ConsoleKey } from './strings/en'

const PAGE_SIZE = 50

/** Notices a redirect back to a user's page may ask for (`?done=`): only these names count. */
const DONE: Record<string, ConsoleKey> = {
  created: 'console.users.created.notice',
  disabled: 'console.user.disabled.notice',
  enabled: 'console.user.enabled.notice',
  sessions: 'console.user.sessions.ended',
  mfa: 'console.user.totp.wasReset',
  invited: 'console.user.invited.notice',
  passkey: 'console.user.passkeys.removed',
  identity: 'console.user.identities.unlinked',
  deleted: 'console.user.deleted.notice',
}
const doneOf = (console: Console, raw: string | undefined, values: Record<string, string> = {}) => (raw !== undefined && Object.hasOwn(DONE, raw) ? console.c(DONE[raw]!, values) : undefined)

const yesNo = (console: Console, value: boolean) => console.c(value ? 'console.yes' : 'console.no')

/** A select of the user types (the pages' forms have no select of their own). */
function typeSelect(console: Console, selected = 'user'): SafeHtml {
  return html`<div class="field"><label for="f-type">${console.c('console.users.type')}</label>
<select id="f-type" name="type">${USER_TYPES.map((type) => html`<option value="${type}"${type === selected ? ' selected' : ''}>${type}</option>`)}</select></div>`
}

async function usersPage(deps: Deps, console: Console, query: { email?: string; cursor?: string; done?: string }, state: FormState = {}, status = 200): Promise<string> {
  const { c, page } = console
  const email = query.email?.trim() || undefined
  let listed: Awaited<ReturnType<typeof listUsers>> = { items: [], nextCursor: null }
  let searchError: string | undefined
  try {
    listed = await listUsers(deps, page.tenant.id, { email, cursor: query.cursor || undefined, limit: PAGE_SIZE }, console.actor)
  } catch (error) {
    // (an address that is no address, a cursor this server never wrote: said, not a 500)
    if (!(error instanceof AppError) || error.status !== 400) throw error
    searchError = error.message
  }
  const rows = listed.items.map(
    (user) => html`<tr><td><a href="${console.home}/users/${user.userId}">${user.email}</a></td><td>${user.firstName} ${user.lastName}</td><td>${user.type}</td><td>${yesNo(console, user.emailVerifiedAt !== null)}</td><td>${c(user.disabled ? 'console.users.disabled' : 'console.users.active')}</td><td>${formatMoment(page.t.language, user.createdAt, false)}</td></tr>`,
  )
  const next = listed.nextCursor && `${console.home}/users?${new URLSearchParams({ ...(email && { email }), cursor: listed.nextCursor })}`
  const main = html`${notice({ notice: doneOf(console, query.done) })}
<form method="get" action="${console.home}/users" role="search">
<div class="field"><label for="f-email-search">${c('console.users.search')}</label>
${searchError && html`<p class="error" id="f-email-search-error">${searchError}</p>`}
<input id="f-email-search" name="email" type="search" value="${email ?? ''}"${searchError && html` aria-invalid="true" aria-describedby="f-email-search-error"`}></div>
<button type="submit" class="secondary">${c('console.users.searchButton')}</button>
</form>
${rows.length === 0 ? html`<p>${c('console.users.none')}</p>` : html`<table><thead><tr><th scope="col">${c('console.users.email')}</th><th scope="col">${c('console.users.name')}</th><th scope="col">${c('console.users.type')}</th><th scope="col">${c('console.users.verified')}</th><th scope="col">${c('console.users.status')}</th><th scope="col">${c('console.users.created')}</th></tr></thead><tbody>${rows}</tbody></table>`}
<p class="links">${query.cursor && html`<a href="${console.home}/users${email ? `?${new URLSearchParams({ email })}` : ''}">${c('console.first')}</a> `}${next && html`<a href="${next}" rel="next">${c('console.next')}</a>`}</p>
<h2 id="create">${c('console.users.create')}</h2>
<p>${c('console.users.create.intro')}</p>
${problems(page.t, state)}
${form(
  { action: `${console.home}/users`, token: page.token, submit: c('console.users.createButton') },
  field({ name: 'email', label: page.t('field.email'), type: 'email', autocomplete: 'off', keepValue: true }, state),
  field({ name: 'firstName', label: c('console.users.firstName'), autocomplete: 'off', keepValue: true }, state),
  field({ name: 'lastName', label: c('console.users.lastName'), autocomplete: 'off', keepValue: true }, state),
  typeSelect(console, state.values?.type),
)}`
  return console.render('users', c('console.section.users'), main, { status })
}

async function userPage(deps: Deps, console: Console, userId: string, done?: string, state: Record<string, FormState> = {}, status = 200): Promise<string> {
  const { c, page } = console
  const user: UserView = await viewUser(deps, userId, console.actor)
  // (one after the other: each read writes its audit row, and the log reads in the order the page did)
  const sessions = await listUserSessions(deps, userId, console.actor)
  const passkeys = await listUserPasskeys(deps, userId, console.actor)
  const identities = await listIdentities(deps, userId, console.actor)
  const totp = await hasConfirmedTotp(deps, userId)
  const base = `${console.home}/users/${user.userId}`
  const action = (path: string, label: string, secondary = true, hidden: Record<string, string> = {}) => form({ action: `${base}/${path}`, token: page.token, submit: label, secondary, hidden })
  const lang = page.t.language
  const main = html`${notice({ notice: doneOf(console, done) })}
<h2>${c('console.user.profile')}</h2>
<dl><dt>${c('console.users.email')}</dt><dd>${user.email}</dd><dt>${c('console.users.name')}</dt><dd>${user.firstName} ${user.lastName}</dd><dt>${c('console.users.type')}</dt><dd>${user.type}</dd><dt>${c('console.users.verified')}</dt><dd>${yesNo(console, user.emailVerifiedAt !== null)}</dd><dt>${c('console.users.status')}</dt><dd>${c(user.disabled ? 'console.users.disabled' : 'console.users.active')}</dd><dt>${c('console.users.created')}</dt><dd>${formatMoment(lang, user.createdAt)}</dd></dl>
${problems(page.t, state.actions ?? {})}
${user.disabled ? action('enable', c('console.user.enable'), false) : action('disable', c('console.user.disable'))}
${!user.hasPassword && user.type !== 'tenant' && !user.disabled && action('invite', c('console.user.invite'))}
<h2>${c('console.user.groups')}</h2>
<p>${user.groups.length === 0 ? c('console.none') : user.groups.join(', ')}</p>
<h2>${c('console.user.sessions')}</h2>
${sessions.length === 0 ? html`<p>${c('console.user.sessions.none')}</p>` : html`<ul class="sessions">${sessions.map((s) => html`<li><span>${describeUserAgent(page.t, s.userAgent)}<span class="meta">${s.ip ?? ''} · ${formatMoment(lang, s.lastUsedAt)}</span></span></li>`)}</ul>${action('sessions/end', c('console.user.sessions.end'))}`}
<h2>${c('console.user.factors')}</h2>
<p>${c('console.user.totp')}: ${yesNo(console, totp)}</p>
${totp && action('mfa/reset', c('console.user.totp.reset'))}
<h3>${c('console.user.passkeys')}</h3>
${passkeys.length === 0 ? html`<p>${c('console.user.passkeys.none')}</p>` : html`<ul class="sessions">${passkeys.map((p) => html`<li><span>${p.name}<span class="meta">${p.authenticator ?? p.deviceType} · ${formatMoment(lang, p.createdAt)}</span></span>${form({ action: `${base}/passkeys/${p.passkeyId}/remove`, token: page.token, submit: c('console.user.passkeys.remove'), secondary: true, submitLabel: `${c('console.user.passkeys.remove')} ${p.name}` })}</li>`)}</ul>`}
<h2>${c('console.user.identities')}</h2>
${problems(page.t, state.identities ?? {})}
${identities.length === 0 ? html`<p>${c('console.user.identities.none')}</p>` : html`<ul class="sessions">${identities.map((i) => html`<li><span>${i.providerName}<span class="meta">${i.email ?? i.subject} · ${formatMoment(lang, i.linkedAt)}</span></span>${form({ action: `${base}/identities/${i.identityId}/unlink`, token: page.token, submit: c('console.user.identities.unlink'), secondary: true, submitLabel: `${c('console.user.identities.unlink')} ${i.providerName}` })}</li>`)}</ul>`}
<h2>${c('console.user.delete')}</h2>
<p>${c('console.user.delete.intro')}</p>
${problems(page.t, state.delete ?? {})}
${form({ action: `${base}/delete`, token: page.token, submit: c('console.user.delete'), secondary: true }, field({ name: 'confirm_email', label: c('console.user.delete.confirm'), autocomplete: 'off' }, state.delete ?? {}))}`
  return console.render('users', `${user.firstName} ${user.lastName}`, main, { status })
}

/** A user's action: the door, the step-up window, the domain function, then the user's page (or a problem drawn on it). */
function userAction(deps: Deps, path: string, act: (console: Console, userId: string, body: unknown, params: Record<string, string>) => Promise<string>, place: 'actions' | 'identities' | 'delete' = 'actions') {
  return async (ctx: PageRequest & { params: Record<string, string> }) => {
    const open = await openConsole(deps, ctx, true)
    if ('answer' in open) return open.answer
    const userId = ctx.params.userId!
    const page = `${open.home}/users/${encodeURIComponent(userId)}`
    return consoleChange(deps, open, page, async () => {
      try {
        const done = await act(open, userId, ctx.body, ctx.params)
        return open.page.redirect(done)
      } catch (error) {
        const { state, status } = consoleProblem(open.page, error)
        return userPage(deps, open, userId, undefined, { [place]: state }, status)
      }
    })
  }
}

export const consoleUsers = (deps: Deps) =>
  new Elysia({ prefix: `${PAGE_PREFIX}/admin` })
    .use(clientActor(deps.config.trustedProxies))
    .get('/users', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return usersPage(deps, open, { email: ctx.query?.email, cursor: ctx.query?.cursor, done: ctx.query?.done })
    })
    .post('/users', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx, true)
      if ('answer' in open) return open.answer
      const values = { email: formValue(ctx.body, 'email'), firstName: formValue(ctx.body, 'firstName'), lastName: formValue(ctx.body, 'lastName'), type: formValue(ctx.body, 'type') || 'user' }
      return consoleChange(deps, open, `${open.home}/users`, async () => {
        let userId: string
        try {
          // (POST /admin/users with invite: the user sets their own password; a tenant account gets no invitation)
          userId = (await createUser(deps, { tenantId: open.page.tenant.id, ...values, invite: values.type !== 'tenant' }, open.actor)).user.id
        } catch (error) {
          const { state, status } = consoleProblem(open.page, error)
          return usersPage(deps, open, {}, { ...state, values }, status)
        }
        return open.page.redirect(`${open.home}/users/${userId}?done=created`)
      })
    })
    .get('/users/:userId', async (ctx: PageRequest & { params: { userId: string } }) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return userPage(deps, open, ctx.params.userId, ctx.query?.done)
    })
    .post('/users/:userId/disable', userAction(deps, 'disable', async (o, id) => (await updateUser(deps, id, { disabled: true }, o.actor), `${o.home}/users/${id}?done=disabled`)))
    .post('/users/:userId/enable', userAction(deps, 'enable', async (o, id) => (await updateUser(deps, id, { disabled: false }, o.actor), `${o.home}/users/${id}?done=enabled`)))
    .post('/users/:userId/sessions/end', userAction(deps, 'sessions', async (o, id) => (await revokeUserSessions(deps, id, o.actor), `${o.home}/users/${id}?done=sessions`)))
    .post('/users/:userId/mfa/reset', userAction(deps, 'mfa', async (o, id) => (await resetMfa(deps, id, o.actor), `${o.home}/users/${id}?done=mfa`)))
    .post('/users/:userId/invite', userAction(deps, 'invite', async (o, id) => (await inviteUser(deps, id, o.actor), `${o.home}/users/${id}?done=invited`)))
    .post('/users/:userId/passkeys/:passkeyId/remove', userAction(deps, 'passkey', async (o, id, _, params) => (await deleteUserPasskey(deps, id, params.passkeyId!, o.actor), `${o.home}/users/${id}?done=passkey`)))
    .post('/users/:userId/identities/:identityId/unlink', userAction(deps, 'identity', async (o, id, _, params) => (await unlinkIdentity(deps, id, params.identityId!, o.actor), `${o.home}/users/${id}?done=identity`), 'identities'))
    .post(
      '/users/:userId/delete',
      userAction(
        deps,
        'delete',
        async (o, id, body) => {
          const user = await viewUser(deps, id, o.actor)
          // (typed to confirm, as GitHub asks for a repository's name: a slip of the mouse deletes nobody)
          if (formValue(body, 'confirm_email').trim().toLowerCase() !== user.email) throw new AppError(400, 'invalid_request', o.c('console.user.delete.mismatch'))
          await deleteUser(deps, id, o.actor)
          return `${o.home}/users?done=deleted`
        },
        'delete',
      ),
    )
