// A real SMTP server for tests (smtp-server), parsing what it receives with mailparser.
import { simpleParser, type ParsedMail } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export interface TestSmtp {
  url: string
  port: number
  messages: ParsedMail[]
  /** While true, every recipient is refused with a temporary error (450). */
  refusing: boolean
  /** Resolves with the first received message matching `match`, waiting for it if needed. */
  waitFor(match: (m: ParsedMail) => boolean, timeoutMs?: number): Promise<ParsedMail>
  close(): Promise<void>
}

export async function startSmtp(port = 0): Promise<TestSmtp> {
  const messages: ParsedMail[] = []
  const waiters = new Set<() => void>()
  const smtp: TestSmtp = {
    url: '',
    port: 0,
    messages,
    refusing: false,
    async waitFor(match, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const found = messages.find(match)
        if (found) return found
        if (Date.now() > deadline) throw new Error(`no matching mail within ${timeoutMs} ms (received ${messages.length})`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 100)
          waiters.add(() => (clearTimeout(timer), resolve()))
        })
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (!smtp.refusing) return callback()
      callback(Object.assign(new Error('Mailbox temporarily unavailable'), { responseCode: 450 }))
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          messages.push(mail)
          for (const wake of waiters) wake()
          waiters.clear()
          callback()
        },
        (error) => callback(error),
      )
    },
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()))
  smtp.port = (server.server.address() as { port: number }).port
  smtp.url = `smtp://127.0.0.1:${smtp.port}`
  return smtp
}

/** The 6-digit code in a password-reset mail. */
export const otpIn = (mail: ParsedMail): string => /\b(\d{6})\b/.exec(mail.text ?? '')![1]!

export const sentTo = (address: string) => (mail: ParsedMail) =>
  (Array.isArray(mail.to) ? mail.to : [mail.to]).some((to) => to?.value.some((v) => v.address === address))
