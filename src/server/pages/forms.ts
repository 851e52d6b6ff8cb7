// Forms as the pages draw them: each field with its label, its hint and its error tied to it
// (aria-describedby, aria-invalid), a summary of the problems first that links to each field,
// and the anti-forgery token. Forms are `novalidate`: the server's messages (in the page's
// language) are the ones a user sees, with or without JavaScript.
import { html, type SafeHtml } from './html'
import type { Translate } from './strings'

/** What a form shows after it was sent: the values to keep (never a secret), the field errors
 *  by field name, and an error of the whole form. */
export interface FormState {
  values?: Record<string, string>
  errors?: Record<string, string>
  formError?: string
  notice?: string
}

export interface FieldSpec {
  name: string
  label: string
  type?: 'email' | 'password' | 'text'
  autocomplete?: string
  hint?: string
  /** Secrets are never written back into a page. */
  keepValue?: boolean
  inputmode?: 'numeric'
  /** A field that may be left empty (the default's are all required). */
  optional?: boolean
}

export const fieldId = (name: string) => `f-${name}`

export function field(spec: FieldSpec, state: FormState): SafeHtml {
  const id = fieldId(spec.name)
  const error = state.errors?.[spec.name]
  const describedBy = [spec.hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ')
  const value = spec.keepValue ? (state.values?.[spec.name] ?? '') : ''
  return html`<div class="field">
<label for="${id}">${spec.label}</label>
${spec.hint && html`<p class="hint" id="${id}-hint">${spec.hint}</p>`}
${error && html`<p class="error" id="${id}-error">${error}</p>`}
<input id="${id}" name="${spec.name}" type="${spec.type ?? 'text'}"${!spec.optional && html` required`}${spec.autocomplete && html` autocomplete="${spec.autocomplete}"`}${spec.inputmode && html` inputmode="${spec.inputmode}"`}${describedBy && html` aria-describedby="${describedBy}"`}${error && html` aria-invalid="true"`}${value && html` value="${value}"`}>
</div>`
}

export function checkbox(name: string, label: string, checked: boolean): SafeHtml {
  const id = fieldId(name)
  return html`<div class="field check"><input id="${id}" name="${name}" type="checkbox" value="on"${checked && html` checked`}><label for="${id}">${label}</label></div>`
}

/** The problems first, each a link to its field (role=alert: read out when the page loads). */
export function problems(t: Translate, state: FormState): SafeHtml {
  const fieldErrors = Object.entries(state.errors ?? {})
  if (!state.formError && fieldErrors.length === 0) return html``
  return html`<div class="problem" role="alert" tabindex="-1" id="problem">
<h2>${t('form.problem')}</h2>
<ul>${state.formError && html`<li>${state.formError}</li>`}${fieldErrors.map(([name, message]) => html`<li><a href="#${fieldId(name)}">${message}</a></li>`)}</ul>
</div>`
}

export const notice = (state: FormState) => state.notice && html`<p class="notice" role="status">${state.notice}</p>`

export interface FormSpec {
  action: string
  token: string
  submit: string
  hidden?: Record<string, string>
  secondary?: boolean
  /** The button's accessible name where its text alone is ambiguous (one "End" per session). */
  submitLabel?: string
}

export function form(spec: FormSpec, ...content: SafeHtml[]): SafeHtml {
  return html`<form method="post" action="${spec.action}" novalidate>
<input type="hidden" name="_form" value="${spec.token}">
${Object.entries(spec.hidden ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
${content}
<button type="submit"${spec.secondary && html` class="secondary"`}${spec.submitLabel && html` aria-label="${spec.submitLabel}"`}>${spec.submit}</button>
</form>`
}

/** A form field's value as sent: a string, or '' for none. */
export const formValue = (body: unknown, name: string): string => {
  const value = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined
  return typeof value === 'string' ? value : ''
}
