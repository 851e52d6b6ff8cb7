// `authd init`: the first run. On a terminal it asks (with @clack/prompts) for what the
// flags did not give; with --yes, or without a terminal, it never asks: missing answers
// take their defaults (--yes) or stop with one clear line naming the flag.
import type { Command } from 'commander'
import { intro, isCancel, note, outro, password as promptPassword, select, text } from '@clack/prompts'
import { createApiKey } from '../../core/api-keys'
import { deliverDue } from '../../core/mail/outbox'
import { inviteUser } from '../../core/setup-password'
import { createTenant } from '../../core/tenants'
import { createUser } from '../../core/users'
import { silentLogger } from '../../log'
import { smtpTransport, mailTransportFor } from '../../mail/transports'
import { openRuntime } from '../../runtime'
import { contextFrom } from '../context'
import { CliError, readPasswordFromStdin } from '../io'
import type { Env } from '../index'

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
      const ask = async (value: string | undefined, flag: string, message: string, fallback?: string, optional = false): Promise<string> => {
        if (value !== undefined) return value
        if (interactive) {
          const answer = await text({ message, placeholder: fallback, defaultValue: fallback, validate: (v) => (v || fallback || optional ? undefined : 'required') })
          if (isCancel(answer)) throw new CliError('cancelled')
          return answer ?? fallback ?? ''
        }
        if (optional || (opts.yes && fallback !== undefined)) return fallback ?? ''
        throw new CliError(`missing ${flag} (or run on a terminal, or pass --yes for the defaults)`)
      }

      if (interactive) intro('authd init')
      const dataDir = interactive ? await ask(undefined, '--data-dir', 'Data directory', ctx.config().dataDir) : ctx.config().dataDir
      const smtpUrl = (await ask(opts.smtpUrl ?? ctx.env.AUTHD_SMTP_URL, '--smtp-url', 'SMTP URL (empty: write mail to .eml files)', undefined, true)) || undefined
      const config = ctx.config({ dataDir })
      const mailFrom = smtpUrl ? await ask(opts.mailFrom ?? ctx.env.AUTHD_MAIL_FROM, '--mail-from', 'From address', config.mailFrom) : config.mailFrom
      const runtime = await openRuntime({ ...config, smtpUrl, mailFrom })
      try {
        if ((await runtime.store.tenants.list()).length > 0) {
          throw new CliError(`${dataDir} is already initialised; manage it with authd tenants | api-keys | users`)
        }
        const tenantName = await ask(opts.tenantName, '--tenant-name', 'First tenant name', 'Default')
        const email = await ask(opts.adminEmail, '--admin-email', 'Admin e-mail address')
        const firstName = await ask(opts.adminFirstName, '--admin-first-name', 'Admin first name', 'Admin')
        const lastName = await ask(opts.adminLastName, '--admin-last-name', 'Admin last name', 'User')
        let password: string | undefined
        if (opts.adminPasswordStdin) password = await readPasswordFromStdin()
        else if (interactive) {
          const how = await select({ message: 'How does the admin get a password?', options: [{ value: 'invite', label: 'E-mail an invitation (setup token)' }, { value: 'password', label: 'Set one now' }] })
          if (isCancel(how)) throw new CliError('cancelled')
          if (how === 'password') {
            const answer = await promptPassword({ message: 'Admin password (15+ characters)' })
            if (isCancel(answer)) throw new CliError('cancelled')
            password = answer
          }
        }

        const tenant = await createTenant(runtime, { name: tenantName })
        const { apiKey, key } = await createApiKey(runtime, { tenantId: tenant.id, name: 'default' })
        const { user } = await createUser(runtime, { tenantId: tenant.id, email, firstName, lastName, type: 'admin', password })
        const invitation = password === undefined ? await inviteUser(runtime, user.id) : undefined
        await runtime.keyRing.ensureKey()
        await deliverDue(runtime, mailTransportFor(runtime.config, silentLogger), silentLogger)

        let testMail: 'sent' | 'failed' | 'skipped' = 'skipped'
        let testMailError: string | undefined
        const testTo = opts.testMailTo ?? (interactive && smtpUrl ? email : undefined)
        if (smtpUrl && testTo) {
          try {
            await smtpTransport(smtpUrl, mailFrom).send({ id: Bun.randomUUIDv7(), to: testTo, subject: 'authd: test message', text: 'SMTP works: authd can send mail.', html: '<p>SMTP works: authd can send mail.</p>' })
            testMail = 'sent'
          } catch (error) {
            testMail = 'failed'
            testMailError = (error as Error).message
          }
        }

        const result = {
          dataDir: runtime.config.dataDir,
          tenantId: tenant.id,
          apiKey: { keyId: apiKey.id, key },
          admin: { userId: user.id, email: user.email, invited: invitation !== undefined, setupToken: invitation?.setupToken },
          smtp: { configured: smtpUrl !== undefined, testMessage: testMail, ...(testMailError && { error: testMailError }) },
        }
        const lines = [
          `data directory  ${result.dataDir}`,
          `tenant          ${tenant.name} (${tenant.id})`,
          `API key         ${key}   (shown once: store it now)`,
          `admin           ${user.email}${invitation ? `: invitation ${smtpUrl ? 'e-mailed' : `written to ${result.dataDir}/mail`}; setup token ${invitation.setupToken}` : ': password set'}`,
          `mail            ${smtpUrl ? `SMTP; test message ${testMail}${testMailError ? ` (${testMailError})` : ''}` : `no SMTP: .eml files in ${result.dataDir}/mail`}`,
          ...(smtpUrl && !ctx.env.AUTHD_SMTP_URL ? ['', 'Add to the environment of authd serve (e.g. /etc/authd/authd.env):', `  AUTHD_SMTP_URL=${smtpUrl}`, `  AUTHD_MAIL_FROM=${mailFrom}`] : []),
          '',
          `Start the server: authd --data-dir ${result.dataDir} serve`,
        ]
        if (interactive) {
          note(lines.join('\n'), 'authd is ready')
          outro('Done.')
        } else ctx.out.result(result, () => lines)
        if (testMail === 'failed') process.exitCode = 1
      } finally {
        runtime.close()
      }
    })
}
