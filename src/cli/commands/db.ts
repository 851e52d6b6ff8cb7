import type { Command } from 'commander'
import { databasePathFrom, postgresUrlFrom } from '../../config'
import { copyDatabase, CopyRefused, sourceInUse } from '../../db/copy'
import { redactUrl } from '../../db/engine'
import { contextFrom } from '../context'
import { progressBar } from '../progress'
import { CliError } from '../io'
import type { Env } from '../env'

export function registerDb(program: Command, env: Env) {
  const db = program.command('db').description('move the data between database engines')

  db.command('copy')
    .description('copy the whole database (the one --data-dir / --database-url selects) into an empty one, SQLite <-> PostgreSQL, in one transaction (interrupted, nothing is written: run it again); stop authd serve first')
    .requiredOption('--to <url>', 'the target: postgres://… or a SQLite path (sqlite:/path, file:/path or a plain path)')
    .option('--force', 'copy even while another process has the source open (what it writes after the copy is lost)')
    .action(async (opts: { to: string; force?: boolean }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const config = ctx.config()
      const postgresUrl = postgresUrlFrom(opts.to)
      const target = postgresUrl ? { postgresUrl, location: redactUrl(postgresUrl) } : { sqlitePath: databasePathFrom(opts.to, config.dataDir), location: databasePathFrom(opts.to, config.dataDir) }
      const from = config.postgresUrl ? redactUrl(config.postgresUrl) : config.databasePath
      const inUse = await sourceInUse(config)
      if (inUse && !opts.force) {
        throw new CliError(`the source is in use (${inUse}): stop authd serve first, or pass --force to copy anyway and lose what is written after the copy`)
      }
      if (inUse) process.stderr.write(`authd: warning: the source is in use (${inUse}): what is written to it after the copy is not in ${target.location}\n`)
      let tables: Record<string, number>
      const bar = progressBar('copying')
      const started = performance.now()
      try {
        tables = await copyDatabase(config, target, from, bar.draw)
      } catch (error) {
        if (error instanceof CopyRefused) throw new CliError(error.message)
        throw new CliError(`copy failed, nothing was written to ${target.location} (run it again): ${(error as Error).message}`)
      } finally {
        bar.finish()
      }
      const seconds = (performance.now() - started) / 1000
      const rows = Object.values(tables).reduce((a, b) => a + b, 0)
      const rowsPerSecond = Math.round(rows / Math.max(seconds, 0.001))
      ctx.out.result({ from, to: target.location, tables, seconds: Number(seconds.toFixed(1)), rowsPerSecond }, () => `copied ${rows} rows in ${Object.keys(tables).length} tables from ${from} to ${target.location} in ${seconds.toFixed(1)} s (${rowsPerSecond} rows/s); counts verified`)
    })
}
