// The envelope every response uses, and the one place errors become responses. Registered
// before the routes (`.use(errors)` first): Elysia applies onError only to routes added
// after it, and answers plain text for the rest.
import { Elysia, ValidationError } from 'elysia'
import { AppError } from '../core/errors'
import type { Logger } from '../log'

export interface Envelope<T> {
  statusCode: number
  message: string
  data: T
}

export const envelope = <T>(statusCode: number, message: string, data: T): Envelope<T> => ({ statusCode, message, data })

const MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  404: 'Resource not found',
  413: 'Payload too large',
  500: 'Internal server error',
}

/** A sentence naming the first field that failed, without echoing what was sent. */
function validationMessage(error: ValidationError): string {
  const first = error.all[0]
  const field = first && 'path' in first ? first.path.replace(/^\//, '').replaceAll('/', '.') : ''
  if (!field) return 'Request body must be a JSON object'
  const expected = first && 'schema' in first ? (first.schema as { type?: string }).type : undefined
  return expected ? `${field} is required and must be a ${expected}` : `${field} is invalid`
}

function toPublicError(code: string | number, error: unknown): { status: number; message: string; retryAfter?: number } {
  // Elysia wraps whatever a parser throws in its ParseError; ours (413, 400) ride as the cause.
  if (code === 'PARSE' && error instanceof Error && error.cause instanceof AppError) error = error.cause
  if (error instanceof AppError) return { status: error.status, message: error.message, retryAfter: error.retryAfter }
  switch (code) {
    case 'PARSE':
      return { status: 400, message: 'Request body must be valid JSON' }
    case 'VALIDATION':
      return { status: 400, message: error instanceof ValidationError ? validationMessage(error) : MESSAGES[400]! }
    case 'NOT_FOUND':
      return { status: 404, message: MESSAGES[404]! }
    case 'INVALID_COOKIE_SIGNATURE':
      return { status: 401, message: MESSAGES[401]! }
  }
  return { status: 500, message: MESSAGES[500]! }
}

export const errors = (logger: Logger) =>
  new Elysia({ name: 'errors' }).onError({ as: 'global' }, ({ code, error, set, request }) => {
    const { status, message, retryAfter } = toPublicError(code, error)
    if (status >= 500 && !(error instanceof AppError)) {
      // The stack goes to the operator's log, never to the client.
      logger.log('error', 'unhandled error', {
        method: request.method,
        path: new URL(request.url).pathname,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      })
    }
    set.status = status
    set.headers['cache-control'] = 'no-store'
    set.headers['content-type'] = 'application/json; charset=utf-8'
    if (retryAfter !== undefined) set.headers['retry-after'] = String(retryAfter)
    return envelope(status, message, null)
  })
