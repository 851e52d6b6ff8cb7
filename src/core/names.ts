// What a name shown to people (a user's, a tenant's, an API key's, a client's) and an e-mail
// address may hold.
import { badRequest } from './errors'

/**
 * Characters a name may not hold: controls (line breaks and tabs among them), line and
 * paragraph separators, surrogates, private-use and unassigned code points, and format
 * characters (bidi overrides that reorder the text around them, invisible marks). A name is
 * shown in mails and pages beside the tenant's own words, so it must not be able to start a
 * line of its own or hide what follows it (product spec §18). The zero-width (non-)joiner
 * stay: Persian, Hindi and emoji sequences need them to be written correctly.
 */
const FORBIDDEN_IN_NAMES = /[\p{Cc}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\uFFFD]|(?![\u200c\u200d])[\p{Cf}\p{Default_Ignorable_Code_Point}]/u
// Invisible fillers and blanks that are letters or symbols to Unicode (Hangul fillers, the
// braille blank): a name of nothing but these shows as empty.
const BLANK = /[\s\u115f\u1160\u2800\u3164\uffa0\u200c\u200d]/gu
// More combining marks on one letter than any script writes stack into unreadable text.
const STACKED_MARKS = /\p{M}{5,}/u

/** A name (user, tenant, API key): one line of 1 to 100 characters (or `max`), trimmed, something
 *  visible in it. (U+FFFD, the replacement character, is what invalid UTF-8 becomes.) */
export function validateName(field: string, raw: unknown, max = 100): string {
  const value = typeof raw === 'string' ? raw.trim() : ''
  if (value.length < 1 || value.length > max) throw badRequest(`${field} must be 1 to ${max} characters`)
  if (FORBIDDEN_IN_NAMES.test(value) || STACKED_MARKS.test(value)) throw badRequest(`${field} must be a single line without control or formatting characters`)
  if (value.replace(BLANK, '') === '') throw badRequest(`${field} must have a visible character`)
  return value
}

// Deliberately plain: one @, a dot in the domain. Anything stricter rejects real addresses;
// the mail that is sent is the real test of an address. What is refused is what could change
// where mail goes or what a log line says: white space, control and format characters (NUL,
// CR/LF, bidi overrides), and the characters that separate or quote addresses in a mail
// header (`,;<>()[]\"`): "a@x.com,b@y.com" must never reach nodemailer as one recipient.
const EMAIL_PATTERN = /^[^@]+@[^@.]+(\.[^@.]+)+$/
const EMAIL_FORBIDDEN = /[\s\p{C},;<>()[\]\\"]/u

/** Trims and lower-cases (addresses are case-insensitive here), or throws 400. */
export function normaliseEmail(raw: unknown): string {
  const email = typeof raw === 'string' ? raw.trim().toLowerCase() : ''
  if (email.length > 254 || !EMAIL_PATTERN.test(email) || EMAIL_FORBIDDEN.test(email)) throw badRequest('email must be a valid e-mail address')
  return email
}
