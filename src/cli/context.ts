// What a command receives: its output and a way to open the runtime from the global options.
import type { Command } from 'commander'
import { existsSync, readFileSync } from 'node:fs'
import { ConfigError, describeUnknownSetting, loadConfig, parseEnvFile, unknownSettings, type Config, type ConfigOverrides } from '../config'
import { openRuntime, type Runtime } from '../runtime'
import { createOutput, type Output } from './io'
import { assumedPublicUrlLine, withRecordedPublicUrl, type AssumedPublicUrl } from './public-url'

export interface GlobalOptions {
  envFile?: string
  dataDir?: string
  databaseUrl?: string
  json?: boolean
}

export interface CommandContext {
  out: Output
  /** The environment the command runs with (the process's, over --env-file's). */
  env: Record<string, string | undefined>
  config(overrides?: ConfigOverrides): Config
  /** Opens the database (migrating it if needed), runs `fn`, and closes it again. Without
   *  AUTHD_PUBLIC_URL, links use the public URL the server recorded (cli/public-url.ts). */
  withRuntime<T>(fn: (runtime: Runtime) => Promise<T>, overrides?: ConfigOverrides): Promise<T>
  /** Called by a command as it writes a link (a mail, a URL printed): says once on stderr which
   *  address the link assumes when AUTHD_PUBLIC_URL is unset; nothing when it is set. */
  linkWritten(assumed?: AssumedPublicUrl | null): void
}

/** The environment with an env file's settings beneath it: what is really set wins. */
function withEnvFile(env: Record<string, string | undefined>, file: string | undefined): Record<string, string | undefined> {
  if (!file) return env
  if (!existsSync(file)) throw new ConfigError(`--env-file: no such file ${file}`)
  return { ...parseEnvFile(readFileSync(file, 'utf8'), file), ...env }
}

/**
 * `warnings: false` for a command that reports unknown AUTHD_* names itself (doctor); every
 * other command warns about them on stderr once, when it first reads its configuration.
 */
export function contextFrom(command: Command, processEnv: Record<string, string | undefined>, { warnings = true } = {}): CommandContext {
  const globals = command.optsWithGlobals() as GlobalOptions
  const env = withEnvFile(processEnv, globals.envFile ?? processEnv.AUTHD_ENV_FILE)
  let warned = !warnings
  const config = (overrides: ConfigOverrides = {}) => {
    const loaded = loadConfig(env, { dataDir: globals.dataDir ?? env.AUTHD_DATA_DIR, databaseUrl: globals.databaseUrl, ...overrides })
    if (!warned) for (const unknown of unknownSettings(env)) process.stderr.write(`authd: warning: ${describeUnknownSetting(unknown)}\n`)
    warned = true
    return loaded
  }
  let assumed: AssumedPublicUrl | null = null
  let said = false
  return {
    out: createOutput(globals.json === true),
    env,
    config,
    async withRuntime(fn, overrides) {
      const runtime = await openRuntime(config(overrides))
      try {
        const resolved = await withRecordedPublicUrl(runtime.config, env, runtime.store)
        runtime.config = resolved.config
        assumed = resolved.assumed
        return await fn(runtime)
      } finally {
        runtime.close()
      }
    },
    linkWritten(given = assumed) {
      if (!given || said) return
      said = true
      process.stderr.write(assumedPublicUrlLine(given) + '\n')
    },
  }
}
