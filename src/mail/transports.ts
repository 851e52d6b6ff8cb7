// Mail transports. Both build the message with nodemailer (multipart/alternative: text and
// HTML), so what lands in an .eml file is exactly what SMTP would have carried.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import type { MailTransport, OutgoingMail } from '../core/mail/outbox'
import { maskEmail } from '../core/audit/audit'
import type { Logger } from '../log'

function envelopeFor(from: string, mail: OutgoingMail) {
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'authd.local'
  // A stable Message-ID: if a retry follows a send whose answer was lost, clients can dedupe.
  return { from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, messageId: `<${mail.id}@${domain}>` }
}

export function smtpTransport(smtpUrl: string, from: string): MailTransport {
  const transporter = nodemailer.createTransport(smtpUrl, {
    // Well inside the outbox's send lease (60 s), so a hung server never outlives it.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  } as never)
  return {
    async send(mail) {
      await transporter.sendMail(envelopeFor(from, mail))
    },
  }
}

/** No SMTP configured: each message becomes an .eml file a newcomer can open or read. */
export function emlFileTransport(dir: string, from: string, logger: Logger): MailTransport {
  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
  return {
    async send(mail) {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      const info = await transporter.sendMail(envelopeFor(from, mail))
      const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${mail.id}.eml`)
      await Bun.write(file, info.message as Buffer)
      // Where and to whom (masked), never the body: it holds the OTP or token.
      logger.log('info', 'mail written to file (no SMTP configured)', { file, to: maskEmail(mail.to), subject: mail.subject })
    },
  }
}

export function mailTransportFor(config: { smtpUrl?: string; mailFrom: string; dataDir: string }, logger: Logger): MailTransport {
  return config.smtpUrl ? smtpTransport(config.smtpUrl, config.mailFrom) : emlFileTransport(join(config.dataDir, 'mail'), config.mailFrom, logger)
}
