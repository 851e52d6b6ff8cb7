// Environment + flags -> one typed, validated Config. Every setting has a default, so
// `authd serve` runs with nothing set; a bad value stops start-up with one clear line.
import { resolve } from 'node:path'

export interface Config {
  port: number
  host: string
  dataDir: string
  /** A SQLite file path (from a path, `file:` or `sqlite:` URL, or the data-dir default). */
  databasePath: string
  /** Where clients reach authd; its origin is trusted by the Origin check. */
  publicUrl: string
  issuer: string
  audience: string
  accessTokenTtlSec: number
  refreshTtlSec: number
  refreshRememberTtlSec: number
  sessionMaxAgeSec: number
  refreshGraceSec: number
  setupTokenTtlSec: number
  argon2MemoryKib: number
  argon2TimeCost: number
  hashConcurrency: number
  hashQueueMax: number
  passwordMinLength: number
  corsOrigins: string[]
  maxBodyBytes: number
  /** smtp:// or smtps:// URL; unset: mail is written to .eml files under the data dir. */
  smtpUrl?: string
  mailFrom: string
  mailMaxAttempts: number
  /** Optional page where invited users set their password; the token is appended as #token=. */
  inviteUrl?: string
}

export type ConfigOverrides = Partial<Pick<Config, 'port' | 'host' | 'dataDir'>> & { databaseUrl?: string }

export class ConfigError extends Error {}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 }

/** "900", "900s", "15m", "72h", "30d" -> seconds. */
export function parseDuration(name: string, raw: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(raw.trim())
  const seconds = match ? Number(match[1]) * UNITS[match[2] || 's']! : NaN
  if (!Number.isSafeInteger(seconds) || seconds <= 0) {
    throw new ConfigError(`${name} must be a duration such as 900, 15m, 72h or 30d (got "${raw}")`)
  }
  return seconds
}

function parseInteger(name: string, raw: string, min: number, max: number): number {
  const value = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`)
  }
  return value
}

function parseOrigins(name: string, raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((origin) => {
      try {
        const url = new URL(origin)
        if (url.origin === 'null' || url.origin !== origin.replace(/\/$/, '')) throw new Error()
        return url.origin
      } catch {
        throw new ConfigError(`${name} must list origins such as https://app.example.com (got "${origin}")`)
      }
    })
}

/** Where authd is reached when AUTHD_PUBLIC_URL is not set: the address it listens on. */
export function defaultPublicUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}

export function databasePathFrom(databaseUrl: string | undefined, dataDir: string): string {
  if (!databaseUrl) return resolve(dataDir, 'authd.db')
  if (/^postgres(ql)?:/i.test(databaseUrl)) {
    throw new ConfigError('AUTHD_DATABASE_URL: PostgreSQL is not supported by this version yet; use a SQLite path')
  }
  const path = databaseUrl.replace(/^(sqlite|file):(\/\/)?/i, '')
  if (!path) throw new ConfigError('AUTHD_DATABASE_URL must name a SQLite file')
  return resolve(path)
}

export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: ConfigOverrides = {}): Config {
  const read = <T>(name: string, fallback: T, parse: (name: string, raw: string) => T): T => {
    const raw = env[name]
    return raw === undefined || raw === '' ? fallback : parse(name, raw)
  }
  const int = (min: number, max: number) => (name: string, raw: string) => parseInteger(name, raw, min, max)
  const str = (_: string, raw: string) => raw

  const port = overrides.port ?? read('AUTHD_PORT', 3000, int(0, 65535))
  const host = overrides.host ?? read('AUTHD_HOST', '127.0.0.1', str)
  const dataDir = resolve(overrides.dataDir ?? read('AUTHD_DATA_DIR', './data', str))
  const publicUrl = read('AUTHD_PUBLIC_URL', defaultPublicUrl(host, port), (name, raw) => {
    try {
      return new URL(raw).origin
    } catch {
      throw new ConfigError(`${name} must be a URL such as https://auth.example.com (got "${raw}")`)
    }
  })

  return {
    port,
    host,
    dataDir,
    databasePath: databasePathFrom(overrides.databaseUrl ?? env.AUTHD_DATABASE_URL, dataDir),
    publicUrl,
    issuer: read('AUTHD_ISSUER', publicUrl, str),
    audience: read('AUTHD_AUDIENCE', 'authd', str),
    accessTokenTtlSec: read('AUTHD_ACCESS_TOKEN_TTL', 15 * 60, parseDuration),
    refreshTtlSec: read('AUTHD_REFRESH_TTL', 86400, parseDuration),
    refreshRememberTtlSec: read('AUTHD_REFRESH_REMEMBER_TTL', 30 * 86400, parseDuration),
    sessionMaxAgeSec: read('AUTHD_SESSION_MAX_AGE', 90 * 86400, parseDuration),
    refreshGraceSec: read('AUTHD_REFRESH_GRACE', 10, parseDuration),
    setupTokenTtlSec: read('AUTHD_SETUP_TOKEN_TTL', 72 * 3600, parseDuration),
    argon2MemoryKib: read('AUTHD_ARGON2_MEMORY_KIB', 19456, int(64, 4 * 1024 * 1024)),
    argon2TimeCost: read('AUTHD_ARGON2_TIME_COST', 2, int(1, 100)),
    hashConcurrency: read('AUTHD_HASH_CONCURRENCY', Math.max(1, navigator.hardwareConcurrency ?? 2), int(1, 1024)),
    hashQueueMax: read('AUTHD_HASH_QUEUE', 256, int(0, 100000)),
    passwordMinLength: read('AUTHD_PASSWORD_MIN_LENGTH', 15, int(8, 128)),
    corsOrigins: read('AUTHD_CORS_ORIGINS', [], parseOrigins),
    maxBodyBytes: 16 * 1024,
    smtpUrl: read('AUTHD_SMTP_URL', undefined, (name, raw) => {
      if (!/^smtps?:\/\/[^/]/i.test(raw)) throw new ConfigError(`${name} must be an smtp:// or smtps:// URL (got "${raw.replace(/\/\/[^@]*@/, '//…@')}")`)
      return raw
    }),
    mailFrom: read('AUTHD_MAIL_FROM', 'authd <no-reply@localhost>', str),
    mailMaxAttempts: read('AUTHD_MAIL_MAX_ATTEMPTS', 30, int(1, 1000)),
    inviteUrl: read('AUTHD_INVITE_URL', undefined, (name, raw) => {
      try {
        return new URL(raw).href
      } catch {
        throw new ConfigError(`${name} must be a URL such as https://app.example.com/setup (got "${raw}")`)
      }
    }),
  }
}
