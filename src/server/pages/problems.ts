// A domain error as a form shows it: tied to the field it is about, in the page's language.
// The domain decides (core/); this only chooses the words and the place. An error no page
// expects is not shown as a form's problem: it is thrown on, and the error page answers it.
import { AppError, type ErrorCode } from '../../core/errors'
import type { FormState } from './forms'
import { formatWait, type MessageKey, type Translate } from './strings'

/** Where a page shows an error of a given code: on a field, or over the whole form. */
export type ProblemPlaces = Partial<Record<ErrorCode, { field?: string; key: MessageKey }>>

/** The password policy's rules (core/password-policy.ts), by the message that names them. */
const PASSWORD_RULES: Array<[RegExp, MessageKey, string?]> = [
  [/at least (\d+) characters/, 'password.tooShort', 'min'],
  [/at most (\d+) characters/, 'password.tooLong', 'max'],
  [/e-mail address/, 'password.email'],
  [/your name/, 'password.name'],
  [/pattern repeated/, 'password.pattern'],
  [/too common/, 'password.common'],
  [/Unicode/, 'password.unicode'],
]

export function passwordRule(t: Translate, message: string): string {
  for (const [pattern, key, value] of PASSWORD_RULES) {
    const match = pattern.exec(message)
    if (match) return t(key, value ? { [value]: match[1]! } : {})
  }
  return message
}

/** The fields the domain's invalid_request names first in its message ("email must be …"). */
const INVALID_FIELDS: Record<string, MessageKey> = { email: 'field.email.invalid', firstName: 'field.name.invalid', lastName: 'field.name.invalid' }

/**
 * The form's problem for `error`, or throws it on.
 * @param passwordField the field a refused password was typed in
 */
export function problemOf(t: Translate, error: unknown, places: ProblemPlaces, passwordField = 'password'): { state: FormState; status: number; retryAfter?: number } {
  if (!(error instanceof AppError)) throw error
  const at = (field: string | undefined, message: string): FormState => (field ? { errors: { [field]: message } } : { formError: message })
  const placed = places[error.code]
  const named = error.message.split(' ')[0]!
  let state: FormState
  if (placed) state = at(placed.field, t(placed.key))
  else if (error.code === 'weak_password') state = at(passwordField, passwordRule(t, error.message))
  // (normaliseEmail's and validateName's refusals: the invalid_request a page's own fields can cause)
  else if (error.code === 'invalid_request' && INVALID_FIELDS[named]) state = at(named, t(INVALID_FIELDS[named]!))
  else if (error.code === 'rate_limited') state = at(undefined, t('error.rateLimited', { wait: formatWait(t.language, error.retryAfter ?? 1) }))
  else if (error.code === 'unavailable') state = at(undefined, t('error.unavailable'))
  else if (error.code === 'user_disabled') state = at(undefined, t('error.userDisabled'))
  else throw error
  return { state, status: error.status, retryAfter: error.retryAfter }
}

/** The fields left empty, each with its message: the form is drawn again without calling the domain. */
export function missing(t: Translate, values: Record<string, string>, names: string[]): FormState | null {
  const empty = names.filter((name) => values[name]!.trim() === '')
  return empty.length === 0 ? null : { errors: Object.fromEntries(empty.map((name) => [name, t('field.required')])) }
}
