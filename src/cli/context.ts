// What a command receives: its output and a way to open the runtime from the global options.
import type { Command } from 'commander'
import { loadConfig, type Config, type ConfigOverrides } from '../config'
import { openRuntime, type Runtime } from '../runtime'
import { createOutput, type Output } from './io'

export interface GlobalOptions {
  dataDir?: string
  databaseUrl?: string
  json?: boolean
}

export interface CommandContext {
  out: Output
  config(overrides?: ConfigOverrides): Config
  /** Opens the database (migrating it if needed), runs `fn`, and closes it again. */
  withRuntime<T>(fn: (runtime: Runtime) => Promise<T>, overrides?: ConfigOverrides): Promise<T>
}

export function contextFrom(command: Command, env: Record<string, string | undefined>): CommandContext {
  const globals = command.optsWithGlobals() as GlobalOptions
  const config = (overrides: ConfigOverrides = {}) =>
    loadConfig(env, { dataDir: globals.dataDir, databaseUrl: globals.databaseUrl, ...overrides })
  return {
    out: createOutput(globals.json === true),
    config,
    async withRuntime(fn, overrides) {
      const runtime = await openRuntime(config(overrides))
      try {
        return await fn(runtime)
      } finally {
        runtime.close()
      }
    },
  }
}
