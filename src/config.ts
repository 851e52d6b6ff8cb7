// Environment + flags -> one typed, validated Config. Every setting has a default, so
// `authd serve` runs with nothing set; a bad value stops start-up with one clear line.
import { existsSync } from 'node:fs'
import addressparser from 'nodemailer/lib/addressparser'
import { resolve } from 'node:path'
import ipaddr from 'ipaddr.js'
import type { RefreshTokenFormat } from './core/refresh-tokens'

export interface Config {
  port: number
  host: string
  dataDir: string
  /** A SQLite file path (from a path, `file:` or `sqlite:` URL, or the data-dir default);
   *  empty when PostgreSQL is selected. */
  databasePath: string
  /** A postgres:// or postgresql:// URL: PostgreSQL instead of the SQLite file. */
  postgresUrl?: string
  /** PostgreSQL connections per instance. */
  databasePoolSize: number
  /** Where clients reach authd; its origin is trusted by the Origin check. */
  publicUrl: string
  issuer: string
  accessTokenTtlSec: number
  refreshTtlSec: number
  refreshRememberTtlSec: number
  sessionMaxAgeSec: number
  refreshGraceSec: number
  /** The format of a new session's refresh tokens (core/refresh-tokens.ts): `hash` is the
   *  earlier one, which older versions of authd read, for a rolling upgrade from them. */
  refreshTokenFormat: RefreshTokenFormat
  setupTokenTtlSec: number
  argon2MemoryKib: number
  argon2TimeCost: number
  hashConcurrency: number
  /** Logins are refused (503) when the queued hashing work would take longer than this. */
  hashMaxWaitMs: number
  /** How long an answer that asks the client to come back later (429, 503) is held before it leaves. */
  refusalHoldMs: number
  passwordMinLength: number
  corsOrigins: string[]
  maxBodyBytes: number
  /** smtp:// or smtps:// URL; unset: mail is written to .eml files under the data dir. */
  smtpUrl?: string
  mailFrom: string
  mailMaxAttempts: number
  /** Optional page where invited users set their password; the token is appended as #token=. */
  inviteUrl?: string
  /** PEM files: with both set, authd serves HTTPS itself. */
  tls?: { certFile: string; keyFile: string }
  /** Where Prometheus scrapes /metrics: a listener of its own, never the public port. Unset: off. */
  metricsAddr?: { host: string; port: number }
  /** Peers whose X-Forwarded-For is believed: [address, prefix length] pairs. */
  trustedProxies: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>
  limits: LimitSettings
  retention: RetentionSettings
  webhooks: WebhookSettings
}

/** Where webhooks may go (core/webhooks/address.ts). */
export interface WebhookSettings {
  /** `http://` to a loopback address is allowed (a receiver on the same machine). */
  allowInsecure: boolean
  /** Private, loopback and link-local addresses allowed: all of them, or these ranges. */
  allowPrivate: 'all' | Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>
}

/** How long rows are kept after they stop mattering (pruned in the background). */
export interface RetentionSettings {
  auditSec: number
  /** Ended sessions (revoked or past their absolute end) and their tokens. */
  sessionsSec: number
  /** Delivered or expired mail (metadata only: bodies are erased at delivery). */
  mailSec: number
  /** Delivered or dead webhook deliveries. */
  webhooksSec: number
  /** Forgot-password request records, and spent or expired OTPs and setup tokens. */
  resetDataSec: number
}

/** The abuse limits of product spec §9 (all counts and durations configurable). */
export interface LimitSettings {
  /** Per (account, IP): back-off after this many consecutive failed logins. */
  loginBackoffAfter: number
  /** Per account across IPs (NIST's cap of 100). */
  loginAccountBackoffAfter: number
  /** The back-off starts at 1 s and doubles up to this. */
  loginBackoffMaxSec: number
  /** Per client IP: failed logins allowed per 10 minutes. */
  loginIpFailuresPer10Min: number
  /** Per address: one reset mail per this many seconds, and at most `forgotAddressPerHour`. */
  forgotAddressIntervalSec: number
  forgotAddressPerHour: number
  /** Per client IP: forgot-password requests per hour. */
  forgotIpPerHour: number
  /** Per client IP: sign-up requests per hour. */
  signupIpPerHour: number
  /** Per client IP: change-password, setup-password and verify-email requests per 10 minutes. */
  passwordIpPer10Min: number
  /** Per client IP: passkey sign-in options (each stores a challenge) per 10 minutes. */
  passkeyOptionsIpPer10Min: number
  /** Per account: consecutive wrong OTPs (across OTPs) before change-password is refused ... */
  otpFailuresBeforeLockout: number
  /** ... for this long. */
  otpLockoutSec: number
}

