// `authd init`: the first run. On a terminal it asks (with @clack/prompts) for what the
// flags did not give; with --yes, or without a terminal, it never asks: missing answers
// take their defaults (--yes) or stop with one clear line naming the flag. Everything is
// checked before anything is written (core/init.ts), so a refused answer leaves nothing
// behind and the same command can simply be run again.
import type { Command } from 'commander'
import { intro, isCancel, note, outro, select, text } from '@clack/prompts'
import { AppError } from '../../core/errors'
import { initialise, type FirstRun } from '../../core/accounts/init'
import { checkPasswordPolicy } from '../../core/accounts/password-policy'
import { normaliseEmail } from '../../core/names'
import { validateMailFrom, validateSmtpUrl } from '../../config'
import { redactUrl } from '../../db/engine'
import { smtpTransport } from '../../mail/transports'
import { openRuntime } from '../../runtime'
import { contextFrom, type GlobalOptions } from '../context'
import { deliverNow, type Delivery } from '../deliver'
import { CliError, promptNewPassword, readPasswordFromStdin, UsageError } from '../io'
import type { Env } from '../env'
import { withRecordedPublicUrl } from '../public-url'

interface InitOptions {
  yes?: boolean
  tenantName?: string
  adminEmail?: string
  adminFirstName?: string
  adminLastName?: string
  adminPasswordStdin?: boolean
  smtpUrl?: string
  mailFrom?: string
  testMailTo?: string
}

/** `check` throws an AppError on a value it refuses: the prompt says why and asks again. */
type Ask = (value: string | undefined, flag: string, message: string, fallback?: string, optional?: boolean, check?: (value: string) => unknown) => Promise<string>

const refusal = (check: ((value: string) => unknown) | undefined, value: string): string | undefined => {
  try {
    check?.(value)
    return undefined
  } catch (error) {
    if (error instanceof AppError) return error.message
    throw error
  }
}

function asker(opts: InitOptions, interactive: boolean): Ask {
  return async (value, flag, message, fallback, optional = false, check) => {
    if (value !== undefined) return value
    if (interactive) {
      const answer = await text({ message, placeholder: fallback, defaultValue: fallback, validate: (v) => (v || fallback || optional ? (v ? refusal(check, v) : undefined) : 'required') })
      if (isCancel(answer)) throw new CliError('cancelled')
      return answer ?? fallback ?? ''
    }
    if (optional || (opts.yes && fallback !== undefined)) return fallback ?? ''
    // --yes only fills in what has a default: an address it cannot invent.
    if (fallback === undefined) throw new UsageError(`missing ${flag} (or run on a terminal to be asked)`)
    throw new UsageError(`missing ${flag} (or run on a terminal, or pass --yes for the defaults)`)
  }
}

async function askFirstRun(ask: Ask, opts: InitOptions, interactive: boolean, passwordMinLength: number): Promise<FirstRun> {
  const tenantName = await ask(opts.tenantName, '--tenant-name', 'First tenant name', 'Default')
  const email = await ask(opts.adminEmail, '--admin-email', 'Admin e-mail address', undefined, false, normaliseEmail)
  const firstName = await ask(opts.adminFirstName, '--admin-first-name', 'Admin first name', 'Admin')
  const lastName = await ask(opts.adminLastName, '--admin-last-name', 'Admin last name', 'User')
  let password: string | undefined
  if (opts.adminPasswordStdin) password = await readPasswordFromStdin()
  else if (interactive) {
    const how = await select({ message: 'How does the admin get a password?', options: [{ value: 'invite', label: 'E-mail an invitation (setup token)' }, { value: 'password', label: 'Set one now' }] })
    if (isCancel(how)) throw new CliError('cancelled')
    if (how === 'password') {
      // (checked here as initialise will check it: a refusal asks again instead of ending the run)
      const admin = { email: normaliseEmail(email), firstName, lastName }
      password = await promptNewPassword(`Admin password (${passwordMinLength}+ characters)`, (answer) => checkPasswordPolicy(answer, passwordMinLength, admin))
    }
  }
  return { tenantName, email, firstName, lastName, password }
}

const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)

/** `authd serve` with the global options this run was given, so it opens the same database. */
function serveCommand(globals: GlobalOptions, env: Env, dataDir: string): string {
  const words = ['authd']
  if (globals.envFile) words.push('--env-file', globals.envFile)
  if (globals.databaseUrl) words.push('--database-url', redactUrl(globals.databaseUrl))
  if (globals.dataDir || !env.AUTHD_DATA_DIR) words.push('--data-dir', dataDir)
  return [...words, 'serve'].map(shellWord).join(' ')
}

async function sendTestMail(smtpUrl: string, mailFrom: string, to: string): Promise<{ status: 'sent' | 'failed'; error?: string }> {
  try {
    await smtpTransport(smtpUrl, mailFrom).send({ id: Bun.randomUUIDv7(), to, subject: 'authd: test message', text: 'SMTP works: authd can send mail.', html: '<p>SMTP works: authd can send mail.</p>' })
    return { status: 'sent' }
  } catch (error) {
    return { status: 'failed', error: (error as Error).message }
  }
}

