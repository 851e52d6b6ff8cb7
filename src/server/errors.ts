// The envelope every response uses, and the one place errors become responses. Registered
// before the routes (`.use(errors)` first): Elysia applies onError only to routes added
// after it, and answers plain text for the rest.
import { Elysia, ValidationError } from 'elysia'
import { AppError, badRequest, internalError, notFound, unauthorized, type ErrorCode } from '../core/errors'
import type { Logger } from '../log'

export interface Envelope<T> {
  statusCode: number
  message: string
  data: T
}

export const envelope = <T>(statusCode: number, message: string, data: T): Envelope<T> => ({ statusCode, message, data })

const hasJsonType = (value: unknown, type: string) =>
  type === 'integer' ? Number.isInteger(value) : type === 'array' ? Array.isArray(value) : type === 'null' ? value === null : typeof value === type && value !== null

/** A sentence naming the first field that failed, without echoing what was sent. */
function validationMessage(error: ValidationError): string {
  const first = error.all[0]
  const field = first && 'path' in first ? first.path.replace(/^\//, '').replaceAll('/', '.') : ''
  if (!field) return 'Request body must be a JSON object'
  const schema = first && 'schema' in first ? (first.schema as { type?: string; anyOf?: Array<{ type?: string; items?: { type?: string } }> }) : undefined
  // (an array that a union admits, with an element of the wrong type: that element is named, as the union's own message would say the array is no array)
  const value = first && 'value' in first ? first.value : undefined
  const items = Array.isArray(value) ? schema?.anyOf?.find((s) => s.type === 'array')?.items?.type : undefined
  const bad = items ? (value as unknown[]).findIndex((element) => !hasJsonType(element, items)) : -1
  if (items && bad >= 0) return `${field}.${bad} must be ${/^[aeiou]/.test(items) ? 'an' : 'a'} ${items}`
  // (a union, such as a string or an array of them, names each of its types)
  const expected = schema?.type ?? (schema?.anyOf?.every((s) => s.type) ? schema.anyOf.map((s) => s.type).join(' or ') : undefined)
  if (!expected) return `${field} is invalid`
  const what = `${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`
  // (a field that was sent, such as an optional one of a PATCH, is not missing: it is ill-typed)
  const sent = first && 'value' in first && first.value !== undefined
  return sent ? `${field} must be ${what}` : `${field} is required and must be ${what}`
}

/** Elysia's own errors as ours; anything else is a bug: a 500 that says nothing more. */
function toAppError(code: string | number, error: unknown): AppError {
  // Elysia wraps whatever a parser throws in its ParseError; ours (413, 400) ride as the cause.
  if (code === 'PARSE' && error instanceof Error && error.cause instanceof AppError) error = error.cause
  if (error instanceof AppError) return error
  switch (code) {
    case 'PARSE':
      return badRequest('Request body must be valid JSON')
    case 'VALIDATION':
      return badRequest(error instanceof ValidationError ? validationMessage(error) : 'Bad request')
    case 'NOT_FOUND':
      return notFound()
    case 'INVALID_COOKIE_SIGNATURE':
      return unauthorized()
  }
  return internalError()
}

/** The error code each failed request was answered with, for its log line and the metrics. */
export const errorCodes = new WeakMap<Request, ErrorCode>()

/**
 * An answer that asks the client to come back later (429, 503: it carries Retry-After) is
 * held `holdMs` before it leaves. Many clients retry at once instead of honouring Retry-After:
 * under a login flood, 150 of them turned each refusal straight into the next request, ~8,000
 * a second, and those cheap refusals took the event loop from every other route and the CPU
 * from the hashes they waited for. Held, each such client asks a few times a second. A client
 * that honours Retry-After (a second or more) loses nothing. At most `maxHeld` answers wait at
 * once, so many connections cannot pile up timers; past that they leave at once.
 */
export interface RefusalHold {
  holdMs: number
  maxHeld: number
}

/** Draws an error as a page where the request was for one (server/pages/error-page.ts); null elsewhere. */
export type ErrorPage = (request: Request, error: AppError) => { body: string; headers: Record<string, string> } | null

export const errors = (logger: Logger, hold: RefusalHold, errorPage: ErrorPage = () => null) => {
  let held = 0
  const answer = <T>(body: T, retryAfter: number | undefined): T | Promise<T> => {
    if (retryAfter === undefined || hold.holdMs <= 0 || held >= hold.maxHeld) return body
    held++
    return Bun.sleep(hold.holdMs).then(() => {
      held--
      return body
    })
  }
  return new Elysia({ name: 'errors' }).onError({ as: 'global' }, ({ code, error, set, request }) => {
    const appError = toAppError(code, error)
    if (appError.code === 'internal') {
      // The stack goes to the operator's log, never to the client.
      logger.log('error', 'unhandled error', {
        method: request.method,
        path: new URL(request.url).pathname,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      })
    }
    errorCodes.set(request, appError.code)
    set.status = appError.status
    if (appError.retryAfter !== undefined) set.headers['retry-after'] = String(appError.retryAfter)
    const page = errorPage(request, appError)
    if (page) {
      Object.assign(set.headers, page.headers)
      return answer(page.body, appError.retryAfter)
    }
    set.headers['cache-control'] = 'no-store'
    set.headers['content-type'] = 'application/json; charset=utf-8'
    if (appError.details.challenge !== undefined) set.headers['www-authenticate'] = appError.details.challenge
    return answer(envelope(appError.status, appError.message, null), appError.retryAfter)
  })
}
