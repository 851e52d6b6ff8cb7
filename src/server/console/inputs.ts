// What the console's forms need beyond the pages' own (pages/forms.ts): a field that may be
// left empty, a set of checkboxes sent under one name, a select, and a domain refusal placed on
// the field it names. Drawn the same way: a label for every input, its hint and its error tied
// to it (aria-describedby, aria-invalid).
import { AppError } from '../../core/errors'
import { fieldId, type FormState } from '../pages/forms'
import { html, type SafeHtml } from '../pages/html'
import type { Page } from '../pages/page'
import { consoleProblem } from './frame'

/**
 * The values ticked in checkboxes() of `name`: each box is its own field, `{name}.{value}`
 * sent as `on` (the pages' form parser keeps a name's first value only, plugins/body-limit.ts).
 */
export function formValues(body: unknown, name: string): string[] {
  if (body === null || typeof body !== 'object') return []
  const prefix = `${name}.`
  return Object.entries(body as Record<string, unknown>).flatMap(([key, value]) => (key.startsWith(prefix) && value === 'on' ? [key.slice(prefix.length)] : []))
}

const describedBy = (id: string, hint: string | undefined, error: string | undefined) => [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ')

/** A text field that may stay empty (pages/forms.ts's field() is required), its value kept. */
export function optionalField(spec: { name: string; label: string; hint?: string; inputmode?: 'numeric' }, state: FormState): SafeHtml {
  const id = fieldId(spec.name)
  const error = state.errors?.[spec.name]
  const value = state.values?.[spec.name] ?? ''
  const described = describedBy(id, spec.hint, error)
  return html`<div class="field">
<label for="${id}">${spec.label}</label>
${spec.hint && html`<p class="hint" id="${id}-hint">${spec.hint}</p>`}
${error && html`<p class="error" id="${id}-error">${error}</p>`}
<input id="${id}" name="${spec.name}" type="text" autocomplete="off"${spec.inputmode && html` inputmode="${spec.inputmode}"`}${described && html` aria-describedby="${described}"`}${error && html` aria-invalid="true"`}${value && html` value="${value}"`}>
</div>`
}

/** Checkboxes of one list (each sent as `{name}.{value}`: formValues reads them), in a fieldset whose legend names them (its id the error's link target). */
export function checkboxes(spec: { name: string; legend: string; hint?: string; options: readonly { value: string; label: string }[]; checked: readonly string[] }, state: FormState): SafeHtml {
  const id = fieldId(spec.name)
  const error = state.errors?.[spec.name]
  const described = describedBy(id, spec.hint, error)
  return html`<fieldset class="field" id="${id}"${described && html` aria-describedby="${described}"`}>
<legend>${spec.legend}</legend>
${spec.hint && html`<p class="hint" id="${id}-hint">${spec.hint}</p>`}
${error && html`<p class="error" id="${id}-error">${error}</p>`}
${spec.options.map(
  (option, i) => html`<div class="check"><input id="${id}-${i}" name="${spec.name}.${option.value}" type="checkbox" value="on"${spec.checked.includes(option.value) && html` checked`}><label for="${id}-${i}">${option.label}</label></div>`,
)}
</fieldset>`
}

/** A select with its label. */
export function select(spec: { name: string; label: string; options: readonly { value: string; label: string }[]; selected?: string }, state: FormState): SafeHtml {
  const id = fieldId(spec.name)
  const error = state.errors?.[spec.name]
  return html`<div class="field"><label for="${id}">${spec.label}</label>
${error && html`<p class="error" id="${id}-error">${error}</p>`}
<select id="${id}" name="${spec.name}"${error && html` aria-invalid="true" aria-describedby="${id}-error"`}>${spec.options.map((option) => html`<option value="${option.value}"${option.value === spec.selected && ' selected'}>${option.label}</option>`)}</select></div>`
}

/**
 * consoleProblem, with a refusal whose message begins with one of the form's field names ("name
 * must be …", "paths must be …") shown on that field. A 404 or a bug is thrown on.
 */
export function problemOnForm(page: Page, error: unknown, fields: readonly string[]): { state: FormState; status: number } {
  const { state, status } = consoleProblem(page, error)
  const named = error instanceof AppError ? error.message.split(' ')[0]! : ''
  if (state.formError !== undefined && fields.includes(named)) return { state: { errors: { [named]: state.formError } }, status }
  return { state, status }
}
