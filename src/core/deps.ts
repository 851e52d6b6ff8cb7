// What every core function is given: plain values, never an HTTP context.
import type { Config } from '../config'
import type { Clock } from './clock'
import type { DomainEvent, Signal } from './events'
import type { GuessTurns } from './guards/guess-turns'
import type { LimitRules } from './guards/limit-rules'
import type { PasswordHasher } from './accounts/passwords'
import type { RefusalTally } from './guards/refusals'
import type { KeyRing } from './sessions/key-ring'
import type { Store } from './store'

export interface Deps {
  store: Store
  clock: Clock
  config: Config
  hasher: PasswordHasher
  keyRing: KeyRing
  /** Server-side HMAC keys, kept in the database so every instance shares them. */
  serverKeys: {
    /** Derives a refresh token's successor (see sessions.ts). */
    refreshSuccessor: string
    /** Keys OTP hashes, and the hashed keys of password-reset requests and limit counters. */
    hmac: string
    /** Encrypts what must be stored yet read back (seal() in secrets.ts). */
    sealing: string
  }
  limitRules: LimitRules
  /** Guesses at one account judged one at a time in this process (guess-turns.ts). */
  guessTurns: GuessTurns
  /** Refused requests, counted and written in aggregate (see refusals.ts). */
  refusals: RefusalTally
  /** Told whenever mail is queued, so a running worker delivers it at once. */
  mailQueued: { notify(): void }
  /** What core reports as it decides (core/events.ts): the metrics listen. */
  events: Signal<DomainEvent>
}