/** Every AUTHD_* variable authd reads (docs/configuration.md lists each one). */
export const SETTINGS = [
  'AUTHD_ENV_FILE',
  'AUTHD_DATA_DIR',
  'AUTHD_DATABASE_URL',
  'AUTHD_ACCESS_TOKEN_TTL',
  'AUTHD_ARGON2_MEMORY_KIB',
  'AUTHD_ARGON2_TIME_COST',
  'AUTHD_CORS_ORIGINS',
  'AUTHD_DATABASE_POOL',
  'AUTHD_FORGOT_ADDRESS_INTERVAL',
  'AUTHD_FORGOT_ADDRESS_PER_HOUR',
  'AUTHD_FORGOT_IP_PER_HOUR',
  'AUTHD_HASH_CONCURRENCY',
  'AUTHD_HASH_MAX_WAIT_MS',
  'AUTHD_HOST',
  'AUTHD_INVITE_URL',
  'AUTHD_ISSUER',
  'AUTHD_LOGIN_ACCOUNT_BACKOFF_AFTER',
  'AUTHD_LOGIN_BACKOFF_AFTER',
  'AUTHD_LOGIN_BACKOFF_MAX',
  'AUTHD_LOGIN_IP_FAILURES',
  'AUTHD_MAIL_FROM',
  'AUTHD_MAIL_MAX_ATTEMPTS',
  'AUTHD_METRICS_ADDR',
  'AUTHD_OTP_FAILURES_BEFORE_LOCKOUT',
  'AUTHD_OTP_LOCKOUT',
  'AUTHD_PASSWORD_IP_PER_10MIN',
  'AUTHD_PASSKEY_OPTIONS_IP_PER_10MIN',
  'AUTHD_PASSWORD_MIN_LENGTH',
  'AUTHD_PORT',
  'AUTHD_PUBLIC_URL',
  'AUTHD_REFRESH_GRACE',
  'AUTHD_REFRESH_REMEMBER_TTL',
  'AUTHD_REFRESH_TOKEN_FORMAT',
  'AUTHD_REFRESH_TTL',
  'AUTHD_REFUSAL_HOLD_MS',
  'AUTHD_RETAIN_AUDIT',
  'AUTHD_RETAIN_MAIL',
  'AUTHD_RETAIN_RESET_DATA',
  'AUTHD_RETAIN_SESSIONS',
  'AUTHD_RETAIN_WEBHOOKS',
  'AUTHD_SESSION_MAX_AGE',
  'AUTHD_SETUP_TOKEN_TTL',
  'AUTHD_SIGNUP_IP_PER_HOUR',
  'AUTHD_SMTP_URL',
  'AUTHD_TRUSTED_PROXIES',
  'AUTHD_TLS_CERT',
  'AUTHD_TLS_KEY',
  'AUTHD_WEBHOOKS_ALLOW_INSECURE',
  'AUTHD_WEBHOOKS_ALLOW_PRIVATE',
] as const
export type Setting = (typeof SETTINGS)[number]

/** Once a setting; refused with a line saying what to do instead. */
const RETIRED = ['AUTHD_AUDIENCE']

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
export function defaultPublicUrl(host: string, port: number, https = false): string {
  return `${https ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`
}

function readTls(env: Partial<Record<Setting, string>>): Config['tls'] {
  const certFile = env.AUTHD_TLS_CERT || undefined
  const keyFile = env.AUTHD_TLS_KEY || undefined
  if (!certFile && !keyFile) return undefined
  if (!certFile || !keyFile) throw new ConfigError('AUTHD_TLS_CERT and AUTHD_TLS_KEY must be set together')
  for (const [name, file] of [['AUTHD_TLS_CERT', certFile], ['AUTHD_TLS_KEY', keyFile]] as const) {
    if (!existsSync(file)) throw new ConfigError(`${name}: no such file ${file}`)
  }
  return { certFile: resolve(certFile), keyFile: resolve(keyFile) }
}

