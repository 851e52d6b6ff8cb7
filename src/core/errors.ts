// Every error a client or an admin can see, declared once. Core raises them as values (an
// AppError with the HTTP status, a stable code and the public message), and the server maps
// them to the envelope in exactly one place (src/server/errors.ts). The code never changes
// once published: logs, metrics and scripts key on it, while messages may be reworded.
// Messages are shown as they are, so they never carry secrets or internals.

export type ErrorCode =
  | 'invalid_request'
  | 'weak_password'
  | 'invalid_otp'
  | 'invalid_code'
  | 'unauthorized'
  | 'user_disabled'
  | 'step_up_required'
  | 'invalid_credentials'
  | 'tenant_disabled'
  | 'cross_site'
  | 'tenant_user_password'
  | 'admin_scope_required'
  | 'signup_closed'
  | 'idempotency_conflict'
  | 'not_found'
  | 'conflict'
  | 'password_exists'
  | 'payload_too_large'
  | 'rate_limited'
  | 'unavailable'
  | 'internal'

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Seconds, sent as Retry-After on 429 and 503. */
    readonly retryAfter?: number,
    readonly details: {
      /** Sent as WWW-Authenticate: what the client must prove to be let through. */
      challenge?: string
      /** What the CLI prints instead of `message`: it may name what the admin typed, which an
       *  HTTP answer never repeats. */
      cliMessage?: string
      /** Which password rule refused (weak_password): pages say it in the reader's language. */
      passwordRule?: PasswordRule
      /** The number the rule names (its minimum or maximum length). */
      passwordRuleLimit?: number
    } = {},
  ) {
    super(message)
    this.name = 'AppError'
  }
}

/** A malformed or invalid request: the message names the field and what is wrong with it. */
export const badRequest = (message: string) => new AppError(400, 'invalid_request', message)
/** A password the policy refuses: the message names the rule. */
export type PasswordRule = 'too_short' | 'too_long' | 'email' | 'email_local_part' | 'name' | 'pattern' | 'common' | 'unicode'
export const weakPassword = (rule: PasswordRule, message: string, limit?: number) => new AppError(400, 'weak_password', message, undefined, { passwordRule: rule, ...(limit !== undefined && { passwordRuleLimit: limit }) })
/** Any OTP failure (wrong, expired, spent, unknown address): never says which. */
export const invalidOtp = () => new AppError(400, 'invalid_otp', 'Invalid or expired OTP')
/** Any failure of a second-factor code or its login challenge: never says which. */
export const invalidCode = () => new AppError(400, 'invalid_code', 'Invalid or expired code')
export const unauthorized = () => new AppError(401, 'unauthorized', 'Unauthorized')
/** A password or code that does not prove the signed-in user again (reauthenticate): never says which was wrong. */
export const invalidCredentials = () => new AppError(400, 'invalid_credentials', 'Invalid password or code')
/** A change that needs a recent proof of the user (product spec §18); the challenge is RFC 9470's. */
export const stepUpRequired = (maxAgeSec: number) =>
  new AppError(403, 'step_up_required', 'Step-up required: confirm your password or code with POST /api/v1/auth/reauthenticate', undefined, {
    challenge: `Bearer error="insufficient_user_authentication", max_age=${maxAgeSec}`,
  })
export const userDisabled = () => new AppError(403, 'user_disabled', 'User is disabled')
export const tenantDisabled = () => new AppError(403, 'tenant_disabled', 'Tenant is disabled')
export const crossSiteRefused = () => new AppError(403, 'cross_site', 'Cross-site request refused')
export const tenantUserCannotSetUpPassword = () => new AppError(403, 'tenant_user_password', 'Tenant users cannot set up passwords')
export const adminScopeRequired = () => new AppError(403, 'admin_scope_required', 'API key lacks the admin scope')
export const signupClosed = () => new AppError(403, 'signup_closed', 'Sign-up is closed')
export const notFound = (message = 'Resource not found') => new AppError(404, 'not_found', message)
/** An id that names nothing (or nothing the caller may see): the HTTP API says 'Resource not
 *  found' whatever was asked for, at any length; the CLI names what it looked for. */
export const notFoundById = (what: string, id: string) => new AppError(404, 'not_found', 'Resource not found', undefined, { cliMessage: `${what} not found: ${id}` })
export const conflict = (message: string) => new AppError(409, 'conflict', message)
export const idempotencyConflict = (message: string) => new AppError(409, 'idempotency_conflict', message)
export const alreadyHasPassword = () => new AppError(409, 'password_exists', 'User already has a password')
export const payloadTooLarge = () => new AppError(413, 'payload_too_large', 'Payload too large')
export const tooManyRequests = (retryAfterMs: number) => new AppError(429, 'rate_limited', 'Too many requests', Math.max(1, Math.ceil(retryAfterMs / 1000)))
export const serviceUnavailable = (retryAfter = 1) => new AppError(503, 'unavailable', 'Service unavailable', retryAfter)
export const internalError = () => new AppError(500, 'internal', 'Internal server error')
