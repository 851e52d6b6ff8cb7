// Errors are values: core raises an AppError with the HTTP status and the public message,
// and the server maps it to the envelope in exactly one place (src/server/errors.ts).
// Messages are shown to clients as they are, so they never carry secrets or internals.

export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Seconds, sent as Retry-After on 429 and 503. */
    readonly retryAfter?: number,
  ) {
    super(message)
    this.name = 'AppError'
  }
}

export const badRequest = (message: string) => new AppError(400, message)
export const unauthorized = () => new AppError(401, 'Unauthorized')
export const forbidden = (message: string) => new AppError(403, message)
/** The HTTP API always says 'Resource not found'; the CLI names what it looked for. */
export const notFound = (message = 'Resource not found') => new AppError(404, message)
export const conflict = (message: string) => new AppError(409, message)
export const serviceUnavailable = (retryAfter = 1) => new AppError(503, 'Service unavailable', retryAfter)
