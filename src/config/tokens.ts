// How long tokens and sessions live (product spec §4) and the format of new refresh tokens.
import { ConfigError, parseDuration, type Read } from './parse'

/** A new session's refresh tokens (core/sessions/refresh-tokens.ts): `ordered`, or `hash`, the
 *  earlier format older versions of authd read. */
export type RefreshTokenFormat = 'ordered' | 'hash'

export interface TokenSettings {
  accessTokenTtlSec: number
  refreshTtlSec: number
  refreshRememberTtlSec: number
  sessionMaxAgeSec: number
  refreshGraceSec: number
  /** The format of a new session's refresh tokens (core/refresh-tokens.ts): `hash` is the
   *  earlier one, which older versions of authd read, for a rolling upgrade from them. */
  refreshTokenFormat: RefreshTokenFormat
  setupTokenTtlSec: number
}

function parseRefreshTokenFormat(name: string, raw: string): RefreshTokenFormat {
  if (raw === 'ordered' || raw === 'hash') return raw
  throw new ConfigError(`${name} must be ordered or hash (got "${raw}")`)
}

export function readTokenSettings(read: Read): TokenSettings {
  return {
    accessTokenTtlSec: read('AUTHD_ACCESS_TOKEN_TTL', 15 * 60, parseDuration),
    refreshTtlSec: read('AUTHD_REFRESH_TTL', 86400, parseDuration),
    refreshRememberTtlSec: read('AUTHD_REFRESH_REMEMBER_TTL', 30 * 86400, parseDuration),
    sessionMaxAgeSec: read('AUTHD_SESSION_MAX_AGE', 90 * 86400, parseDuration),
    refreshGraceSec: read('AUTHD_REFRESH_GRACE', 10, parseDuration),
    refreshTokenFormat: read('AUTHD_REFRESH_TOKEN_FORMAT', 'ordered', parseRefreshTokenFormat),
    setupTokenTtlSec: read('AUTHD_SETUP_TOKEN_TTL', 72 * 3600, parseDuration),
  }
}
