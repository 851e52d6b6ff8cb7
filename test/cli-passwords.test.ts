// The CLI side of the password lifecycle: invite, set-password, import, mail list | retry.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cliRunner, SOURCE_CLI, type CliResult } from './cli-runner'
import { PASSWORD, tempDir } from './helpers'
import { startSmtp, type TestSmtp } from './smtp'

let dir: string
let smtp: TestSmtp
let authd: ReturnType<typeof cliRunner>
let tenantId: string
beforeEach(async () => {
  dir = tempDir()
  smtp = await startSmtp()
  authd = cliRunner(SOURCE_CLI, dir, { AUTHD_SMTP_URL: smtp.url, AUTHD_PUBLIC_URL: 'http://127.0.0.1:3000' })
  tenantId = ok(await authd(['--json', 'tenants', 'create', '--name', 'Acme'])).tenantId
})
afterEach(async () => {
  await smtp.close()
  rmSync(dir, { recursive: true, force: true })
})

const ok = (r: CliResult) => {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
  return r.json
}
const createUser = async (email: string, extra: string[] = []) =>
  ok(await authd(['--json', 'users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'Newt', '--last-name', 'Scamander', ...extra]))

describe('authd users invite', () => {
  it('issues a new setup token, e-mails it and prints it', async () => {
    const user = await createUser('newt@example.com')
    const invite = ok(await authd(['--json', 'users', 'invite', user.userId]))
    expect(invite).toEqual({ userId: user.userId, setupToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expiresAt: expect.any(String) })
    expect(invite.setupToken).not.toBe(user.setupToken)
    const mail = await smtp.waitFor(() => true)
    expect(mail.subject).toBe('Acme: set up your password')
    expect(mail.text).toContain(invite.setupToken)
    expect(mail.html).toContain(invite.setupToken)
    expect((await authd(['users', 'invite', user.userId])).stdout).toStartWith('invitation for newt@example.com e-mailed\n')
  })

  it('without SMTP, writes the invitation to an .eml file under the data dir', async () => {
    const local = cliRunner(SOURCE_CLI, dir)
    const user = await createUser('newt@example.com')
    expect((await local(['users', 'invite', user.userId])).stdout).toStartWith(`invitation for newt@example.com written to ${dir}/mail (no SMTP configured)\n`)
    expect(readdirSync(join(dir, 'mail'))).toHaveLength(1)
  })

  it('refuses tenant users and users who have a password, with one clear line', async () => {
    const machine = await createUser('svc@example.com', ['--type', 'tenant'])
    expect(await authd(['users', 'invite', machine.userId])).toMatchObject({ code: 1, stderr: 'authd: Tenant users never get a setup token: they cannot have a password\n' })
    const done = ok(await authd(['--json', 'users', 'create', '--tenant', tenantId, '--email', 'ada@example.com', '--first-name', 'Ada', '--last-name', 'L', '--password-stdin'], { stdin: PASSWORD }))
    expect(await authd(['users', 'invite', done.userId])).toMatchObject({ code: 1, stderr: 'authd: User already has a password\n' })
  })

  it('still prints the token when SMTP is down; the message stays queued for authd serve', async () => {
    smtp.refusing = true
    const user = await createUser('newt@example.com')
    const r = await authd(['users', 'invite', user.userId])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^invitation for newt@example.com queued; SMTP refused: .*Mailbox temporarily unavailable.* \(authd serve retries it\)\n/)
    expect(ok(await authd(['--json', 'mail', 'list', '--pending']))).toEqual([
      expect.objectContaining({ kind: 'invitation', recipient: 'newt@example.com', status: 'pending', attempts: 1 }),
    ])
  })
})

describe('authd users set-password', () => {
  it('sets the password from stdin, applying the policy, and notifies the user', async () => {
    const user = await createUser('newt@example.com')
    expect(await authd(['users', 'set-password', user.userId, '--password-stdin'], { stdin: 'short\n' })).toMatchObject({
      code: 1,
      stderr: 'authd: Password must be at least 15 characters long\n',
    })
    expect(ok(await authd(['--json', 'users', 'set-password', user.userId, '--password-stdin'], { stdin: PASSWORD + '\n' }))).toEqual({ userId: user.userId, email: 'newt@example.com' })
    expect((await smtp.waitFor(() => true)).subject).toBe('Acme: your password was changed')
    expect(ok(await authd(['--json', 'users', 'list', '--tenant', tenantId])).items[0].hasPassword).toBe(true)
  })

  it('asks for --password-stdin when not on a terminal', async () => {
    const user = await createUser('newt@example.com')
    expect(await authd(['users', 'set-password', user.userId])).toMatchObject({ code: 2, stderr: 'authd: missing --password-stdin (the password is read from standard input)\n' })
  })
})

describe('authd users import', () => {
  const file = (name: string, text: string) => {
    const path = join(dir, name)
    writeFileSync(path, text)
    return path
  }

  it('imports a JSON array: setup tokens for users without a password, existing addresses skipped', async () => {
    await createUser('old@example.com')
    const path = file('users.json', JSON.stringify([
      { email: 'Ada@Example.com', firstName: 'Ada', lastName: 'Lovelace', type: 'admin', password: PASSWORD },
      { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
      { email: 'old@example.com', firstName: 'Old', lastName: 'Timer' },
    ]))
    const result = ok(await authd(['--json', 'users', 'import', '--tenant', tenantId, path]))
    expect(result).toEqual({
      created: [
        { userId: expect.any(String), email: 'ada@example.com', type: 'admin', groups: [] },
        { userId: expect.any(String), email: 'grace@example.com', type: 'user', groups: [], setupToken: expect.any(String), setupTokenExpiresAt: expect.any(String) },
      ],
      skipped: [{ email: 'old@example.com', reason: 'already exists' }],
    })
    // In creation order: the existing user first, then the file's rows in order.
    expect(ok(await authd(['--json', 'users', 'list', '--tenant', tenantId])).items.map((u: any) => [u.email, u.hasPassword])).toEqual([
      ['old@example.com', false],
      ['ada@example.com', true],
      ['grace@example.com', false],
    ])
  })

  it('imports a CSV file with quoted fields and optional columns', async () => {
    const path = file('users.csv', `email,firstName,lastName,type,password\nada@example.com,Ada,"Lovelace, Countess",admin,${PASSWORD}\ngrace@example.com,Grace,Hopper,,\n`)
    const result = ok(await authd(['--json', 'users', 'import', '--tenant', tenantId, path]))
    expect(result.created.map((c: any) => [c.email, c.type, c.setupToken === undefined])).toEqual([
      ['ada@example.com', 'admin', true],
      ['grace@example.com', 'user', false],
    ])
    const users = ok(await authd(['--json', 'users', 'list', '--tenant', tenantId])).items
    expect(users[0].lastName).toBe('Lovelace, Countess')
  })

  it('validates every row first and imports nothing when any is invalid', async () => {
    const path = file('users.json', JSON.stringify([
      { email: 'ok@example.com', firstName: 'Ok', lastName: 'Person' },
      { email: 'not-an-address', firstName: 'Bad', lastName: 'Mail' },
      { email: 'weak@example.com', firstName: 'Weak', lastName: 'Password', password: 'short' },
      { email: 'OK@example.com', firstName: 'Twice', lastName: 'Over' },
      { email: 'x@example.com', firstName: 'X', lastName: 'Y', role: 'admin' },
    ]))
    const r = await authd(['users', 'import', '--tenant', tenantId, path])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(
      'authd: nothing imported, 4 invalid row(s): row 2: email must be a valid e-mail address; row 3: Password must be at least 15 characters long; ' +
        'row 4: ok@example.com appears more than once in the file; row 5: unknown field role\n',
    )
    expect(ok(await authd(['--json', 'users', 'list', '--tenant', tenantId]))).toEqual({ items: [], nextCursor: null })
  })

  it.each([
    ['a file that does not exist', null, 'cannot read MISSING: no such file'],
    ['malformed JSON', '[{"email": ', 'the file is not valid JSON'],
    ['a JSON object instead of an array', '{"email":"a@example.com"}', 'a JSON import must be an array of users'],
  ])('fails with one line for %s', async (_, text, message) => {
    const path = text === null ? join(dir, 'missing.json') : file('users.json', text)
    const r = await authd(['users', 'import', '--tenant', tenantId, path])
    expect(r.code).toBe(1)
    expect(r.stderr).toStartWith(`authd: ${message.replace('MISSING', path)}`)
  })
})

describe('authd mail list | retry', () => {
  it('lists the outbox without bodies, and re-queues failed messages', async () => {
    smtp.refusing = true
    const user = await createUser('newt@example.com')
    await authd(['users', 'invite', user.userId], { env: { AUTHD_MAIL_MAX_ATTEMPTS: '1' } })
    const [failed] = ok(await authd(['--json', 'mail', 'list']))
    expect(failed).toEqual({
      mailId: expect.any(String),
      kind: 'invitation',
      recipient: 'newt@example.com',
      subject: 'Acme: set up your password',
      status: 'failed',
      attempts: 1,
      nextAttemptAt: null,
      lastError: expect.stringContaining('Mailbox temporarily unavailable'),
      createdAt: expect.any(String),
      sentAt: null,
    })
    expect(JSON.stringify(failed)).not.toContain('setup token')
    expect(ok(await authd(['--json', 'mail', 'list', '--pending']))).toEqual([])
    expect(ok(await authd(['--json', 'mail', 'retry']))).toEqual({ requeued: 1 })
    expect(ok(await authd(['--json', 'mail', 'list', '--pending']))[0]).toMatchObject({ status: 'pending', attempts: 0 })
  })
})
