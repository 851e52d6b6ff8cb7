// The pages' cookies (product spec §20), apart from the API's (whose refresh cookie is
// SameSite=None and only sent to /api/v1/auth): host-only, Path=/, HttpOnly, SameSite=Lax (a
// cross-site POST carries none of them), Secure with the __Host- prefix where authd is served
// over TLS (AUTHD_PUBLIC_URL is https), plain names otherwise (a browser drops __Host- cookies
// that are not Secure).
//   session  the page session: the first refresh token of a session (core/sessions.ts) that
//            the pages present and never rotate; listed and ended like any session
//   form     a random value per browser that the forms' anti-forgery tokens are bound to
//   device   the device cookie of core/device-cookies.ts, as the API's authdDevice
//   federation  the state of a sign-in through an upstream provider (core/federation), for 10
//            minutes: the upstream's answer must carry it back to this browser
import type { Cookie } from 'elysia'
import type { Config } from '../../config'
import { DEVICE_COOKIE_MAX_AGE_SEC } from '../../core/guards/device-cookies'

export type CookieJar = Record<string, Cookie<unknown>>

export function pageCookieNames(config: Pick<Config, 'publicUrl'>) {
  const tls = config.publicUrl.startsWith('https:')
  const name = (plain: string, secure: string) => (tls ? secure : plain)
  return {
    tls,
    session: name('authd_session', '__Host-authd'),
    form: name('authd_form', '__Host-authd_form'),
    device: name('authd_device', '__Host-authd_device'),
    federation: name('authd_federation', '__Host-authd_federation'),
  }
}

export type PageCookieNames = ReturnType<typeof pageCookieNames>

export function readCookie(jar: CookieJar, name: string): string | undefined {
  const value = jar[name]?.value
  // (Elysia parses JSON-looking values; none of ours is one)
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** @param maxAgeSec omitted: until the browser closes */
export function setCookie(jar: CookieJar, names: PageCookieNames, name: string, value: string, maxAgeSec?: number) {
  jar[name]!.set({ value, httpOnly: true, secure: names.tls, sameSite: 'lax', path: '/', ...(maxAgeSec !== undefined && { maxAge: maxAgeSec }) })
}

export function clearCookie(jar: CookieJar, names: PageCookieNames, name: string) {
  jar[name]!.set({ value: '', httpOnly: true, secure: names.tls, sameSite: 'lax', path: '/', maxAge: 0, expires: new Date(0) })
}

export const DEVICE_MAX_AGE_SEC = DEVICE_COOKIE_MAX_AGE_SEC
