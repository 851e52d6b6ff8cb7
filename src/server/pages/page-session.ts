// The pages' browser session (product spec §20): a session in the store like any other, whose
// refresh token the pages keep, unrotated, in their own cookie. The cookie holds that token
// sealed with a server key, not the token itself, so the two kinds of session stay apart: a
// page cookie presented at POST /refresh-token is no refresh token there (it would otherwise
// rotate the page session's token and sign the browser out), and an app's refresh token set
// as the page cookie opens no page.
//
// One cookie serves every tenant of this authd, so a sign-in in a browser that already holds a
// page session ends that session first: the browser keeps one session, not a live one it can no
// longer reach or end.
import type { Actor } from '../../core/audit/audit'
import type { Deps } from '../../core/deps'
import { logout, type LoginResult } from '../../core/sessions/sessions'
import { seal, unseal } from '../../core/secrets'
import type { Tenant } from '../../core/types'
import { clearDomainCookie, setDomainCookie } from './domain-cookie'
import { clearCookie, DEVICE_MAX_AGE_SEC, readCookie, setCookie, type CookieJar, type PageCookieNames } from './cookies'

const CONTEXT = 'authd page session'

type Keys = Pick<Deps, 'serverKeys'>

/** The refresh token of the browser's page session, or undefined (no cookie, or not one authd sealed). */
export function pageSessionToken(deps: Keys, jar: CookieJar, names: PageCookieNames): string | undefined {
  const sealed = readCookie(jar, names.session)
  if (!sealed || sealed.length > 512) return undefined
  try {
    return unseal(deps.serverKeys.sealing, CONTEXT, sealed)
  } catch {
    return undefined
  }
}

/** Signs the browser in: ends the session its cookie held (any tenant's), then keeps the new
 *  one, and gives it the tenant's forward-auth cookie where the tenant protects a domain. */
export async function startPageSession(deps: Keys & Pick<Deps, 'store' | 'clock' | 'config'>, jar: CookieJar, names: PageCookieNames, tenant: Tenant, session: LoginResult, actor: Actor) {
  const previous = pageSessionToken(deps, jar, names)
  if (previous !== undefined && previous !== session.refreshToken) await logout(deps, previous, actor)
  // Without "keep me signed in" the cookie ends with the browser (a shared computer), and the
  // session itself a day after the sign-in at most.
  setCookie(jar, names, names.session, seal(deps.serverKeys.sealing, CONTEXT, session.refreshToken), session.rememberMe ? session.refreshMaxAgeSec : undefined)
  setCookie(jar, names, names.device, session.deviceCookie, DEVICE_MAX_AGE_SEC)
  setDomainCookie(deps, jar, tenant, session.refreshToken, session.rememberMe ? session.refreshMaxAgeSec : undefined)
}

/** Signs the browser out: its session ends (as POST /logout ends one), and with it every
 *  protected application's access; the cookies are cleared. */
export async function endPageSession(deps: Keys & Pick<Deps, 'store' | 'clock' | 'config'>, jar: CookieJar, names: PageCookieNames, tenant: Tenant, actor: Actor) {
  await logout(deps, pageSessionToken(deps, jar, names), actor)
  clearCookie(jar, names, names.session)
  clearDomainCookie(deps, jar, tenant)
}