/** What AUTHD_DATABASE_URL may name: PostgreSQL, or a SQLite file (a path, sqlite: or file:). */
const DATABASE_URL_FORMS = 'AUTHD_DATABASE_URL must be postgres://user:password@host:5432/authd, or a SQLite file (a path, sqlite:PATH or file:PATH)'

/** An SMTP server's URL: smtp:// or smtps:// (its password never repeated back). */
export function validateSmtpUrl(name: string, raw: string): string {
  if (!/^smtps?:\/\/[^/]/i.test(raw)) throw new ConfigError(`${name} must be an smtp:// or smtps:// URL (got "${raw.replace(/\/\/[^@]*@/, '//…@')}")`)
  return raw
}

/** The From of authd's mail: exactly one address, with or without a name (`Acme <auth@acme.example>`).
 *  Anything else went out with an empty sender, or to two. */
export function validateMailFrom(name: string, raw: string): string {
  const parsed = addressparser(raw, { flatten: true })
  if (parsed.length !== 1 || !/^[^\s@<>]+@[^\s@<>]+$/.test(parsed[0]!.address)) {
    throw new ConfigError(`${name} must be one address, such as auth@acme.example or "Acme <auth@acme.example>"`)
  }
  return raw
}

export function databasePathFrom(databaseUrl: string | undefined, dataDir: string): string {
  if (!databaseUrl) return resolve(dataDir, 'authd.db')
  if (/^postgres(ql)?:/i.test(databaseUrl)) return ''
  // Any other scheme (a typo such as postgress://, or mysql://) is no file name: taken as one,
  // it made a SQLite file whose path held the URL's password, and printed it.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(databaseUrl) && !/^(sqlite|file):/i.test(databaseUrl)) throw new ConfigError(DATABASE_URL_FORMS)
  const path = databaseUrl.replace(/^(sqlite|file):(\/\/)?/i, '')
  if (!path) throw new ConfigError('AUTHD_DATABASE_URL must name a SQLite file')
  return resolve(path)
}

/** The PostgreSQL URL, if AUTHD_DATABASE_URL names one (checked: a host and a database). */
export function postgresUrlFrom(databaseUrl: string | undefined): string | undefined {
  if (!databaseUrl || !/^postgres(ql)?:/i.test(databaseUrl)) return undefined
  try {
    const url = new URL(databaseUrl)
    if (!url.hostname || url.pathname.length < 2) throw new Error()
    // The client decodes them: a bad escape (%ZZ) would fail later, as an unexpected error.
    decodeURIComponent(url.username)
    decodeURIComponent(url.password)
    const mode = url.searchParams.get('sslmode')
    if (mode !== null && !['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'].includes(mode)) throw new Error()
  } catch {
    throw new ConfigError('AUTHD_DATABASE_URL must be a URL such as postgres://user:password@host:5432/authd?sslmode=require')
  }
  return databaseUrl
}

/**
 * KEY=VALUE lines, as systemd's EnvironmentFile reads them: blank lines and # comments are
 * skipped, and one pair of surrounding quotes is removed.
 */
export function parseEnvFile(text: string, file: string): Record<string, string> {
  const values: Record<string, string> = {}
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim()
    if (!line || line.startsWith('#')) return
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line)
    if (!match) throw new ConfigError(`${file}:${i + 1}: expected KEY=VALUE`)
    values[match[1]!] = match[2]!.replace(/^(['"])(.*)\1$/, '$2')
  })
  return values
}

/** Edits (insertions, deletions, substitutions) from `a` to `b`: how close a typo is. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = row
  }
  return previous[b.length]!
}

/**
 * AUTHD_* names that authd does not read, each with the closest setting when one is near: a
 * misspelt setting (AUTHD_CORS_ORIGIN) would otherwise leave the default in force, silently.
 * AUTHD_TEST_* belongs to the test suite.
 */
export function unknownSettings(env: Record<string, string | undefined>): Array<{ name: string; suggestion?: string }> {
  const known = new Set<string>([...SETTINGS, ...RETIRED])
  return Object.keys(env)
    .filter((name) => name.startsWith('AUTHD_') && !name.startsWith('AUTHD_TEST_') && !known.has(name))
    .sort()
    .map((name) => {
      const [closest] = SETTINGS.map((setting) => ({ setting, distance: editDistance(name, setting) })).sort((a, b) => a.distance - b.distance)
      return closest && closest.distance <= 3 ? { name, suggestion: closest.setting } : { name }
    })
}

