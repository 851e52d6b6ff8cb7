// authd init: the wizard answered in a real terminal (tmux), and the --yes path with no
// terminal at all, which must never wait for input.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cliRunner, SOURCE_CLI } from './cli-runner'
import { PASSWORD, tempDir } from './helpers'
import { sentTo, startSmtp, type TestSmtp } from './smtp'

let dir: string
let smtp: TestSmtp
beforeEach(async () => {
  dir = tempDir()
  smtp = await startSmtp()
})
afterEach(async () => {
  await smtp.close()
  rmSync(dir, { recursive: true, force: true })
})

const hasTmux = Bun.which('tmux') !== null
if (!hasTmux) console.warn('terminal test of authd init skipped: no tmux (apt-get install tmux)')

/** A command in a detached tmux session: read the screen, type keys. */
function terminal(command: string) {
  const session = `authd-init-${process.pid}-${Date.now()}`
  const tmux = (...args: string[]) => Bun.spawnSync(['tmux', ...args], { stdout: 'pipe', stderr: 'pipe' })
  tmux('new-session', '-d', '-s', session, '-x', '140', '-y', '50', command)
  const screen = () => tmux('capture-pane', '-p', '-t', session, '-S', '-200').stdout.toString()
  return {
    screen,
    async waitFor(textOnScreen: string, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      while (!screen().includes(textOnScreen)) {
        if (Date.now() > deadline) throw new Error(`"${textOnScreen}" never appeared; the screen:\n${screen()}`)
        await Bun.sleep(50)
      }
    },
    /** Waits for the prompt, types the text (if any) and presses Enter. */
    async answer(prompt: string, typed?: string) {
      await this.waitFor(prompt)
      if (typed !== undefined) tmux('send-keys', '-t', session, '-l', typed)
      tmux('send-keys', '-t', session, 'Enter')
    },
    /** Presses keys by name (Down, Enter). */
    press: (...keys: string[]) => tmux('send-keys', '-t', session, ...keys),
    /** Waits until the text is on the screen `times` times (a prompt asked again). */
    async waitForCount(textOnScreen: string, times: number, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      while (screen().split(textOnScreen).length - 1 < times) {
        if (Date.now() > deadline) throw new Error(`"${textOnScreen}" never appeared ${times} times; the screen:\n${screen()}`)
        await Bun.sleep(50)
      }
    },
    /** Types the text and presses Enter, once the prompt is on the screen `times` times. */
    async answerNth(prompt: string, times: number, typed: string) {
      await this.waitForCount(prompt, times)
      tmux('send-keys', '-t', session, '-l', typed)
      tmux('send-keys', '-t', session, 'Enter')
    },
    close: () => tmux('kill-session', '-t', session),
  }
}

