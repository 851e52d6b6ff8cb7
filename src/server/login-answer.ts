// The login answer of the interface document: 201, the access token and user, the refresh
// cookie and the device cookie. Login, verify-email and mfa/verify all answer with it.
import type { Cookie } from 'elysia'
import type { LoginResult } from '../core/sessions/sessions'
import { envelope } from './errors'
import { DEVICE_COOKIE, setDeviceCookie } from './plugins/device-cookie'
import { REFRESH_COOKIE, setRefreshCookie } from './plugins/refresh-cookie'

export function loginAnswer(cookie: Record<string, Cookie<unknown>>, set: { status?: number | string }, session: LoginResult) {
  setRefreshCookie(cookie[REFRESH_COOKIE]!, session.refreshToken, session.refreshMaxAgeSec)
  setDeviceCookie(cookie[DEVICE_COOKIE]!, session.deviceCookie)
  set.status = 201
  return envelope(201, 'Login successful', { response: { accessToken: session.accessToken, user: session.user } })
}
