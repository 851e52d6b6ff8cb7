// The address in the links a CLI command writes (invitations, page URLs, issuers). The CLI does
// not serve: without AUTHD_PUBLIC_URL it cannot know where people reach authd, and its own
// default (127.0.0.1:3000) may be a port nobody listens on. The server records the URL it
// runs under at every start (serve.ts); the CLI takes that one, and says which it assumed.
import { existsSync } from 'node:fs'
import type { Config } from '../config'
import { PUBLIC_URL_SETTING, type Store } from '../core/store'
import { openEngine } from '../db/engine'

/** Where a command's links point when AUTHD_PUBLIC_URL is unset, and why. */
export interface AssumedPublicUrl {
  url: string
  recorded: boolean
}

/** The config with the recorded public URL (and issuer, unless AUTHD_ISSUER is set), and what
 *  was assumed; the config as it is when AUTHD_PUBLIC_URL is set. */
export async function withRecordedPublicUrl(
  config: Config,
  env: Record<string, string | undefined>,
  store: Pick<Store, 'serverSettings'>,
): Promise<{ config: Config; assumed: AssumedPublicUrl | null }> {
  if (env.AUTHD_PUBLIC_URL) return { config, assumed: null }
  const recorded = await store.serverSettings.get(PUBLIC_URL_SETTING)
  if (recorded === null) return { config, assumed: { url: config.publicUrl, recorded: false } }
  const issuer = env.AUTHD_ISSUER ? config.issuer : recorded
  return { config: { ...config, publicUrl: recorded, issuer }, assumed: { url: recorded, recorded: true } }
}

/** withRecordedPublicUrl for a command that opens no runtime (doctor): reads the setting from
 *  the database if there is one to read, without creating or migrating it. */
export async function withRecordedPublicUrlIfReadable(config: Config, env: Record<string, string | undefined>): Promise<{ config: Config; assumed: AssumedPublicUrl | null }> {
  const unread = { config, assumed: env.AUTHD_PUBLIC_URL ? null : { url: config.publicUrl, recorded: false } }
  if (env.AUTHD_PUBLIC_URL || (!config.postgresUrl && !existsSync(config.databasePath))) return unread
  const engine = openEngine(config)
  try {
    return await withRecordedPublicUrl(config, env, engine.createStore())
  } catch {
    // (an unreachable or unmigrated database: doctor says so in its own checks)
    return unread
  } finally {
    engine.close()
  }
}

/** The one line a command prints on stderr when it writes a link to an assumed address. */
export function assumedPublicUrlLine(assumed: AssumedPublicUrl): string {
  const why = assumed.recorded ? 'the address authd serve recorded at its last start' : 'the default address (no server has recorded one yet)'
  return `authd: AUTHD_PUBLIC_URL is not set: links assume ${assumed.url}, ${why}; set AUTHD_PUBLIC_URL to the address people reach authd at`
}
