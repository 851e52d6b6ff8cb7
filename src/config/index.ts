// Environment + flags -> one typed, validated Config. Every setting has a default, so
// `authd serve` runs with nothing set; a bad value stops start-up with one clear line. Each
// area reads its own settings (server.ts, database.ts, tokens.ts, ...); this is the one entry
// that loads them all.
import { readDatabaseSettings, type DatabaseSettings } from './database'
import { readLimitSettings, type LimitSettings } from './limits'
import { readMailSettings, type MailSettings } from './mail'
import { ConfigError, reader } from './parse'
import { readPasswordSettings, type PasswordSettings } from './passwords'
import { readRetentionSettings, type RetentionSettings } from './retention'
import { readServerSettings, type ServerSettings } from './server'
import { readTokenSettings, type TokenSettings } from './tokens'
import { readWebhookSettings, type WebhookSettings } from './webhooks'
import { readFederationSettings, type FederationSettings } from './federation'

export { databasePathFrom, postgresUrlFrom } from './database'
export type { LimitSettings } from './limits'
export { validateMailFrom, validateSmtpUrl } from './mail'
export { ConfigError, parseDuration } from './parse'
export type { RetentionSettings } from './retention'
export type { RefreshTokenFormat } from './tokens'
export { defaultPublicUrl } from './server'
export { describeUnknownSetting, parseEnvFile, SETTINGS, unknownSettings, type Setting } from './settings'
export type { WebhookSettings } from './webhooks'
export type { FederationSettings } from './federation'

export interface Config extends ServerSettings, DatabaseSettings, TokenSettings, PasswordSettings, MailSettings {
  limits: LimitSettings
  retention: RetentionSettings
  webhooks: WebhookSettings
  federation: FederationSettings
}

export type ConfigOverrides = Partial<Pick<Config, 'port' | 'host' | 'dataDir'>> & { databaseUrl?: string }

export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: ConfigOverrides = {}): Config {
  const read = reader(env)
  const server = readServerSettings(read, env, overrides)
  if (env.AUTHD_AUDIENCE) {
    throw new ConfigError('AUTHD_AUDIENCE is replaced by one audience per tenant: unset it, and use `authd tenants update ID --audience A` to keep an old value')
  }
  return {
    ...server,
    ...readDatabaseSettings(read, overrides.databaseUrl ?? env.AUTHD_DATABASE_URL, server.dataDir),
    ...readTokenSettings(read),
    ...readPasswordSettings(read),
    ...readMailSettings(read),
    limits: readLimitSettings(read),
    retention: readRetentionSettings(read),
    webhooks: readWebhookSettings(read),
    federation: readFederationSettings(read),
  }
}
