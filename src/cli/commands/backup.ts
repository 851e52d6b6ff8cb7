import type { Command } from 'commander'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { backupDatabase } from '../../db/sqlite/backup'
import { contextFrom } from '../context'
import { CliError } from '../io'
import type { Env } from '../env'

export function registerBackup(program: Command, env: Env) {
  program
    .command('backup <file>')
    .description('write a consistent copy of the database to FILE while authd keeps serving (restore: see docs/operations.md, Backups)')
    .option('--force', 'overwrite FILE if it exists')
    .action(async (file: string, opts: { force?: boolean }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const target = resolve(file)
      if (existsSync(target) && !opts.force) throw new CliError(`${target} exists (use --force to overwrite it)`)
      const { databasePath, postgresUrl } = ctx.config()
      if (postgresUrl) throw new CliError('authd backup copies the SQLite database only; on PostgreSQL use pg_dump (for example: pg_dump --format=custom --file=authd.dump "$AUTHD_DATABASE_URL")')
      let bytes: number
      try {
        ;({ bytes } = backupDatabase(databasePath, target))
      } catch (error) {
        throw new CliError(`backup failed: ${(error as Error).message}`)
      }
      ctx.out.result({ file: target, bytes }, () => `backed up ${databasePath} to ${target} (${(bytes / 1024).toFixed(0)} KiB)`)
    })
}
