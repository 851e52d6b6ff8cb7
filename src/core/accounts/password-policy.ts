// The password policy, after NIST SP 800-63B rev. 4: length is what counts, any characters
// are allowed (spaces too), there are no composition rules, and passwords known to be
// common or breached are refused. Passwords are NFKC-normalised first, so the same password
// typed on two keyboards hashes the same.
//
// The blocklist is @zxcvbn-ts/language-common's `passwords-common` (49k entries from
// breach corpora), maintained with zxcvbn-ts and bundled into the binary: no network call.
import { weakPassword } from '../errors'

export const PASSWORD_MAX_LENGTH = 128

export interface PasswordContext {
  email: string
  firstName: string
  lastName: string
}

let blocklist: Promise<Set<string>> | undefined
// Loaded on first use (~25 ms): CLI commands that set no password never pay for it.
const loadBlocklist = () =>
  (blocklist ??= import('@zxcvbn-ts/language-common').then(({ dictionary }) => new Set(dictionary['passwords-common'])))

/**
 * The password as it is hashed and compared: NFKC. A string with an unpaired surrogate (JSON
 * can carry one: "\ud800") is refused, not hashed: its UTF-8 encoding would replace it with
 * U+FFFD, so different passwords would hash the same.
 */
export function normalisePassword(password: string): string {
  if (!password.isWellFormed()) throw weakPassword('unicode', 'Password must be valid Unicode text (it contains an unpaired surrogate)')
  return password.normalize('NFKC')
}

/** Returns the normalised password to hash, or throws a 400 naming the rule that failed. */
export async function checkPasswordPolicy(password: string, minLength: number, context: PasswordContext): Promise<string> {
  const normalised = normalisePassword(password)
  const length = [...normalised].length
  if (length < minLength) throw weakPassword('too_short', `Password must be at least ${minLength} characters long`, minLength)
  if (length > PASSWORD_MAX_LENGTH) throw weakPassword('too_long', `Password must be at most ${PASSWORD_MAX_LENGTH} characters long`, PASSWORD_MAX_LENGTH)

  const lower = normalised.toLowerCase()
  // Each refusal names what the password contains: the whole address, a name, or the part of
  // the address before the @ ("grace" of grace@example.com is refused as the name of Grace
  // Hopper, which is what the user typed it as).
  const email = context.email.toLowerCase()
  if (email.length > 0 && lower.includes(email)) throw weakPassword('email', 'Password must not contain your e-mail address')
  for (const name of [context.firstName, context.lastName]) {
    if (name.length >= 3 && lower.includes(name.toLowerCase())) throw weakPassword('name', 'Password must not contain your name')
  }
  const localPart = email.split('@')[0] ?? ''
  if (localPart.length >= 3 && lower.includes(localPart)) {
    throw weakPassword('email_local_part', 'Password must not contain the part of your e-mail address before the @')
  }
  if (/^(.{1,4}?)\1+$/su.test(lower)) throw weakPassword('pattern', 'Password must not be a short pattern repeated')

  // A listed password padded with digits or symbols, or spaced out, is still that password.
  const variants = [lower, lower.replace(/\s+/g, ''), lower.replace(/^[\d\p{P}\p{S}\s]+|[\d\p{P}\p{S}\s]+$/gu, '')]
  const list = await loadBlocklist()
  if (variants.some((v) => v.length > 0 && list.has(v))) throw weakPassword('common', 'Password is too common: it appears in lists of breached passwords')
  return normalised
}
