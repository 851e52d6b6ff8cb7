// authd init: the wizard answered in a real terminal (tmux), and the --yes path with no
// terminal at all, which must never wait for input.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
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

  it('without --yes and without a terminal: one clear line naming the missing flag', async () => {
    const r = await cliRunner(SOURCE_CLI, join(dir, 'data'))(['init'])
    expect(r).toMatchObject({ code: 1, stderr: 'authd: missing --tenant-name (or run on a terminal, or pass --yes for the defaults)\n' })
  })

  it('reports a failed SMTP test message and exits 1', async () => {
    const r = await cliRunner(SOURCE_CLI, join(dir, 'data'))(['--json', 'init', '--yes', '--admin-email', 'b@acme.example', '--smtp-url', 'smtp://127.0.0.1:1', '--test-mail-to', 'ops@acme.example'])
    expect(r.code).toBe(1)
    expect(r.json.smtp).toMatchObject({ configured: true, testMessage: 'failed', error: expect.any(String) })
  })
})
