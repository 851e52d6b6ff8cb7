// The console's webhooks (product spec §27, §22): the tenant's endpoints; add one (URL, the
// events as checkboxes) with its signing secret shown once on the answer; an endpoint's page
// with its recent deliveries, each sent again on demand; stop and resume sending; rotate the
// secret (the new one shown once on the answer); delete with the URL typed. Each action is its
// admin API twin's function (/api/v1/admin/webhooks…) with the console's actor.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { AppError } from '../../core/errors'
import { createEndpoint, deleteEndpoint, getEndpoint, listDeliveries, listEndpoints, redeliver, rotateSecret, updateEndpoint, type EndpointView } from '../../core/webhooks/endpoints'
import { WEBHOOK_EVENT_TYPES } from '../../core/webhooks/events'
import { clientActor } from '../plugins/client-ip'
import { field, form, formValue, notice, problems, type FormState } from '../pages/forms'
import { html, type SafeHtml } from '../pages/html'
import { PAGE_PREFIX, type PageRequest } from '../pages/page'
import { formatMoment } from '../pages/strings'
import { consoleChange, consoleProblem, openConsole, type Console } from './frame'
import type { ConsoleKey } from './strings/en'

/** How many of an endpoint's deliveries its page shows, newest first. */
const RECENT_DELIVERIES = 50

const DONE: Record<string, ConsoleKey> = {
  disabled: 'console.webhook.disabled.notice',
  enabled: 'console.webhook.enabled.notice',
  redelivered: 'console.webhook.redelivered.notice',
  deleted: 'console.webhook.deleted.notice',
}
const doneOf = (console: Console, raw: string | undefined) => (raw !== undefined && Object.hasOwn(DONE, raw) ? console.c(DONE[raw]!) : undefined)

/** The events checked: one field per choice (`event:user.created`), since a page's form takes each name's first value only. */
const checkedEvents = (body: unknown): string[] => ['*', ...WEBHOOK_EVENT_TYPES].filter((type) => formValue(body, `event:${type}`) !== '')

/** The event checkboxes: every event (`*`), or the types one by one. */
function eventChoices(console: Console, checked: string[]): SafeHtml {
  const box = (value: string, label: string, index: number) =>
    html`<div class="field check"><input id="f-events-${index}" name="event:${value}" type="checkbox" value="on"${checked.includes(value) && html` checked`}><label for="f-events-${index}">${label}</label></div>`
  return html`<fieldset><legend>${console.c('console.webhooks.create.events')}</legend>
${box('*', console.c('console.webhooks.create.all'), 0)}
${WEBHOOK_EVENT_TYPES.map((type, i) => box(type, type, i + 1))}
</fieldset>`
}

const statusOf = (console: Console, endpoint: EndpointView) => console.c(endpoint.enabled ? 'console.webhooks.enabled' : 'console.webhooks.disabled')

async function webhooksPage(deps: Deps, console: Console, done?: string, state: FormState & { events?: string[] } = {}, status = 200): Promise<string> {
  const { c, page } = console
  const endpoints = await listEndpoints(deps, { tenantId: page.tenant.id }, console.actor)
  const rows = endpoints.map(
    (e) =>
      html`<tr><td><a href="${console.home}/webhooks/${e.id}">${e.url}</a></td><td>${e.events.join(', ')}</td><td>${e.description}</td><td>${statusOf(console, e)}</td><td>${formatMoment(page.t.language, e.createdAt, false)}</td></tr>`,
  )
  const main = html`${notice({ notice: doneOf(console, done) })}
<p>${c('console.webhooks.intro')}</p>
${rows.length === 0 ? html`<p>${c('console.webhooks.none')}</p>` : html`<table><thead><tr><th scope="col">${c('console.webhooks.url')}</th><th scope="col">${c('console.webhooks.events')}</th><th scope="col">${c('console.webhooks.description')}</th><th scope="col">${c('console.webhooks.status')}</th><th scope="col">${c('console.webhooks.created')}</th></tr></thead><tbody>${rows}</tbody></table>`}
<h2 id="create">${c('console.webhooks.create')}</h2>
${problems(page.t, state)}
${form(
  { action: `${console.home}/webhooks`, token: page.token, submit: c('console.webhooks.createButton') },
  field({ name: 'url', label: c('console.webhooks.url'), hint: c('console.webhooks.create.urlHint'), autocomplete: 'off', keepValue: true }, state),
  field({ name: 'description', label: c('console.webhooks.description'), autocomplete: 'off', keepValue: true }, state),
  eventChoices(console, state.events ?? ['*']),
)}`
  return console.render('webhooks', c('console.section.webhooks'), main, { status })
}

