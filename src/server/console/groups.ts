// The console's groups (product spec §27, §23): the tenant's groups; create one; a group's page
// with its members, a member added by address or removed, the group renamed, deleted with its
// name typed. Each action is its admin API twin's function (POST/PATCH/DELETE /api/v1/admin/groups…,
// PUT/DELETE …/members/{userId}) with the console's actor: same rules, same audit. The admin API
// names a member by id; the console's form by address, looked up in the group's tenant first.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { AppError } from '../../core/errors'
import { addMembers, createGroup, deleteGroup, getGroup, listGroups, removeMembers, updateGroup } from '../../core/groups/groups'
import { memberByEmail, memberPage } from '../../core/groups/members'
import type { Group } from '../../core/groups/types'
import { clientActor } from '../plugins/client-ip'
import { field, form, formValue, notice, problems, type FormState } from '../pages/forms'
import { html } from '../pages/html'
import { PAGE_PREFIX, type PageRequest } from '../pages/page'
import { missing } from '../pages/problems'
import { formatMoment } from '../pages/strings'
import { consoleChange, openConsole, type Console } from './frame'
import { optionalField, problemOnForm } from './inputs'
import type { ConsoleKey } from './strings/en'

const MEMBERS_PAGE = 50

/** Notices a redirect back may ask for (`?done=`): only these names count. */
const DONE: Record<string, ConsoleKey> = {
  created: 'console.groups.created.notice',
  deleted: 'console.groups.deleted.notice',
  added: 'console.group.members.added',
  already: 'console.group.members.already',
  removed: 'console.group.members.removed',
  renamed: 'console.group.renamed',
}
const doneOf = (console: Console, raw: string | undefined) => (raw !== undefined && Object.hasOwn(DONE, raw) ? console.c(DONE[raw]!) : undefined)

async function groupsPage(deps: Deps, console: Console, done?: string, state: FormState = {}, status = 200): Promise<string> {
  const { c, page } = console
  const groups = await listGroups(deps, page.tenant.id, console.actor)
  const rows = groups.map(
    (group) => html`<tr><td><a href="${console.home}/groups/${group.id}">${group.name}</a></td><td>${group.description ?? ''}</td><td>${formatMoment(page.t.language, new Date(group.createdAt).toISOString(), false)}</td></tr>`,
  )
  const main = html`${notice({ notice: doneOf(console, done) })}
<p>${c('console.groups.intro')}</p>
${rows.length === 0 ? html`<p>${c('console.groups.none')}</p>` : html`<table><thead><tr><th scope="col">${c('console.groups.name')}</th><th scope="col">${c('console.groups.description')}</th><th scope="col">${c('console.groups.created')}</th></tr></thead><tbody>${rows}</tbody></table>`}
<h2 id="create">${c('console.groups.create')}</h2>
${problems(page.t, state)}
${form(
  { action: `${console.home}/groups`, token: page.token, submit: c('console.groups.createButton') },
  field({ name: 'name', label: c('console.groups.name'), hint: c('console.groups.name.hint'), autocomplete: 'off', keepValue: true }, state),
  optionalField({ name: 'description', label: c('console.groups.description'), hint: c('console.groups.description.hint') }, state),
)}`
  return console.render('groups', c('console.section.groups'), main, { status })
}

type GroupForms = Partial<Record<'members' | 'rename' | 'delete', FormState>>

async function groupPage(deps: Deps, console: Console, groupId: string, query: { done?: string; after?: string } = {}, state: GroupForms = {}, status = 200): Promise<string> {
  const { c, page } = console
  let members: Awaited<ReturnType<typeof memberPage>>
  try {
    members = await memberPage(deps, groupId, { after: query.after || undefined, limit: MEMBERS_PAGE }, console.actor)
  } catch (error) {
    // (a cursor this server never wrote: the first page)
    if (!(error instanceof AppError) || error.status !== 400) throw error
    members = await memberPage(deps, groupId, { limit: MEMBERS_PAGE }, console.actor)
  }
  const group: Group = members.group
  const base = `${console.home}/groups/${group.id}`
  const rows = members.items.map(
    (m) => html`<tr><td><a href="${console.home}/users/${m.userId}">${m.email}</a></td><td>${m.firstName} ${m.lastName}</td><td>${form({ action: `${base}/members/${m.userId}/remove`, token: page.token, submit: c('console.group.members.remove'), secondary: true, submitLabel: c('console.group.members.removeLabel', { email: m.email }) })}</td></tr>`,
  )
  const next = members.nextCursor && `${base}?${new URLSearchParams({ after: members.nextCursor })}`
  const rename: FormState = { ...state.rename, values: state.rename?.values ?? { name: group.name, description: group.description ?? '' } }
  const main = html`${notice({ notice: doneOf(console, query.done) })}
${group.description && html`<p>${group.description}</p>`}
<h2>${c('console.group.members')}</h2>
${rows.length === 0 ? html`<p>${c('console.group.members.none')}</p>` : html`<table><thead><tr><th scope="col">${c('console.users.email')}</th><th scope="col">${c('console.users.name')}</th><th scope="col">${c('console.actions')}</th></tr></thead><tbody>${rows}</tbody></table>`}
<p class="links">${query.after && html`<a href="${base}">${c('console.first')}</a> `}${next && html`<a href="${next}" rel="next">${c('console.next')}</a>`}</p>
<h3>${c('console.group.members.add')}</h3>
${problems(page.t, state.members ?? {})}
${form({ action: `${base}/members`, token: page.token, submit: c('console.group.members.addButton') }, field({ name: 'email', label: c('console.group.members.email'), type: 'email', autocomplete: 'off', keepValue: true }, state.members ?? {}))}
<h2>${c('console.group.rename')}</h2>
<p>${c('console.group.rename.intro')}</p>
${problems(page.t, rename)}
${form(
  { action: `${base}/rename`, token: page.token, submit: c('console.group.renameButton') },
  field({ name: 'name', label: c('console.groups.name'), hint: c('console.groups.name.hint'), autocomplete: 'off', keepValue: true }, rename),
  optionalField({ name: 'description', label: c('console.groups.description'), hint: c('console.groups.description.hint') }, rename),
)}
<h2>${c('console.group.delete')}</h2>
<p>${c('console.group.delete.intro')}</p>
${problems(page.t, state.delete ?? {})}
${form({ action: `${base}/delete`, token: page.token, submit: c('console.group.delete'), secondary: true }, field({ name: 'confirm_name', label: c('console.group.delete.confirm'), autocomplete: 'off' }, state.delete ?? {}))}
<p class="links"><a href="${console.home}/groups">${c('console.group.back')}</a></p>`
  return console.render('groups', c('console.group.title', { name: group.name }), main, { status })
}

