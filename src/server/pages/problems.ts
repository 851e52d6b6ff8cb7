// A domain error as a form shows it: tied to the field it is about, in the page's language.
// The domain decides (core/); this only chooses the words and the place. An error no page
// expects is not shown as a form's problem: it is thrown on, and the error page answers it.
import { AppError, type ErrorCode, type PasswordRule } from '../../core/errors'
import type { FormState } from './forms'
import { formatWait, type MessageKey, type Translate } from './strings'

/** Where a page shows an error of a given code: on a field, or over the whole form. */
export type ProblemPlaces = Partial<Record<ErrorCode, { field?: string; key: MessageKey }>>

/** The password policy's rules (core/password-policy.ts), by the rule the refusal names. */
const PASSWORD_RULES: Record<PasswordRule, MessageKey> = {
  too_short: 'password.tooShort',
  too_long: 'password.tooLong',
  email: 'password.email',
  email_local_part: 'password.emailLocalPart',
  name: 'password.name',
  pattern: 'password.pattern',
  common: 'password.common',
  unicode: 'password.unicode',
}

export function passwordRule(t: Translate, error: AppError): string {
  const { passwordRule: rule, passwordRuleLimit: limit } = error.details
  if (!rule) return error.message
  return t(PASSWORD_RULES[rule], { min: limit ?? '', max: limit ?? '' })
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
  else if (error.code === 'weak_password') state = at(passwordField, passwordRule(t, error))
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