/** The answer of a creation or a rotation: the secret, this once (never stored, logged or redirected with). */
function secretPage(console: Console, title: string, intro: string, endpoint: EndpointView, secret: string): string {
  const { c } = console
  const main = html`<p>${intro}</p>
<p><strong>${c('console.webhooks.secret')}</strong></p>
<p class="secret">${secret}</p>
<p role="status">${c('console.secret.once')}</p>
<p class="links"><a href="${console.home}/webhooks/${endpoint.id}">${c('console.webhooks.open')}</a> · <a href="${console.home}/webhooks">${c('console.webhooks.back')}</a></p>`
  return console.render('webhooks', title, main)
}

async function endpointPage(deps: Deps, console: Console, endpointId: string, done?: string, state: Record<string, FormState> = {}, status = 200): Promise<string> {
  const { c, page } = console
  const endpoint = await getEndpoint(deps, endpointId, console.actor)
  const deliveries = await listDeliveries(deps, endpoint.id, { limit: RECENT_DELIVERIES }, console.actor)
  const lang = page.t.language
  const base = `${console.home}/webhooks/${endpoint.id}`
  const moment = (iso: string | null) => (iso === null ? '—' : formatMoment(lang, iso))
  const rows = deliveries.map(
    (d) =>
      html`<tr><td>${d.eventType}</td><td>${d.status}</td><td>${d.attempts}</td><td>${d.lastStatus ?? d.lastError ?? '—'}</td><td>${moment(d.createdAt)}</td><td>${
        d.status === 'dead' || d.status === 'succeeded'
          ? form({ action: `${base}/deliveries/${d.id}/redeliver`, token: page.token, submit: c('console.webhook.redeliver'), secondary: true, submitLabel: `${c('console.webhook.redeliver')}: ${d.eventType} ${moment(d.createdAt)}` })
          : ''
      }</td></tr>`,
  )
  const action = (path: string, label: string, secondary = true) => form({ action: `${base}/${path}`, token: page.token, submit: label, secondary })
  const main = html`${notice({ notice: doneOf(console, done) })}
<h2>${c('console.webhook.details')}</h2>
<dl><dt>${c('console.webhooks.url')}</dt><dd>${endpoint.url}</dd><dt>${c('console.webhooks.events')}</dt><dd>${endpoint.events.join(', ')}</dd><dt>${c('console.webhooks.description')}</dt><dd>${endpoint.description || '—'}</dd><dt>${c('console.webhooks.status')}</dt><dd>${statusOf(console, endpoint)}${endpoint.disabledReason && html` (${c('console.webhook.disabledReason', { reason: endpoint.disabledReason })})`}</dd>${endpoint.failingSince && html`<dt>${c('console.webhook.failingSince')}</dt><dd>${moment(endpoint.failingSince)}</dd>`}${endpoint.previousSecretUntil && html`<dt>${c('console.webhook.previousUntil')}</dt><dd>${moment(endpoint.previousSecretUntil)}</dd>`}<dt>${c('console.webhooks.created')}</dt><dd>${moment(endpoint.createdAt)}</dd></dl>
${problems(page.t, state.actions ?? {})}
${endpoint.enabled ? action('disable', c('console.webhook.disable')) : action('enable', c('console.webhook.enable'), false)}
<h2>${c('console.webhook.deliveries')}</h2>
${problems(page.t, state.deliveries ?? {})}
${rows.length === 0 ? html`<p>${c('console.webhook.deliveries.none')}</p>` : html`<table><thead><tr><th scope="col">${c('console.webhook.delivery.event')}</th><th scope="col">${c('console.webhook.delivery.status')}</th><th scope="col">${c('console.webhook.delivery.attempts')}</th><th scope="col">${c('console.webhook.delivery.answer')}</th><th scope="col">${c('console.webhook.delivery.time')}</th><th scope="col">${c('console.actions')}</th></tr></thead><tbody>${rows}</tbody></table>`}
<h2>${c('console.webhook.rotate')}</h2>
<p>${c('console.webhook.rotate.intro')}</p>
${action('rotate', c('console.webhook.rotate'))}
<h2>${c('console.webhook.delete')}</h2>
<p>${c('console.webhook.delete.intro')}</p>
${problems(page.t, state.delete ?? {})}
${form({ action: `${base}/delete`, token: page.token, submit: c('console.webhook.delete'), secondary: true }, field({ name: 'confirm_url', label: c('console.webhook.delete.confirm'), autocomplete: 'off' }, state.delete ?? {}))}`
  return console.render('webhooks', endpoint.url, main, { status })
}

