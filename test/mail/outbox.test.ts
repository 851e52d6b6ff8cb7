import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import { deliverDue, deliverNext, retryDelayMs, SEND_LEASE_MS } from '../../src/core/mail/outbox'
import { jsonLogger, silentLogger } from '../../src/log'
import { emlFileTransport, smtpTransport } from '../../src/mail/transports'
import { openRuntime } from '../../src/runtime'
import { createTestContext, type TestContext } from '../helpers'
import { otpIn, startSmtp, type TestSmtp } from '../smtp'

let ctx: TestContext
let smtp: TestSmtp
beforeEach(async () => {
  smtp = await startSmtp()
  ctx = await createTestContext({ AUTHD_SMTP_URL: smtp.url, AUTHD_MAIL_MAX_ATTEMPTS: '3' })
})
afterEach(async () => {
  ctx.close()
  await smtp.close()
})

const forgot = async (email: string) => ctx.call('GET', `/api/v1/auth/forgot-password/${email}`)
const outbox = () => ctx.runtime.store.outbox.list({})
/** The row as stored, bodies included (the store never hands bodies out in listings). */
function rawRow(id: string) {
  const db = new Database(ctx.runtime.config.databasePath, { readonly: true })
  const row = db.query('SELECT status, text_body, html_body FROM mail_outbox WHERE id = ?').get(id)
  db.close()
  return row as { status: string; text_body: string | null; html_body: string | null }
}

describe('the mail outbox', () => {
  it('erases a message body once it is delivered, keeping its metadata', async () => {
    const { email } = await ctx.addUser()
    await forgot(email)
    const [queued] = await outbox()
    expect(rawRow(queued!.id).text_body).toContain('Your one-time code is')
    await ctx.deliverMail()
    expect(smtp.messages).toHaveLength(1)
    expect(rawRow(queued!.id)).toEqual({ status: 'sent', text_body: null, html_body: null })
    const [sent] = await outbox()
    expect(sent).toMatchObject({ recipient: email, kind: 'password-reset-otp', status: 'sent', attempts: 1, sentAt: expect.any(Number) })
  })

  it('retries with exponential back-off capped at one minute, then marks the message failed', async () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(retryDelayMs)).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000])
    const { email } = await ctx.addUser()
    await forgot(email)
    smtp.refusing = true
    const transport = smtpTransport(smtp.url, 'auth@example.com')
    for (const [attempt, delay] of [[1, 1000], [2, 2000]] as const) {
      const before = ctx.clock.now()
      await deliverNext(ctx.runtime, transport, silentLogger)
      const [message] = await outbox()
      expect(message).toMatchObject({ status: 'pending', attempts: attempt, lastError: expect.stringContaining('Mailbox temporarily unavailable') })
      expect(message!.nextAttemptAt - before).toBeGreaterThanOrEqual(delay)
      expect(message!.nextAttemptAt - before).toBeLessThan(delay + 1000)
      expect(await deliverNext(ctx.runtime, transport, silentLogger)).toBe(null) // not due yet
      ctx.clock.advance(delay / 1000)
    }
    await deliverNext(ctx.runtime, transport, silentLogger)
    expect((await outbox())[0]).toMatchObject({ status: 'failed', attempts: 3 })
    ctx.clock.advance(3600)
    expect(await deliverNext(ctx.runtime, transport, silentLogger)).toBe(null) // a dead letter stays put

    // `authd mail retry`: back in the queue, and delivered once SMTP answers again.
    smtp.refusing = false
    expect(await ctx.runtime.store.outbox.retryFailed(ctx.clock.now())).toBe(1)
    // (the OTP in it has expired meanwhile: a retried message is still never sent late)
    await deliverNext(ctx.runtime, transport, silentLogger)
    expect((await outbox())[0]!.status).toBe('expired')
    expect(smtp.messages).toHaveLength(0)
  })

  it('delivers a re-queued message whose secret is still valid', async () => {
    const { email } = await ctx.addUser()
    await forgot(email)
    smtp.refusing = true
    for (let i = 0; i < 3; i++) {
      await ctx.deliverMail()
      ctx.clock.advance(60)
    }
    expect((await outbox())[0]!.status).toBe('failed')
    smtp.refusing = false
    await ctx.runtime.store.outbox.retryFailed(ctx.clock.now())
    await ctx.deliverMail()
    expect(otpIn(await smtp.waitFor(() => true))).toMatch(/^\d{6}$/)
  })

  it('does not send an OTP that expired before it could be delivered, and erases it', async () => {
    const { email } = await ctx.addUser()
    await forgot(email)
    ctx.clock.advance(10 * 60 + 1)
    await ctx.deliverMail()
    expect(smtp.messages).toHaveLength(0)
    const [message] = await outbox()
    expect(rawRow(message!.id)).toEqual({ status: 'expired', text_body: null, html_body: null })
  })

  it('two workers (two instances on one database) never send a message twice', async () => {
    for (let i = 0; i < 12; i++) await forgot((await ctx.addUser()).email)
    const second = await openRuntime({ ...ctx.runtime.config }, { clock: ctx.clock })
    try {
      const transport = smtpTransport(smtp.url, 'auth@example.com')
      const [a, b] = await Promise.all([deliverDue(ctx.runtime, transport, silentLogger), deliverDue(second, transport, silentLogger)])
      expect(a + b).toBe(12)
      expect(a).toBeGreaterThan(0)
      expect(b).toBeGreaterThan(0)
      const recipients = smtp.messages.map((m) => (Array.isArray(m.to) ? m.to[0] : m.to)!.text)
      expect(recipients).toHaveLength(12)
      expect(new Set(recipients).size).toBe(12)
    } finally {
      second.close()
    }
  })

  it('takes over a message whose sender died mid-send, once its lease runs out', async () => {
    const { email } = await ctx.addUser()
    await forgot(email)
    const claimed = await ctx.runtime.store.outbox.claimNext(ctx.clock.now(), SEND_LEASE_MS) // ...and the process dies
    expect(claimed?.status).toBe('sending')
    expect(await ctx.deliverMail()).toBe(0)
    ctx.clock.advance(SEND_LEASE_MS / 1000)
    expect(await ctx.deliverMail()).toBe(1)
    expect(smtp.messages).toHaveLength(1)
  })
})

describe('without SMTP', () => {
  it('writes each mail as an .eml file under the data dir and logs where, never the OTP', async () => {
    const local = await createTestContext()
    try {
      const { email } = await local.addUser()
      await local.call('GET', `/api/v1/auth/forgot-password/${email}`)
      const lines: string[] = []
      const dir = join(local.dir, 'mail')
      await deliverDue(local.runtime, emlFileTransport(dir, 'authd <no-reply@localhost>', jsonLogger((l) => lines.push(l))), silentLogger)
      const [file] = readdirSync(dir)
      const eml = readFileSync(join(dir, file!), 'utf8')
      expect(eml).toContain(`To: ${email}`)
      expect(eml).toContain('Subject: Acme: your password reset code')
      expect(eml).toContain('Content-Type: multipart/alternative')
      const code = /\b(\d{6})\b/.exec(eml.split('Content-Type: text/plain')[1]!)![1]!
      expect(lines).toHaveLength(1)
      expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'mail written to file (no SMTP configured)', file: join(dir, file!), to: 'u***@example.com', subject: 'Acme: your password reset code' })
      expect(lines[0]).not.toContain(code)
    } finally {
      local.close()
    }
  })
})
