// Every AUTHD_* name authd reads, the env file that may hold them, and the names it does not
// read (a typo would otherwise leave a default in force, silently).
import { ConfigError } from './error'

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
  'AUTHD_PROVIDERS_ALLOW_PRIVATE',
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
export const RETIRED = ['AUTHD_AUDIENCE']

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
