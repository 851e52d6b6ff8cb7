import type { Command } from 'commander'
import { openEngine } from '../../db/engine'
import { contextFrom } from '../context'
import type { Env } from '../env'

export function registerMigrate(program: Command, env: Env) {
  program
    .command('migrate')
    .description('apply pending database migrations (serve does this too); --json prints {applied, pending} after the run')
    .option('--status', 'only list applied and pending migrations')
    .action(async (opts: { status?: boolean }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const engine = openEngine(ctx.config())
      try {
        const ran = opts.status ? [] : await engine.migrate()
        const status = await engine.migrationStatus()
        ctx.out.result(status, () =>
          opts.status
            ? [`applied: ${status.applied.join(', ') || '(none)'}`, `pending: ${status.pending.join(', ') || '(none)'}`]
            : ran.length > 0
              ? `applied ${ran.length} migration(s): ${ran.join(', ')}`
              : 'the database is up to date',
        )
      } finally {
        engine.close()
      }
    })
}
