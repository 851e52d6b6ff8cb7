// The authd command line: global options, one module per command group, and one place that
// turns any error into a single line on stderr and a non-zero exit.
import { CommanderError, type Command } from 'commander'
import { ConfigError } from '../config'
import { AppError } from '../core/errors'
import { registerAccessRules } from './commands/access-rules'
import { registerApiKeys } from './commands/api-keys'
import { registerAudit } from './commands/audit'
import { registerBackup } from './commands/backup'
import { registerClients } from './commands/clients'
import { registerDb } from './commands/db'
import { registerDoctor } from './commands/doctor'
import { registerGroups } from './commands/groups'
import { registerInit } from './commands/init'
import { registerKeys } from './commands/keys'
import { registerMail } from './commands/mail'
import { registerMigrate } from './commands/migrate'
import { registerProviders } from './commands/providers'
import { registerServe } from './commands/serve'
import { registerSessions } from './commands/sessions'
import { registerTenants } from './commands/tenants'
import { registerUsers } from './commands/users'
import { registerWebhooks } from './commands/webhooks'
import type { Env } from './env'
import { CliError, UsageError } from './io'
import { AuthdCommand } from './usage'
import { VERSION } from '../version'

export function buildProgram(env: Env): Command {
  const program = new AuthdCommand('authd')
    .description('authd: a self-hosted authentication service (HTTP API + admin CLI)')
    .version(VERSION)
    .option('--env-file <file>', 'read AUTHD_* settings from a KEY=VALUE file, e.g. /etc/authd/authd.env (env AUTHD_ENV_FILE); the real environment wins')
    .option('--data-dir <dir>', 'data directory (env AUTHD_DATA_DIR; default ./data)')
    .option('--database-url <url>', 'database (env AUTHD_DATABASE_URL; default: authd.db in the data dir)')
    .option('--json', 'machine output: one JSON document on stdout')
  for (const register of [registerServe, registerInit, registerMigrate, registerTenants, registerApiKeys, registerClients, registerUsers, registerGroups, registerAccessRules, registerProviders, registerKeys, registerSessions, registerMail, registerAudit, registerBackup, registerDb, registerDoctor, registerWebhooks]) {
    register(program, env)
  }
  return program
}

/** Runs the CLI; resolves to the exit code. */
export async function runCli(argv: string[], env: Env = process.env): Promise<number> {
  try {
    await buildProgram(env).parseAsync(argv)
    return 0
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2 // printed as usage.ts says
    if (error instanceof ConfigError || error instanceof UsageError) {
      // A bad setting or a missing option: the command never ran.
      process.stderr.write(`authd: ${error.message}\n`)
      return 2
    }
    if (error instanceof AppError || error instanceof CliError) {
      process.stderr.write(`authd: ${(error instanceof AppError && error.details.cliMessage) || error.message}\n`)
      return 1
    }
    process.stderr.write(`authd: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
}