export const describeUnknownSetting = ({ name, suggestion }: { name: string; suggestion?: string }) =>
  `${name} is not an authd setting${suggestion ? ` (did you mean ${suggestion}?)` : ''}: it is ignored`

/** "127.0.0.1:9464", "[::1]:9464" or ":9464" (loopback) -> host and port. */
function parseListenAddress(name: string, raw: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]*)):(\d{1,5})$/.exec(raw.trim())
  const port = match ? Number(match[3]) : NaN
  if (!match || port > 65535) throw new ConfigError(`${name} must be HOST:PORT such as 127.0.0.1:9464 (got "${raw}")`)
  return { host: match[1] ?? (match[2] || '127.0.0.1'), port }
}

function parseRefreshTokenFormat(name: string, raw: string): RefreshTokenFormat {
  if (raw === 'ordered' || raw === 'hash') return raw
  throw new ConfigError(`${name} must be ordered or hash (got "${raw}")`)
}

function parseSwitch(name: string, raw: string): boolean {
  if (raw === '1' || raw === 'true') return true
  if (raw === '0' || raw === 'false') return false
  throw new ConfigError(`${name} must be 1 or 0 (got "${raw}")`)
}

function parseProxies(name: string, raw: string): Config['trustedProxies'] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      try {
        if (entry.includes('/')) return ipaddr.parseCIDR(entry)
        const address = ipaddr.parse(entry)
        return [address, address.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number]
      } catch {
        throw new ConfigError(`${name} must list IP addresses or CIDRs such as 10.0.0.0/8 (got "${entry}")`)
      }
    })
}

