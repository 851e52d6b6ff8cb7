// The device authorization grant (RFC 8628, product spec §26): a device with no browser (a CLI
// tool, a TV) asks for a device code and a user code; a person types the user code at
// /t/{tenant}/device, signed in, and approves or denies; the device polls the token endpoint
// meanwhile. Both codes are stored as SHA-256 only. An approval writes an authorization code
// (oidc_codes) bound to the approving user's page session, which the device's next poll
// redeems exactly as the authorization code grant does (tokens.ts redeemCode): spent once,
// the same grant, the same tokens.
import { audit, auditEvent, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { ipSubject, reserveGuess, settle, spendBudget, type Rule } from '../guards/limits'
import { randomToken, sha256 } from '../secrets'
import type { Caller } from '../sessions/signed-in-user'
import type { Tenant } from '../types'
import { SUPPORTED_SCOPES } from './authorization'
import { accessAtClient } from './client-access'
import { invalidGrant, invalidRequest, OAuthError } from './errors'
import { DEVICE_CODE_REDIRECT, redeemCode, type TokenDeps, type TokenResponse } from './tokens'
import type { DeviceAuthorization, OidcClient } from './types'

export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code'
/** RFC 8628 §6.1: consonants only, no look-alikes (no vowels either: no words). 20^8 ≈ 2^34.6 codes. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
const USER_CODE_LENGTH = 8
export const DEVICE_CODE_TTL_SEC = 600
export const DEVICE_POLL_INTERVAL_SEC = 5

/** A user code drawn uniformly (bytes of 240 and more are drawn again: 256 is no multiple of 20). */
export function newUserCode(): string {
  let code = ''
  while (code.length < USER_CODE_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(16))) {
      if (byte < 240 && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[byte % 20]
    }
  }
  return code
}