export function registerInit(program: Command, env: Env) {
  program
    .command('init')
    .description('first run: create the database, the first tenant, an API key and the first admin, and set up mail (asks on a terminal; --yes never asks)')
    .option('-y, --yes', 'ask nothing: use the flags, and defaults for the rest')
    .option('--tenant-name <name>', 'the first tenant (default with --yes: "Default")')
    .option('--admin-email <email>', 'the first admin')
    .option('--admin-first-name <name>', "the admin's first name (default with --yes: Admin)")
    .option('--admin-last-name <name>', "the admin's last name (default with --yes: User)")
    .option('--admin-password-stdin', 'set the admin password from standard input instead of e-mailing an invitation')
    .option('--smtp-url <url>', 'SMTP server for mail (default: AUTHD_SMTP_URL; none: mail goes to .eml files)')
    .option('--mail-from <from>', 'From address (default: AUTHD_MAIL_FROM)')
    .option('--test-mail-to <address>', 'send a test message here to check SMTP (default on a terminal: the admin)')
    .action(async (opts: InitOptions, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const interactive = !opts.yes && !ctx.out.json && process.stdin.isTTY === true && process.stdout.isTTY === true
      const ask = asker(opts, interactive)

      if (interactive) intro('authd init')
      const dataDir = interactive ? await ask(undefined, '--data-dir', 'Data directory', ctx.config().dataDir) : ctx.config().dataDir
      const smtpUrl = (await ask(opts.smtpUrl ?? ctx.env.AUTHD_SMTP_URL, '--smtp-url', 'SMTP URL (empty: write mail to .eml files)', undefined, true)) || undefined
      const config = ctx.config({ dataDir })
      const mailFrom = smtpUrl ? await ask(opts.mailFrom ?? ctx.env.AUTHD_MAIL_FROM, '--mail-from', 'From address', config.mailFrom) : config.mailFrom
      // Checked as authd serve will check them, before anything is written: settings it would
      // refuse must not leave an initialised database behind.
      if (smtpUrl) validateSmtpUrl('--smtp-url', smtpUrl)
      validateMailFrom('--mail-from', mailFrom)
      const runtime = await openRuntime({ ...config, smtpUrl, mailFrom })
      // (the invitation's link: as every command that writes one, it says which address it assumed)
      const publicUrl = await withRecordedPublicUrl(runtime.config, ctx.env, runtime.store).catch((error) => {
        runtime.close()
        throw error
      })
      runtime.config = publicUrl.config
      const where = config.postgresUrl ? redactUrl(config.postgresUrl) : config.dataDir
      const alreadyInitialised = new CliError(`${where} is already initialised; manage it with authd tenants | api-keys | users`)
      try {
        // (asked before the questions, so nobody answers them in vain; the transaction asks again)
        if ((await runtime.store.tenants.list()).length > 0) throw alreadyInitialised
        const firstRun = await askFirstRun(ask, opts, interactive, runtime.config.passwordMinLength)
        const done = await initialise(runtime, firstRun).catch((error) => {
          throw error instanceof AppError && error.code === 'conflict' ? alreadyInitialised : error
        })
        await runtime.keyRing.ensureKey()
        const invitation: Delivery | undefined = done.invitation && (await deliverNow(runtime, done.invitation.mailId))
        if (done.invitation && !runtime.config.inviteUrl) ctx.linkWritten(publicUrl.assumed)
        const testTo = opts.testMailTo ?? (interactive && smtpUrl ? firstRun.email : undefined)
        const testMail = smtpUrl && testTo ? await sendTestMail(smtpUrl, mailFrom, testTo) : { status: 'skipped' as const }

        const result = {
          dataDir: runtime.config.dataDir,
          tenantId: done.tenant.id,
          apiKey: { keyId: done.apiKey.id, key: done.key },
          admin: {
            userId: done.user.id,
            email: done.user.email,
            invited: done.invitation !== undefined,
            setupToken: done.invitation?.setupToken,
            ...(invitation && { invitation: { status: invitation.status, ...(invitation.error && { error: invitation.error }) } }),
          },
          smtp: { configured: smtpUrl !== undefined, testMessage: testMail.status, ...('error' in testMail && { error: testMail.error }) },
        }
        const lines = [
          `data directory  ${result.dataDir}`,
          `tenant          ${done.tenant.name} (${done.tenant.id})`,
          `API key         ${done.key}   (shown once: store it now)`,
          `admin           ${done.user.email}${done.invitation ? `: invitation ${invitation!.says}; setup token ${done.invitation.setupToken}` : ': password set'}`,
          `mail            ${smtpUrl ? `SMTP; test message ${testMail.status}${'error' in testMail ? ` (${testMail.error})` : ''}` : `no SMTP: .eml files in ${result.dataDir}/mail`}`,
          ...(smtpUrl && !ctx.env.AUTHD_SMTP_URL ? ['', 'Add to the environment of authd serve (e.g. /etc/authd/authd.env):', `  AUTHD_SMTP_URL=${smtpUrl}`, `  AUTHD_MAIL_FROM=${mailFrom}`] : []),
          '',
          `Start the server: ${serveCommand(cmd.optsWithGlobals() as GlobalOptions, ctx.env, result.dataDir)}`,
        ]
        if (interactive) {
          note(lines.join('\n'), 'authd is ready')
          outro('Done.')
        } else ctx.out.result(result, () => lines)
        // Everything was created: a failed test message is a warning to act on, not a failed run.
        if (testMail.status === 'failed') process.stderr.write(`authd: warning: the test message to ${testTo} was not sent (${testMail.error}): check the SMTP settings with authd doctor\n`)
      } finally {
        runtime.close()
      }
    })
}
