// The refreshToken cookie, with the attributes the interface requires. Path limits it to
// the auth API, so the browser never sends it to anything else on the same host.
import type { Cookie } from 'elysia'

export const REFRESH_COOKIE = 'refreshToken'
export const REFRESH_COOKIE_PATH = '/api/v1/auth'

const attributes = { httpOnly: true, secure: true, sameSite: 'none', path: REFRESH_COOKIE_PATH } as const

export function setRefreshCookie(cookie: Cookie<unknown>, token: string, maxAgeSec: number) {
  cookie.set({ ...attributes, value: token, maxAge: maxAgeSec })
}

export function clearRefreshCookie(cookie: Cookie<unknown>) {
  cookie.set({ ...attributes, value: '', maxAge: 0, expires: new Date(0) })
}

/** The cookie's value as sent. Elysia parses JSON-looking cookie values into objects and
 *  numbers; a refresh token is never one, so anything but a string counts as absent. */
export function readRefreshCookie(cookie: Cookie<unknown>): string | undefined {
  return typeof cookie.value === 'string' ? cookie.value : undefined
}
