// The authdDevice cookie (core/device-cookies.ts): set by a successful login or password
// change, sent back with later ones. Same attributes as the refresh cookie: HttpOnly (scripts
// never see it), Secure, SameSite=None (apps on another site log in with credentials), and
// only sent to the auth API.
import type { Cookie } from 'elysia'
import { DEVICE_COOKIE_MAX_AGE_SEC } from '../../core/guards/device-cookies'
import { REFRESH_COOKIE_PATH } from './refresh-cookie'

export const DEVICE_COOKIE = 'authdDevice'

export function setDeviceCookie(cookie: Cookie<unknown>, value: string) {
  cookie.set({ value, httpOnly: true, secure: true, sameSite: 'none', path: REFRESH_COOKIE_PATH, maxAge: DEVICE_COOKIE_MAX_AGE_SEC })
}

/** The value as sent; anything Elysia parsed into a non-string counts as absent. */
export function readDeviceCookie(cookie: Cookie<unknown> | undefined): string | undefined {
  return typeof cookie?.value === 'string' ? cookie.value : undefined
}