/** XXXX-XXXX, as shown and returned. */
export const formatUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`

/** A typed user code as stored (upper case, without dashes or spaces); null if it cannot be one. */
export function userCodeKey(typed: string): string | null {
  const key = typed.toUpperCase().replace(/[\s-]/g, '')
  return key.length === USER_CODE_LENGTH && [...key].every((c) => USER_CODE_ALPHABET.includes(c)) ? key : null
}

/** The hash of the authorization code an approval writes: derived from the stored device code hash, never a code anyone holds. */
const approvalCodeHash = (authorization: DeviceAuthorization) => sha256(`device:${authorization.deviceCodeHash}`)

/** The scopes a device may ask for: those of /authorize (openid required, unknown ones ignored). */
function deviceScopes(asked: string | undefined): string[] {
  const requested = (asked ?? '').split(' ').filter((s) => s !== '')
  if (!requested.includes('openid')) throw new OAuthError('invalid_scope', 'the openid scope is required')
  return SUPPORTED_SCOPES.filter((s) => requested.includes(s))
}

export interface DeviceAuthorizationResponse {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}

const MAX_USER_CODE_DRAWS = 5

/** POST /t/{tenant}/device_authorization (RFC 8628 §3.1–3.2), the client authenticated as at the token endpoint. */
export async function startDeviceAuthorization(deps: Pick<Deps, 'store' | 'clock' | 'serverKeys' | 'limitRules' | 'refusals'>, tenant: Tenant, issuer: string, client: OidcClient, input: { scope: string | undefined }, actor: Actor): Promise<DeviceAuthorizationResponse> {
  if (!client.device) throw new OAuthError('unauthorized_client', 'this client may not use the device grant (create it with --device)')
  const scopes = deviceScopes(input.scope)
  // Anyone may ask (a public client is named, not proved), each ask stores a row, and every
  // live user code is one more a guesser could hit: a budget per address.
  await spendBudget(deps, deps.limitRules.deviceStartIp, ipSubject(actor.ip), { type: 'device.limited', actor, tenantId: tenant.id })
  const now = deps.clock.now()
  const deviceCode = randomToken(32)
  const pending = (userCode: string): DeviceAuthorization => ({
    id: Bun.randomUUIDv7(),
    tenantId: tenant.id,
    clientId: client.id,
    deviceCodeHash: sha256(deviceCode),
    userCodeHash: sha256(userCode),
    issuer,
    scope: scopes.join(' '),
    intervalSec: DEVICE_POLL_INTERVAL_SEC,
    lastPolledAt: null,
    status: 'pending',
    userId: null,
    decidedAt: null,
    createdAt: now,
    expiresAt: now + DEVICE_CODE_TTL_SEC * 1000,
  })
  // Two live user codes alike (one chance in 2.56e10 per live code): the new one is drawn again.
  let userCode = newUserCode()
  for (let draw = 1; !(await deps.store.oidc.insertDeviceAuthorization(pending(userCode))); draw++) {
    if (draw === MAX_USER_CODE_DRAWS) throw new Error(`no free user code after ${MAX_USER_CODE_DRAWS} draws`)
    userCode = newUserCode()
  }
  await audit(deps, 'oidc.device_authorization_started', actor, { tenantId: tenant.id, detail: { clientId: client.id, scope: scopes.join(' ') } })
  const shown = formatUserCode(userCode)
  return {
    device_code: deviceCode,
    user_code: shown,
    verification_uri: `${issuer}/device`,
    verification_uri_complete: `${issuer}/device?user_code=${shown}`,
    expires_in: DEVICE_CODE_TTL_SEC,
    interval: DEVICE_POLL_INTERVAL_SEC,
  }
}

/** grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 §3.4–3.5). */
export async function deviceCodeGrant(deps: TokenDeps, tenant: Tenant, issuer: string, client: OidcClient, input: { deviceCode: string | undefined }, actor: Actor): Promise<TokenResponse> {
  if (!input.deviceCode) throw invalidRequest('device_code is required')
  const found = input.deviceCode.length <= 128 ? await deps.store.oidc.findDeviceAuthorization({ deviceCodeHash: sha256(input.deviceCode) }) : null
  // (another tenant's or client's device code is no code here: the same answer as an unknown one)
  if (!found || found.tenantId !== tenant.id || found.clientId !== client.id || found.issuer !== issuer) throw invalidGrant()
  const now = deps.clock.now()
  if (found.status === 'approved') {
    const code = await deps.store.oidc.findCode(approvalCodeHash(found))
    // Spent: the tokens went to the first poll after the approval, and to no other.
    if (!code || code.spentAt !== null) throw invalidGrant()
    if (code.expiresAt <= now) throw new OAuthError('expired_token', 'the device code has expired')
    return redeemCode(deps, tenant, issuer, client, code, actor)
  }
  if (found.expiresAt <= now) throw new OAuthError('expired_token', 'the device code has expired')
  if (found.status === 'denied') throw new OAuthError('access_denied', 'the user denied the request')
  // A poll sooner than the interval after the last one: slow_down, and the interval grows by
  // 5 s for good (§3.5). (Two polls racing may both pass: each still gets only "pending".)
  const tooSoon = found.lastPolledAt !== null && now - found.lastPolledAt < found.intervalSec * 1000
  await deps.store.oidc.recordDevicePoll(found.id, now, found.intervalSec + (tooSoon ? 5 : 0))
  if (tooSoon) throw new OAuthError('slow_down', `poll at most every ${found.intervalSec + 5} s`)
  throw new OAuthError('authorization_pending', 'the user has not yet approved or denied the request')
}

export type DeviceLookup =
  | { status: 'pending'; authorization: DeviceAuthorization; client: OidcClient; scopes: string[] }
  | { status: 'refused'; client: OidcClient }
  | { status: 'used' }
  | { status: 'unknown' }

/**
 * The device authorization a typed user code names, for the signed-in person on the device
 * page. Every look-up is a guess, counted per client IP and per account before the code is
 * looked at (reserveGuess: a burst of guesses counts as the same guesses in a row); a code that
 * names a real authorization takes its own counts back, a wrong one keeps them. A live code of
 * a client that does not admit the person (its allowed groups, product spec §23) is 'refused'
 * here already, before anything is shown of it to decide on (decideDevice asks again).
 */
export async function findByUserCode(deps: Pick<Deps, 'store' | 'clock' | 'serverKeys' | 'refusals' | 'limitRules'>, tenant: Tenant, typed: string, caller: Caller, actor: Actor): Promise<DeviceLookup> {
  const checks: Array<[Rule, string]> = [
    [deps.limitRules.deviceCodeIp, ipSubject(actor.ip)],
    [deps.limitRules.deviceCodeUser, caller.user.id],
  ]
  const guess = await reserveGuess(deps, checks, { type: 'device_code.limited', actor, tenantId: tenant.id })
  const key = userCodeKey(typed)
  const found = key === null ? null : await deps.store.oidc.findDeviceAuthorization({ userCodeHash: sha256(key) })
  const client = found && found.tenantId === tenant.id ? await deps.store.oidc.getClient(found.clientId) : null
  if (!found || !client) return { status: 'unknown' }
  await settle(deps, guess, 'success')
  if (found.status !== 'pending' || found.expiresAt <= deps.clock.now()) return { status: 'used' }
  if (!(await admitted(deps, tenant, client, caller, actor))) return { status: 'refused', client }
  return { status: 'pending', authorization: found, client, scopes: found.scope.split(' ') }
}

/** Whether the client admits the caller by its allowed groups; a refusal is audited, as at the authorization endpoint. */
async function admitted(deps: Pick<Deps, 'store' | 'clock'>, tenant: Tenant, client: OidcClient, caller: Caller, actor: Actor): Promise<boolean> {
  if ((await accessAtClient(deps, client, caller.user.id)).allowed) return true
  await audit(deps, 'oidc.access_denied', actor, { tenantId: tenant.id, userId: caller.user.id, detail: { clientId: client.id } })
  return false
}

/**
 * The signed-in person's answer on the device page. The first approval or denial wins ('used'
 * for a later one); a user the client does not admit (its allowed groups) is refused either way,
 * and the code stays open for someone it admits (an outsider who learnt a code cannot end a
 * colleague's sign-in by denying it).
 */
export async function decideDevice(
  deps: Pick<Deps, 'store' | 'clock'>,
  tenant: Tenant,
  found: { authorization: DeviceAuthorization; client: OidcClient },
  caller: Caller,
  decision: 'approve' | 'deny',
  actor: Actor,
): Promise<'approved' | 'denied' | 'used' | 'refused'> {
  const { authorization, client } = found
  const now = deps.clock.now()
  const about = { tenantId: tenant.id, userId: caller.user.id, detail: { clientId: client.id, scope: authorization.scope } }
  if (!(await admitted(deps, tenant, client, caller, actor))) return 'refused'
  if (decision === 'deny') {
    const denied = await deps.store.oidc.decideDeviceAuthorization(authorization.id, { status: 'denied', userId: caller.user.id, now, code: null })
    if (denied) await audit(deps, 'oidc.device_denied', actor, about)
    return denied ? 'denied' : 'used'
  }
  const session = await deps.store.sessions.findSession(caller.sessionId)
  const approved = await deps.store.oidc.decideDeviceAuthorization(authorization.id, {
    status: 'approved',
    userId: caller.user.id,
    now,
    code: {
      id: Bun.randomUUIDv7(),
      codeHash: approvalCodeHash(authorization),
      tenantId: tenant.id,
      clientId: client.id,
      userId: caller.user.id,
      sessionId: caller.sessionId,
      redirectUri: DEVICE_CODE_REDIRECT,
      codeChallenge: null,
      issuer: authorization.issuer,
      nonce: null,
      scope: authorization.scope,
      authAt: caller.authAt,
      amr: session?.family.amr ?? 'pwd',
      userEpoch: caller.user.sessionEpoch,
      createdAt: now,
      // (the device may collect its tokens until the device code expires)
      expiresAt: authorization.expiresAt,
      spentAt: null,
      familyId: null,
    },
  })
  if (!approved) return 'used'
  // Kept as a consent, so the account's applications page lists the device and can sign it out.
  const earlier = await deps.store.oidc.findConsent(caller.user.id, client.id)
  const scope = [...new Set([...(earlier?.scope.split(' ') ?? []), ...authorization.scope.split(' ')])].join(' ')
  await deps.store.oidc.saveConsent({ userId: caller.user.id, clientId: client.id, tenantId: tenant.id, scope, createdAt: now })
  await deps.store.audit.record(auditEvent(deps, 'oidc.device_approved', actor, about))
  return 'approved'
}
