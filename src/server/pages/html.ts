// The pages' one template mechanism: tagged template literals. `html` escapes every value it
// is given, except values that are already SafeHtml (made by `html` itself, so escaped when
// they were made). A string therefore cannot become markup by accident: the only way is
// `unsafeRaw`, whose every use is listed in test/unit/pages-html.test.ts, so a new one fails
// that test until someone has read it. Templates are TypeScript, compiled into the binary
// with the rest: no template file is read at run time, and tsc checks every value they use.

const SAFE = Symbol('authd.safeHtml')

export interface SafeHtml {
  readonly [SAFE]: true
  readonly value: string
}

const safe = (value: string): SafeHtml => ({ [SAFE]: true, value })

export const isSafeHtml = (value: unknown): value is SafeHtml => typeof value === 'object' && value !== null && SAFE in value

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Text made safe for an element's content or a quoted attribute value. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

/** What a template accepts: text (escaped), numbers, SafeHtml (kept), lists of these, and
 *  nothing at all (false, null, undefined: for `${cond && html`…`}`). */
export type HtmlValue = string | number | SafeHtml | null | undefined | false | readonly HtmlValue[]

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return ''
  if (Array.isArray(value)) return value.map(render).join('')
  if (isSafeHtml(value)) return value.value
  return escapeHtml(String(value))
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!
  return safe(out)
}

/** Markup that is NOT escaped. Every call is listed in test/unit/pages-html.test.ts: give the
 *  reason the text is safe beside each one. */
export const unsafeRaw = (markup: string): SafeHtml => safe(markup)
