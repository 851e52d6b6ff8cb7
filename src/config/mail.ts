// Mail: the SMTP server (or .eml files), the sender, retries, and where invitations lead.
import addressparser from 'nodemailer/lib/addressparser'
import { ConfigError, int, type Read } from './parse'

export interface MailSettings {
  /** smtp:// or smtps:// URL; unset: mail is written to .eml files under the data dir. */
  smtpUrl?: string
  mailFrom: string
  mailMaxAttempts: number
  /** Optional page where invited users set their password; the token is appended as #token=. */
  inviteUrl?: string
}

/** An SMTP server's URL: smtp:// or smtps:// (its password never repeated back). */
export function validateSmtpUrl(name: string, raw: string): string {
  if (!/^smtps?:\/\/[^/]/i.test(raw)) throw new ConfigError(`${name} must be an smtp:// or smtps:// URL (got "${raw.replace(/\/\/[^@]*@/, '//…@')}")`)
  return raw
}

/** The From of authd's mail: exactly one address, with or without a name (`Acme <auth@acme.example>`).
 *  Anything else went out with an empty sender, or to two. */
export function validateMailFrom(name: string, raw: string): string {
  const parsed = addressparser(raw, { flatten: true })
  if (parsed.length !== 1 || !/^[^\s@<>]+@[^\s@<>]+$/.test(parsed[0]!.address)) {
    throw new ConfigError(`${name} must be one address, such as auth@acme.example or "Acme <auth@acme.example>"`)
  }
  return raw
}

export function readMailSettings(read: Read): MailSettings {
  return {
    smtpUrl: read('AUTHD_SMTP_URL', undefined, validateSmtpUrl),
    mailFrom: read('AUTHD_MAIL_FROM', 'authd <no-reply@localhost>', validateMailFrom),
    mailMaxAttempts: read('AUTHD_MAIL_MAX_ATTEMPTS', 30, int(1, 1000)),
    inviteUrl: read('AUTHD_INVITE_URL', undefined, (name, raw) => {
      try {
        return new URL(raw).href
      } catch {
        throw new ConfigError(`${name} must be a URL such as https://app.example.com/setup (got "${raw}")`)
      }
    }),
  }
}