/** An endpoint's action: the door, the step-up window, the domain function, then where it leads (or the problem on the endpoint's page). */
function endpointAction(deps: Deps, act: (console: Console, endpointId: string, body: unknown, params: Record<string, string>) => Promise<string>, place: 'actions' | 'deliveries' | 'delete' = 'actions') {
  return async (ctx: PageRequest & { params: Record<string, string> }) => {
    const open = await openConsole(deps, ctx, true)
    if ('answer' in open) return open.answer
    const endpointId = ctx.params.endpointId!
    return consoleChange(deps, open, `${open.home}/webhooks/${encodeURIComponent(endpointId)}`, async () => {
      try {
        return await act(open, endpointId, ctx.body, ctx.params)
      } catch (error) {
        const { state, status } = consoleProblem(open.page, error)
        return endpointPage(deps, open, endpointId, undefined, { [place]: state }, status)
      }
    })
  }
}

export const consoleWebhooks = (deps: Deps) =>
  new Elysia({ prefix: `${PAGE_PREFIX}/admin` })
    .use(clientActor(deps.config.trustedProxies))
    .get('/webhooks', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return webhooksPage(deps, open, ctx.query?.done)
    })
    .post('/webhooks', async (ctx: PageRequest) => {
      const open = await openConsole(deps, ctx, true)
      if ('answer' in open) return open.answer
      const values = { url: formValue(ctx.body, 'url').trim(), description: formValue(ctx.body, 'description').trim() }
      const events = checkedEvents(ctx.body)
      return consoleChange(deps, open, `${open.home}/webhooks`, async () => {
        try {
          // (POST /admin/webhooks: every event checked is one pattern; none is the domain's refusal)
          const { endpoint, secret } = await createEndpoint(deps, { tenantId: open.page.tenant.id, url: values.url, events, description: values.description }, open.actor)
          return secretPage(open, open.c('console.webhooks.createdTitle'), open.c('console.webhooks.created.intro', { url: endpoint.url }), endpoint, secret)
        } catch (error) {
          const { state, status } = consoleProblem(open.page, error)
          return webhooksPage(deps, open, undefined, { ...placed(state), values, events }, status)
        }
      })
    })
    .get('/webhooks/:endpointId', async (ctx: PageRequest & { params: { endpointId: string } }) => {
      const open = await openConsole(deps, ctx)
      if ('answer' in open) return open.answer
      return endpointPage(deps, open, ctx.params.endpointId, ctx.query?.done)
    })
    .post('/webhooks/:endpointId/disable', endpointAction(deps, async (o, id) => (await updateEndpoint(deps, id, { enabled: false }, o.actor), o.page.redirect(`${o.home}/webhooks/${id}?done=disabled`))))
    .post('/webhooks/:endpointId/enable', endpointAction(deps, async (o, id) => (await updateEndpoint(deps, id, { enabled: true }, o.actor), o.page.redirect(`${o.home}/webhooks/${id}?done=enabled`))))
    .post(
      '/webhooks/:endpointId/rotate',
      endpointAction(deps, async (o, id) => {
        const { endpoint, secret } = await rotateSecret(deps, id, o.actor)
        return secretPage(o, o.c('console.webhook.rotatedTitle'), o.c('console.webhook.rotated.intro', { url: endpoint.url }), endpoint, secret)
      }),
    )
    .post(
      '/webhooks/:endpointId/delete',
      endpointAction(
        deps,
        async (o, id, body) => {
          const endpoint = await getEndpoint(deps, id, o.actor)
          // (typed to confirm: a slip of the mouse deletes no endpoint)
          if (formValue(body, 'confirm_url').trim() !== endpoint.url) throw new AppError(400, 'invalid_request', o.c('console.webhook.delete.mismatch'))
          await deleteEndpoint(deps, id, o.actor)
          return o.page.redirect(`${o.home}/webhooks?done=deleted`)
        },
        'delete',
      ),
    )
    // (POST /admin/webhooks/deliveries/{id}/redeliver, from the page of the delivery's endpoint, which it shows after)
    .post(
      '/webhooks/:endpointId/deliveries/:deliveryId/redeliver',
      endpointAction(deps, async (o, _, __, params) => o.page.redirect(`${o.home}/webhooks/${(await redeliver(deps, params.deliveryId!, o.actor)).endpointId}?done=redelivered`), 'deliveries'),
    )

/** A refusal naming its field first ("url must be https") shown on that field (one about the events stays over the form). */
function placed(state: FormState): FormState {
  const named = state.formError?.split(/[ :]/)[0]
  return named === 'url' || named === 'description' ? { errors: { [named]: state.formError! } } : state
}
