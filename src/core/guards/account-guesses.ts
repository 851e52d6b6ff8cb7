// The limits a guess at an account's secrets meets, wherever it is made: a login's password,
// a second-factor code at the login challenge, a password or code proving a session again
// (reauthenticate), a code turning the factor off. One budget per account for all of them
// (product spec §9, §18), so no endpoint is a side door with a budget of its own.
import type { Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { trustedDevice } from './device-cookies'
import { ipSubject, reserveGuess, type GuessReservation, type ReserveStep, type Rule } from './limits'

export interface AccountGuess {
  tenantId: string
  /** The address as typed (normalised), registered or not: unknown addresses meet the same limits. */
  email: string
  actor: Actor
  deviceCookie?: string
}

/**
 * The rules and subjects: a browser with this account's device cookie is held to its own
 * budget instead of the ones anybody can exhaust (the account's, the IP's), see
 * device-cookies.ts. `perIpFailures` adds the client IP's budget across accounts (credential
 * stuffing), which only a login, naming any address, needs.
 */
export function accountGuessChecks(deps: Pick<Deps, 'serverKeys' | 'limitRules'>, guess: AccountGuess, perIpFailures: boolean): { checks: Array<[Rule, string]>; device: string | null } {
  const { tenantId, email, actor } = guess
  const rules = deps.limitRules
  const device = trustedDevice(deps, tenantId, email, guess.deviceCookie)
  if (device) return { checks: [[rules.loginDevice, `${tenantId}:${email}:${device}`]], device }
  const checks: Array<[Rule, string]> = [
    [rules.loginAccountIp, `${tenantId}:${email}:${ipSubject(actor.ip)}`],
    [rules.loginAccount, `${tenantId}:${email}`],
  ]
  if (perIpFailures) checks.push([rules.loginIpFailures, ipSubject(actor.ip)])
  return { checks, device }
}

/** Admits one guess at the account (429 while it is blocked), counted before it is judged;
 *  `step` counts it in a transaction of the store's with other tries (limits.ts ReserveStep). */
export async function reserveAccountGuess<R = object>(
  deps: Pick<Deps, 'store' | 'clock' | 'serverKeys' | 'limitRules' | 'refusals'>,
  guess: AccountGuess,
  options: { perIpFailures: boolean; detail: Record<string, unknown> },
  step?: ReserveStep<R>,
): Promise<GuessReservation & R & { device: string | null }> {
  const { checks, device } = accountGuessChecks(deps, guess, options.perIpFailures)
  const reservation = await reserveGuess(deps, checks, { type: 'login.limited', actor: guess.actor, tenantId: guess.tenantId, detail: options.detail }, step)
  return { ...reservation, device }
}

/**
 * Runs `work` in the account's turn (guess-turns.ts). A browser with this account's device
 * cookie takes its turns apart from everyone else's, as it has its own budget: a flood of
 * guesses from elsewhere fills the account's queue, never the owner's.
 */
export function inAccountTurn<T>(deps: Pick<Deps, 'serverKeys' | 'guessTurns'>, guess: Pick<AccountGuess, 'tenantId' | 'email' | 'deviceCookie'>, work: () => Promise<T>): Promise<T> {
  const device = trustedDevice(deps, guess.tenantId, guess.email, guess.deviceCookie)
  return deps.guessTurns.inTurn(device ? `device:${guess.tenantId}:${guess.email}:${device}` : `${guess.tenantId}:${guess.email}`, work)
}
