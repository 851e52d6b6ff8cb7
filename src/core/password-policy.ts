// The password policy, after NIST SP 800-63B rev. 4: length is what counts, any characters
// are allowed, and there are no composition rules. Passwords are NFKC-normalised first so
// the same password typed on two keyboards hashes the same.
import { badRequest } from './errors'

export const PASSWORD_MAX_LENGTH = 128

export interface PasswordContext {
  email: string
  firstName: string
  lastName: string
}

/** Returns the normalised password to hash, or throws a 400 naming the rule that failed. */
export function checkPasswordPolicy(password: string, minLength: number, context: PasswordContext): string {
  const normalised = password.normalize('NFKC')
  const length = [...normalised].length
  if (length < minLength) throw badRequest(`Password must be at least ${minLength} characters long`)
  if (length > PASSWORD_MAX_LENGTH) throw badRequest(`Password must be at most ${PASSWORD_MAX_LENGTH} characters long`)
  const lower = normalised.toLowerCase()
  const localPart = context.email.split('@')[0] ?? ''
  if (localPart.length >= 3 && lower.includes(localPart.toLowerCase())) {
    throw badRequest('Password must not contain your e-mail address')
  }
  for (const name of [context.firstName, context.lastName]) {
    if (name.length >= 3 && lower.includes(name.toLowerCase())) throw badRequest('Password must not contain your name')
  }
  return normalised
}