describe('authd init', () => {
  it.skipIf(!hasTmux)('asks, on a terminal, for what it needs: tenant, admin, SMTP with a test message', async () => {
    const data = join(dir, 'data')
    const command = [
      'env', 'AUTHD_ARGON2_MEMORY_KIB=64', 'AUTHD_ARGON2_TIME_COST=1', ...SOURCE_CLI, '--data-dir', data, 'init',
    ].map((part) => `'${part}'`).join(' ')
    const term = terminal(`${command}; echo "EXIT=$?"; sleep 60`)
    try {
      // Each prompt, and what the operator types (nothing: accept the default).
      await term.answer('Data directory')
      await term.answer('SMTP URL', smtp.url)
      await term.answer('From address', 'Acme Auth <auth@acme.example>')
      await term.answer('First tenant name', 'Acme')
      await term.answer('Admin e-mail address', 'boss@acme.example')
      await term.answer('Admin first name')
      await term.answer('Admin last name')
      await term.answer('How does the admin get a password?') // the first choice: e-mail an invitation
      await term.waitFor('EXIT=0')
      const screen = term.screen()
      expect(screen).toContain('authd is ready')
      expect(screen).toContain('test message sent')
    } finally {
      term.close()
    }
    expect((await smtp.waitFor((m) => m.subject === 'Acme: set up your password')).to).toBeDefined()
    expect((await smtp.waitFor((m) => m.subject === 'authd: test message')).text).toContain('SMTP works')
    const authd = cliRunner(SOURCE_CLI, data)
    const [tenant] = (await authd(['--json', 'tenants', 'list'])).json
    expect(tenant.name).toBe('Acme')
    const [admin] = (await authd(['--json', 'users', 'list', '--tenant', tenant.tenantId])).json.items
    expect(admin).toMatchObject({ email: 'boss@acme.example', type: 'admin', firstName: 'Admin', hasPassword: false })
  }, 60_000)

  it.skipIf(!hasTmux)('asks again for a refused address or password, and for the password twice: a mismatch starts it over', async () => {
    const data = join(dir, 'data')
    const command = ['env', 'AUTHD_ARGON2_MEMORY_KIB=64', 'AUTHD_ARGON2_TIME_COST=1', ...SOURCE_CLI, '--data-dir', data, 'init'].map((part) => `'${part}'`).join(' ')
    const term = terminal(`${command}; echo "EXIT=$?"; sleep 60`)
    try {
      await term.answer('Data directory')
      await term.answer('SMTP URL')
      await term.answer('First tenant name', 'Acme')
      await term.answer('Admin e-mail address', 'ops@')
      await term.waitFor('email must be a valid e-mail address')
      term.press('-l', 'acme.example')
      term.press('Enter')
      await term.answer('Admin first name', 'Grace')
      await term.answer('Admin last name', 'Hopper')
      await term.waitFor('How does the admin get a password?')
      term.press('Down')
      term.press('Enter')
      // Refused by the policy: said, and asked again (it used to end the run here, exit 1).
      await term.answerNth('Admin password', 1, 'correct horse battery staple ops')
      await term.waitFor('Password must not contain the part of your e-mail address before the @. Choose another.')
      // Accepted, but the confirmation differs: asked from the start.
      await term.answerNth('Admin password', 2, PASSWORD)
      await term.answerNth('The same password again, to confirm', 1, `${PASSWORD}x`)
      await term.waitFor('The two passwords differ. Type it again.')
      await term.answerNth('Admin password', 3, PASSWORD)
      await term.answerNth('The same password again, to confirm', 2, PASSWORD)
      await term.waitFor('EXIT=0')
      expect(term.screen()).toContain('password set')
    } finally {
      term.close()
    }
    const authd = cliRunner(SOURCE_CLI, data)
    const [tenant] = (await authd(['--json', 'tenants', 'list'])).json
    const [admin] = (await authd(['--json', 'users', 'list', '--tenant', tenant.tenantId])).json.items
    expect(admin).toMatchObject({ email: 'ops@acme.example', firstName: 'Grace', hasPassword: true })
    // The password that was confirmed is the one set.
    const { password_hash: hash } = new Database(join(data, 'authd.db'), { readonly: true }).query('SELECT password_hash FROM users').get() as { password_hash: string }
    expect(await Bun.password.verify(PASSWORD, hash)).toBe(true)
  }, 60_000)

  it('with --yes and no terminal: never asks, uses the flags and defaults', async () => {
    const data = join(dir, 'data')
    const authd = cliRunner(SOURCE_CLI, data)
    const r = await authd(['--json', 'init', '--yes', '--admin-email', 'boss@acme.example', '--admin-password-stdin', '--smtp-url', smtp.url, '--test-mail-to', 'ops@acme.example'], { stdin: PASSWORD })
    expect(r.code).toBe(0)
    expect(r.json).toEqual({
      dataDir: data,
      tenantId: expect.any(String),
      apiKey: { keyId: expect.any(String), key: expect.stringMatching(/^authd_/) },
      admin: { userId: expect.any(String), email: 'boss@acme.example', invited: false },
      smtp: { configured: true, testMessage: 'sent' },
    })
    expect(smtp.messages.filter(sentTo('ops@acme.example'))).toHaveLength(1)
    expect((await authd(['--json', 'tenants', 'list'])).json[0].name).toBe('Default')
    expect((await authd(['init', '--yes', '--admin-email', 'x@acme.example'])).stderr).toBe(`authd: ${data} is already initialised; manage it with authd tenants | api-keys | users\n`)
  })

  it('without --yes and without a terminal: a usage error (exit 2) naming the missing flag', async () => {
    const authd = cliRunner(SOURCE_CLI, join(dir, 'data'))
    expect(await authd(['init'])).toMatchObject({ code: 2, stderr: 'authd: missing --tenant-name (or run on a terminal, or pass --yes for the defaults)\n' })
    // --yes cannot invent an address: it is not offered as the way out.
    expect(await authd(['init', '--yes'])).toMatchObject({ code: 2, stderr: 'authd: missing --admin-email (or run on a terminal to be asked)\n' })
  })

  it('refuses a bad answer before writing anything, so the same command can be run again', async () => {
    const data = join(dir, 'data')
    const authd = cliRunner(SOURCE_CLI, data)
    const init = (email: string, password: string) =>
      authd(['init', '--yes', '--tenant-name', 'Acme', '--admin-email', email, '--admin-password-stdin'], { stdin: password })
    // The README's reproduction: the password holds the address's local part. Twice: the
    // second run must meet the same refusal, not "already initialised".
    for (let i = 0; i < 2; i++) {
      expect(await init('ops@acme.example', 'correct horse battery staple ops')).toMatchObject({ code: 1, stdout: '', stderr: 'authd: Password must not contain the part of your e-mail address before the @\n' })
    }
    expect(await init('ops@', PASSWORD)).toMatchObject({ code: 1, stdout: '', stderr: 'authd: email must be a valid e-mail address\n' })
    // Mail settings authd serve would refuse are refused here too, before anything is written.
    const withMail = (extra: string[]) =>
      authd(['init', '--yes', '--tenant-name', 'Acme', '--admin-email', 'ops@acme.example', '--admin-password-stdin', ...extra], { stdin: PASSWORD })
    expect(await withMail(['--smtp-url', 'http://x'])).toMatchObject({ code: 2, stderr: 'authd: --smtp-url must be an smtp:// or smtps:// URL (got "http://x")\n' })
    for (const from of ['bogus', 'Acme <a@acme.example>, Evil <e@evil.example>']) {
      expect(await withMail(['--smtp-url', 'smtp://127.0.0.1:1', '--mail-from', from])).toMatchObject({ code: 2, stderr: 'authd: --mail-from must be one address, such as auth@acme.example or "Acme <auth@acme.example>"\n' })
    }
    expect((await authd(['--json', 'tenants', 'list'])).json).toEqual([])
    expect((await authd(['--json', 'api-keys', 'list'])).json).toEqual([])

    const done = await init('ops@acme.example', PASSWORD)
    expect(done.code).toBe(0)
    expect(done.stdout).toMatch(/API key {9}authd_\S+ {3}\(shown once/)
    expect((await authd(['--json', 'tenants', 'list'])).json.map((t: { name: string }) => t.name)).toEqual(['Acme'])
  }, 30_000)

  it('ends with the command to start the server, with the options it was given (--env-file)', async () => {
    const data = join(dir, 'data')
    const envFile = join(dir, 'authd.env')
    writeFileSync(envFile, `AUTHD_DATA_DIR=${data}\nAUTHD_MAIL_FROM=Acme <auth@acme.example>\n`)
    const run = async (args: string[]) => {
      const proc = Bun.spawn([...SOURCE_CLI, ...args], { cwd: dir, stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '', AUTHD_ARGON2_MEMORY_KIB: '64', AUTHD_ARGON2_TIME_COST: '1' } })
      const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
      return { stdout, code }
    }
    const r = await run(['--env-file', envFile, 'init', '--yes', '--admin-email', 'ops@acme.example'])
    expect(r.code).toBe(0)
    const hint = /^Start the server: (.*)$/m.exec(r.stdout)![1]!
    expect(hint).toBe(`authd --env-file ${envFile} serve`)
    // The hint's options reach the database init wrote, not a new one in ./data.
    const listed = await run([...hint.split(' ').slice(1, -1), '--json', 'tenants', 'list'])
    expect(JSON.parse(listed.stdout)).toHaveLength(1)
  })

  it('says which address the invitation\'s link assumes when AUTHD_PUBLIC_URL is not set, as every command writing a link does', async () => {
    const assumed = await cliRunner(SOURCE_CLI, join(dir, 'data'))(['init', '--yes', '--admin-email', 'ops@acme.example'])
    expect(assumed.code).toBe(0)
    expect(assumed.stderr).toBe('authd: AUTHD_PUBLIC_URL is not set: links assume http://127.0.0.1:3000, the default address (no server has recorded one yet); set AUTHD_PUBLIC_URL to the address people reach authd at\n')
    // Set: nothing to say. No invitation (a password given): no link, nothing to say.
    const set = await cliRunner(SOURCE_CLI, join(dir, 'set'))(['init', '--yes', '--admin-email', 'ops@acme.example'], { env: { AUTHD_PUBLIC_URL: 'https://auth.acme.example' } })
    expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: '' })
    const withPassword = await cliRunner(SOURCE_CLI, join(dir, 'password'))(['init', '--yes', '--admin-email', 'ops@acme.example', '--admin-password-stdin'], { stdin: PASSWORD })
    expect({ code: withPassword.code, stderr: withPassword.stderr }).toEqual({ code: 0, stderr: '' })
  })

  it('with SMTP down: says the invitation is queued and why, warns about the test message, and exits 0', async () => {
    const r = await cliRunner(SOURCE_CLI, join(dir, 'data'))(['init', '--yes', '--admin-email', 'b@acme.example', '--smtp-url', 'smtp://127.0.0.1:1', '--test-mail-to', 'ops@acme.example'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^admin {11}b@acme\.example: invitation queued; SMTP refused: .*ECONNREFUSED.* \(authd serve retries it\); setup token \S+$/m)
    expect(r.stdout).not.toContain('e-mailed')
    expect(r.stderr).toMatch(/^authd: warning: the test message to ops@acme\.example was not sent \(.*ECONNREFUSED.*\)/m)

    const json = await cliRunner(SOURCE_CLI, join(dir, 'other'))(['--json', 'init', '--yes', '--admin-email', 'b@acme.example', '--smtp-url', 'smtp://127.0.0.1:1', '--test-mail-to', 'ops@acme.example'])
    expect(json.code).toBe(0)
    expect(json.json.admin.invitation).toEqual({ status: 'queued', error: expect.stringContaining('ECONNREFUSED') })
    expect(json.json.smtp).toMatchObject({ configured: true, testMessage: 'failed', error: expect.any(String) })
  })
})