/** A group's action: the door, the step-up window, the domain function, then the group's page (or a problem drawn on its form). */
function groupAction(deps: Deps, place: keyof GroupForms, fields: readonly string[], act: (console: Console, groupId: string, body: unknown, params: Record<string, string>) => Promise<string | { state: FormState; status: number }>) {
  return async (ctx: PageRequest & { params: Record<string, string> }) => {
    const open = await openConsole(deps, ctx, true)
    if ('answer' in open) return open.answer
    const groupId = ctx.params.groupId!
    return consoleChange(deps, open, `${open.home}/groups/${encodeURIComponent(groupId)}`, async () => {
      let done: string | { state: FormState; status: number }
      try {
        done = await act(open, groupId, ctx.body, ctx.params)
      } catch (error) {
        done = problemOnForm(open.page, error, fields)
      }
      if (typeof done === 'string') return open.page.redirect(done)
      return groupPage(deps, open, groupId, {}, { [place]: done.state }, done.status)
    })
  }
}

export const consoleGroups = (deps: Deps) =>
  new Elysia({ prefix: `${PAGE_PREFIX}/admin` })
    .use(clientActor(deps.config.trustedProxies))
    .get('/groups', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return groupsPage(deps, open, ctx.query?.done)
    })
    .post('/groups', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx, true)
      if ('answer' in open) return open.answer
      const values = { name: formValue(ctx.body, 'name'), description: formValue(ctx.body, 'description') }
      return consoleChange(deps, open, `${open.home}/groups`, async () => {
        const empty = missing(open.page.t, values, ['name'])
        if (empty) return groupsPage(deps, open, undefined, { ...empty, values }, 400)
        let group: Group
        try {
          // (POST /admin/groups)
          group = await createGroup(deps, { tenantId: open.page.tenant.id, name: values.name, description: values.description }, open.actor)
        } catch (error) {
          const { state, status } = problemOnForm(open.page, error, ['name', 'description'])
          return groupsPage(deps, open, undefined, { ...state, values }, status)
        }
        return open.page.redirect(`${open.home}/groups/${group.id}?done=created`)
      })
    })
    .get('/groups/:groupId', async (ctx: PageRequest & { params: { groupId: string } }) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return groupPage(deps, open, ctx.params.groupId, { done: ctx.query?.done, after: ctx.query?.after })
    })
    .post(
      '/groups/:groupId/members',
      groupAction(deps, 'members', ['email'], async (o, id, body) => {
        const values = { email: formValue(body, 'email') }
        const empty = missing(o.page.t, values, ['email'])
        if (empty) return { state: { ...empty, values }, status: 400 }
        const member = await memberByEmail(deps, id, values.email, o.actor)
        if (!member) return { state: { errors: { email: o.c('console.group.members.unknown') }, values }, status: 400 }
        // (PUT /admin/groups/{groupId}/members/{userId})
        const { added } = await addMembers(deps, id, [member.userId], o.actor)
        return `${o.home}/groups/${id}?done=${added > 0 ? 'added' : 'already'}`
      }),
    )
    .post(
      '/groups/:groupId/members/:userId/remove',
      // (DELETE /admin/groups/{groupId}/members/{userId}; another tenant's user is a 404 there as here)
      groupAction(deps, 'members', [], async (o, id, _, params) => (await removeMembers(deps, id, [params.userId!], o.actor), `${o.home}/groups/${id}?done=removed`)),
    )
    .post(
      '/groups/:groupId/rename',
      groupAction(deps, 'rename', ['name', 'description'], async (o, id, body) => {
        const values = { name: formValue(body, 'name'), description: formValue(body, 'description') }
        const empty = missing(o.page.t, values, ['name'])
        if (empty) return { state: { ...empty, values }, status: 400 }
        try {
          // (PATCH /admin/groups/{groupId}: an empty description removes it)
          await updateGroup(deps, id, values, o.actor)
        } catch (error) {
          const { state, status } = problemOnForm(o.page, error, ['name', 'description'])
          return { state: { ...state, values }, status }
        }
        return `${o.home}/groups/${id}?done=renamed`
      }),
    )
    .post(
      '/groups/:groupId/delete',
      groupAction(deps, 'delete', [], async (o, id, body) => {
        const group = await getGroup(deps, id, o.actor)
        // (typed to confirm, as a user's address is: a slip of the mouse deletes no group)
        if (formValue(body, 'confirm_name').trim().toLowerCase() !== group.name) return { state: { errors: { confirm_name: o.c('console.group.delete.mismatch') } }, status: 400 }
        // (DELETE /admin/groups/{groupId})
        await deleteGroup(deps, id, o.actor)
        return `${o.home}/groups?done=deleted`
      }),
    )