export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: ConfigOverrides = {}): Config {
  const read = <T>(name: Setting, fallback: T, parse: (name: string, raw: string) => T): T => {
    const raw = env[name]
    return raw === undefined || raw === '' ? fallback : parse(name, raw)
  }
  const int = (min: number, max: number) => (name: string, raw: string) => parseInteger(name, raw, min, max)
  const str = (_: string, raw: string) => raw

  const port = overrides.port ?? read('AUTHD_PORT', 3000, int(0, 65535))
  const host = overrides.host ?? read('AUTHD_HOST', '127.0.0.1', str)
  const dataDir = resolve(overrides.dataDir ?? read('AUTHD_DATA_DIR', './data', str))
  const tls = readTls(env)
  const publicUrl = read('AUTHD_PUBLIC_URL', defaultPublicUrl(host, port, tls !== undefined), (name, raw) => {
    try {
      return new URL(raw).origin
    } catch {
      throw new ConfigError(`${name} must be a URL such as https://auth.example.com (got "${raw}")`)
    }
  })

  if (env.AUTHD_AUDIENCE) {
    throw new ConfigError('AUTHD_AUDIENCE is replaced by one audience per tenant: unset it, and use `authd tenants update ID --audience A` to keep an old value')
  }

  return {
    port,
    host,
    dataDir,
    databasePath: databasePathFrom(overrides.databaseUrl ?? env.AUTHD_DATABASE_URL, dataDir),
    postgresUrl: postgresUrlFrom(overrides.databaseUrl ?? env.AUTHD_DATABASE_URL),
    databasePoolSize: read('AUTHD_DATABASE_POOL', 10, int(1, 1000)),
    publicUrl,
    issuer: read('AUTHD_ISSUER', publicUrl, str),
    accessTokenTtlSec: read('AUTHD_ACCESS_TOKEN_TTL', 15 * 60, parseDuration),
    refreshTtlSec: read('AUTHD_REFRESH_TTL', 86400, parseDuration),
    refreshRememberTtlSec: read('AUTHD_REFRESH_REMEMBER_TTL', 30 * 86400, parseDuration),
    sessionMaxAgeSec: read('AUTHD_SESSION_MAX_AGE', 90 * 86400, parseDuration),
    refreshGraceSec: read('AUTHD_REFRESH_GRACE', 10, parseDuration),
    refreshTokenFormat: read('AUTHD_REFRESH_TOKEN_FORMAT', 'ordered', parseRefreshTokenFormat),
    setupTokenTtlSec: read('AUTHD_SETUP_TOKEN_TTL', 72 * 3600, parseDuration),
    argon2MemoryKib: read('AUTHD_ARGON2_MEMORY_KIB', 19456, int(64, 4 * 1024 * 1024)),
    argon2TimeCost: read('AUTHD_ARGON2_TIME_COST', 2, int(1, 100)),
    hashConcurrency: read('AUTHD_HASH_CONCURRENCY', Math.max(1, navigator.hardwareConcurrency ?? 2), int(1, 1024)),
    hashMaxWaitMs: read('AUTHD_HASH_MAX_WAIT_MS', 1000, int(0, 60000)),
    refusalHoldMs: read('AUTHD_REFUSAL_HOLD_MS', 250, int(0, 10000)),
    passwordMinLength: read('AUTHD_PASSWORD_MIN_LENGTH', 15, int(8, 128)),
    corsOrigins: read('AUTHD_CORS_ORIGINS', [], parseOrigins),
    maxBodyBytes: 16 * 1024,
    smtpUrl: read('AUTHD_SMTP_URL', undefined, validateSmtpUrl),
    mailFrom: read('AUTHD_MAIL_FROM', 'authd <no-reply@localhost>', validateMailFrom),
    mailMaxAttempts: read('AUTHD_MAIL_MAX_ATTEMPTS', 30, int(1, 1000)),
    tls,
    metricsAddr: read('AUTHD_METRICS_ADDR', undefined, parseListenAddress),
    trustedProxies: read('AUTHD_TRUSTED_PROXIES', [], parseProxies),
    limits: {
      loginBackoffAfter: read('AUTHD_LOGIN_BACKOFF_AFTER', 5, int(1, 1000)),
      loginAccountBackoffAfter: read('AUTHD_LOGIN_ACCOUNT_BACKOFF_AFTER', 100, int(1, 100000)),
      loginBackoffMaxSec: read('AUTHD_LOGIN_BACKOFF_MAX', 15 * 60, parseDuration),
      loginIpFailuresPer10Min: read('AUTHD_LOGIN_IP_FAILURES', 100, int(1, 1000000)),
      forgotAddressIntervalSec: read('AUTHD_FORGOT_ADDRESS_INTERVAL', 60, parseDuration),
      forgotAddressPerHour: read('AUTHD_FORGOT_ADDRESS_PER_HOUR', 5, int(1, 1000)),
      forgotIpPerHour: read('AUTHD_FORGOT_IP_PER_HOUR', 30, int(1, 1000000)),
      signupIpPerHour: read('AUTHD_SIGNUP_IP_PER_HOUR', 20, int(1, 1000000)),
      passwordIpPer10Min: read('AUTHD_PASSWORD_IP_PER_10MIN', 30, int(1, 1000000)),
      passkeyOptionsIpPer10Min: read('AUTHD_PASSKEY_OPTIONS_IP_PER_10MIN', 300, int(1, 1000000)),
      otpFailuresBeforeLockout: read('AUTHD_OTP_FAILURES_BEFORE_LOCKOUT', 20, int(1, 1000)),
      otpLockoutSec: read('AUTHD_OTP_LOCKOUT', 15 * 60, parseDuration),
    },
    retention: {
      auditSec: read('AUTHD_RETAIN_AUDIT', 365 * 86400, parseDuration),
      sessionsSec: read('AUTHD_RETAIN_SESSIONS', 30 * 86400, parseDuration),
      mailSec: read('AUTHD_RETAIN_MAIL', 30 * 86400, parseDuration),
      webhooksSec: read('AUTHD_RETAIN_WEBHOOKS', 30 * 86400, parseDuration),
      resetDataSec: read('AUTHD_RETAIN_RESET_DATA', 7 * 86400, parseDuration),
    },
    webhooks: {
      allowInsecure: read('AUTHD_WEBHOOKS_ALLOW_INSECURE', false, parseSwitch),
      allowPrivate: read('AUTHD_WEBHOOKS_ALLOW_PRIVATE', [], (name, raw) => (raw === '1' || raw === 'true' ? 'all' : parseProxies(name, raw))),
    },
    inviteUrl: read('AUTHD_INVITE_URL', undefined, (name, raw) => {
      try {
        return new URL(raw).href
      } catch {
        throw new ConfigError(`${name} must be a URL such as https://app.example.com/setup (got "${raw}")`)
      }
    }),
  }
}
