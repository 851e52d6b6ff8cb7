// What every core function is given: plain values, never an HTTP context.
import type { Config } from '../config'
import type { Clock } from './clock'
import type { PasswordHasher } from './passwords'
import type { KeyRing } from './signing-keys'
import type { Store } from './store'

export interface Deps {
  store: Store
  clock: Clock
  config: Config
  hasher: PasswordHasher
  keyRing: KeyRing
  /** Server-side key that derives a refresh token's successor (see sessions.ts). */
  refreshSuccessorKey: string
}
