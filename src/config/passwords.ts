// Passwords: the policy's minimum length and the argon2id hashing that stores them.
import { int, type Read } from './parse'

export interface PasswordSettings {
  argon2MemoryKib: number
  argon2TimeCost: number
  hashConcurrency: number
  /** Logins are refused (503) when the queued hashing work would take longer than this. */
  hashMaxWaitMs: number
  passwordMinLength: number
}

export function readPasswordSettings(read: Read): PasswordSettings {
  return {
    argon2MemoryKib: read('AUTHD_ARGON2_MEMORY_KIB', 19456, int(64, 4 * 1024 * 1024)),
    argon2TimeCost: read('AUTHD_ARGON2_TIME_COST', 2, int(1, 100)),
    hashConcurrency: read('AUTHD_HASH_CONCURRENCY', Math.max(1, navigator.hardwareConcurrency ?? 2), int(1, 1024)),
    hashMaxWaitMs: read('AUTHD_HASH_MAX_WAIT_MS', 1000, int(0, 60000)),
    passwordMinLength: read('AUTHD_PASSWORD_MIN_LENGTH', 15, int(8, 128)),
  }
}
