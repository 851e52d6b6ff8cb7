import type { Command } from 'commander'
import { jsonLogger } from '../../log'
import { openRuntime } from '../../runtime'
import { startServer } from '../../server/serve'
import { contextFrom } from '../context'
import { demoBanner, existingDataHint, seedDemoIfEmpty } from '../demo'
import type { Env } from '../env'
import { integerOption } from '../usage'

export function registerServe(program: Command, env: Env) {
  program
    .command('serve')
    .description('migrate the database if needed, then serve the HTTP API (default 127.0.0.1:3000)')
    .option('--port <port>', 'port to listen on, 0 for any free port (env AUTHD_PORT)', integerOption('--port', 0, 65535))
    .option('--host <host>', 'address to listen on (env AUTHD_HOST)')
    .option('--seed-demo', 'on an empty database, create a demo tenant, API key and user and print them once')
    .action(async (opts: { port?: number; host?: string; seedDemo?: boolean }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const logger = jsonLogger()
      const runtime = await openRuntime(ctx.config({ port: opts.port, host: opts.host }))
      if (runtime.appliedMigrations.length > 0) logger.log('info', 'migrated', { applied: runtime.appliedMigrations })
      // Meant for the time of a rolling upgrade only (README: Several instances): said where it is not forgotten.
      if (runtime.config.refreshTokenFormat === 'hash') logger.log('warn', 'AUTHD_REFRESH_TOKEN_FORMAT=hash: new sessions get the earlier refresh-token format; unset it once no older authd serves this database')
      const demo = opts.seedDemo ? await seedDemoIfEmpty(runtime) : null
      const server = await startServer(runtime, logger).catch((error) => {
        // Nothing may keep the process alive once it cannot serve (the database, hashing threads).
        runtime.close()
        throw error
      })
      logger.flush?.()
      if (demo) process.stdout.write(demoBanner(demo, server.url) + '\n')
      else if (opts.seedDemo) process.stdout.write(existingDataHint(runtime.config.dataDir) + '\n')
      await new Promise<void>((resolve) => {
        for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => resolve())
      })
      logger.log('info', 'stopping')
      await server.stop()
    })
}
