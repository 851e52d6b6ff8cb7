// Device cookies (OWASP's answer to lock-out attacks): a browser that has proven it can log in
// to an account (a successful login, or a password changed with an OTP from the account's
// mailbox) gets a cookie naming that account. Holding it, the browser is exempt from the
// account-wide limits an attacker can trigger from anywhere (the account's back-off, the
// client IP's budget) and has a back-off budget of its own instead. So a lock an attacker
// sets never keeps the owner out of a browser they have used, while every client's guessing
// stays bounded: untrusted clients share the account's budget, each trusted device has its own.
//
// The cookie is stateless: `<nonce>.<HMAC(server key, tenant, address, nonce)>`. Only authd can
// make one, it is only good for the account it names, and the nonce identifies the device's
// own budget. It grants nothing by itself: the password (or OTP) is still required.
import type { Deps } from '../deps'
import { hmacSha256, randomToken, safeEqual } from '../secrets'

export const DEVICE_COOKIE_MAX_AGE_SEC = 365 * 86400

const mac = (deps: Pick<Deps, 'serverKeys'>, tenantId: string, email: string, nonce: string) => hmacSha256(deps.serverKeys.hmac, `device:${tenantId}:${email}:${nonce}`)

export function issueDeviceCookie(deps: Pick<Deps, 'serverKeys'>, tenantId: string, email: string): string {
  const nonce = randomToken(16)
  return `${nonce}.${mac(deps, tenantId, email, nonce)}`
}

/** The device id (its nonce) if `presented` is a device cookie for this account, else null. */
export function trustedDevice(deps: Pick<Deps, 'serverKeys'>, tenantId: string, email: string, presented: string | undefined): string | null {
  if (!presented || presented.length > 100) return null
  const [nonce, tag, extra] = presented.split('.')
  if (!nonce || !tag || extra !== undefined) return null
  return safeEqual(tag, mac(deps, tenantId, email, nonce)) ? nonce : null
}
