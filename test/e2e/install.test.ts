// install.sh into a temporary prefix: the installed binary serves; a second run upgrades in
// place and keeps the data and the configuration. Root-only steps are exercised with the
// current user (no new system user) and a temporary unit directory (no systemctl).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { appendFileSync, chmodSync, existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD, tempDir, toResult } from '../helpers'

const isRoot = process.getuid?.() === 0
let dir: string
beforeAll(() => {
  dir = tempDir()
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const paths = (under = '') => ({ prefix: join(dir, under, 'prefix'), data: join(dir, under, 'data'), etc: join(dir, under, 'etc'), units: join(dir, under, 'systemd') })

async function install(args: string[], asUser?: string) {
  const command = asUser ? ['runuser', '-u', asUser, '--', 'bash', join(ROOT, 'install.sh'), ...args] : ['bash', join(ROOT, 'install.sh'), ...args]
  const proc = Bun.spawn(command, { cwd: ROOT, stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

describe('install.sh', () => {
  it.skipIf(!isRoot)('installs, serves, and upgrades in place keeping data and configuration', async () => {
    const p = paths()
    const args = ['--prefix', p.prefix, '--data-dir', p.data, '--config-dir', p.etc, '--user', 'root', '--systemd', '--systemd-dir', p.units]
    const first = await install(args)
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining('install.sh:') })
    expect(first.stdout).toContain('is installed')
    // A first install: the first run is next (as root for a root service: no sudo -u).
    const installed = `${join(p.prefix, 'bin/authd')} --env-file ${join(p.etc, 'authd.env')}`
    expect(first.stdout).toContain(`Next: the first tenant, API key and admin (once):\n  ${installed} init\nThen check everything with: ${installed} doctor\n`)
    const binary = join(p.prefix, 'bin/authd')
    expect(statSync(binary).mode & 0o777).toBe(0o755)
    expect(statSync(p.data).mode & 0o777).toBe(0o700)
    const envFile = join(p.etc, 'authd.env')
    expect(statSync(envFile).mode & 0o777).toBe(0o640)
    expect(readFileSync(envFile, 'utf8')).toContain(`AUTHD_DATA_DIR=${p.data}`)
    const unit = readFileSync(join(p.units, 'authd.service'), 'utf8')
    for (const line of [`ExecStart=${binary} --data-dir ${p.data} serve`, `EnvironmentFile=${envFile}`, 'NoNewPrivileges=yes', 'ProtectSystem=strict', `ReadWritePaths=${p.data}`, 'CapabilityBoundingSet=']) {
      expect(unit).toContain(line)
    }
    const authd = cliRunner([binary], p.data)
    expect((await authd(['--json', 'migrate', '--status'])).json.pending).toEqual([])

    // The installed binary: first run, then serve and log in.
    const init = await authd(['--json', 'init', '--yes', '--admin-email', 'boss@acme.example', '--admin-password-stdin'], { stdin: PASSWORD })
    expect(init.code).toBe(0)
    const serve = async () => {
      const proc = Bun.spawn([binary, '--data-dir', p.data, 'serve', '--port', '0'], { stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '' } })
      const reader = proc.stdout.getReader()
      let out = ''
      while (!out.includes('"msg":"listening"')) out += new TextDecoder().decode((await reader.read()).value)
      reader.releaseLock()
      return { proc, url: JSON.parse(out.split('\n').find((l) => l.includes('listening'))!).url as string }
    }
    const login = (url: string) =>
      fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': init.json.apiKey.key }, body: JSON.stringify({ email: 'boss@acme.example', password: PASSWORD }) }).then(toResult)
    let running = await serve()
    expect((await login(running.url)).status).toBe(201)
    running.proc.kill('SIGTERM')
    await running.proc.exited

    // Upgrade: the operator's edits to the environment file and the data survive.
    appendFileSync(envFile, '# edited by the operator\n')
    const inodeBefore = statSync(binary).ino
    const second = await install(args)
    expect(second.code).toBe(0)
    expect(second.stdout).toContain(`keeping ${envFile}`)
    // An upgrade's advice: what changed and the restart, never the first run again.
    const version = (await authd(['--version'])).stdout.trim()
    expect(second.stdout).toContain(`authd is upgraded from ${version} to ${version}; the data and ${envFile} are kept.`)
    expect(second.stdout).toContain('  migrations    the database is up to date\n')
    expect(second.stdout).toContain(`A running authd keeps ${version} until it restarts: restart it to run ${version}.`)
    expect(second.stdout).not.toContain('init')
    expect(second.stdout).toContain(`Then check everything with: ${binary} --env-file ${envFile} doctor\n`)
    expect(readFileSync(envFile, 'utf8')).toContain('# edited by the operator')
    expect(statSync(binary).ino).not.toBe(inodeBefore)
    running = await serve()
    expect((await login(running.url)).status).toBe(201)
    running.proc.kill('SIGTERM')
    await running.proc.exited

    // The operations guide's own format for the sender (docs/operations.md): authd.env is KEY=VALUE (as systemd reads it), not shell.
    appendFileSync(envFile, 'AUTHD_MAIL_FROM=Acme <auth@acme.example>\n')
    const third = await install(args)
    expect({ code: third.code, stderr: third.stderr }).toEqual({ code: 0, stderr: '' })

    // A setting the new version refuses: the upgrade stops before the binary is replaced.
    appendFileSync(envFile, 'AUTHD_PORT=eighty\n')
    const inodeKept = statSync(binary).ino
    const refused = await install(args)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('AUTHD_PORT must be an integer')
    expect(refused.stderr).toContain(`install.sh: the new version could not migrate (above); ${binary} is unchanged`)
    expect(statSync(binary).ino).toBe(inodeKept)
    expect(existsSync(`${binary}.new`)).toBe(false)
  }, 300_000)

  it.skipIf(!isRoot)('refuses clearly without root, unless every path is one the user owns', async () => {
    const canRead = Bun.spawnSync(['runuser', '-u', 'nobody', '--', 'test', '-r', join(ROOT, 'install.sh')]).exitCode === 0
    if (!canRead) return // this checkout is not readable by another user here
    const refused = await install([], 'nobody')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('needs root: run it with sudo')
    expect(refused.stderr).toContain('./install.sh --prefix ~/.local')
    const systemd = await install(['--systemd'], 'nobody')
    expect(systemd.stderr).toBe('install.sh: --systemd needs root (sudo ./install.sh --systemd)\n')
  })

  it('has every option it explains in the operations guide (docs/operations.md)', async () => {
    const help = (await install(['--help'])).stdout
    const options = [...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]!)
    expect(options).toContain('--user')
    const readme = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8')
    const section = readme.slice(readme.indexOf('# Running authd on a VM'), readme.indexOf('\n## Monitoring'))
    expect(options.filter((option) => !section.includes(option))).toEqual([])
  })

  it.skipIf(!isRoot)('names the service user in the commands it advises (sudo -u), at the install and at an upgrade', async () => {
    const p = paths('nobody')
    // (the service user must reach the binary and the data in this test's directory)
    chmodSync(dir, 0o755)
    const args = ['--prefix', p.prefix, '--data-dir', p.data, '--config-dir', p.etc, '--user', 'nobody']
    const authd = `sudo -u nobody ${join(p.prefix, 'bin/authd')} --env-file ${join(p.etc, 'authd.env')}`
    const first = await install(args)
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' })
    expect(first.stdout).toContain(`\n  ${authd} init\nThen check everything with: ${authd} doctor\n`)
    const upgrade = await install(args)
    expect(upgrade.code).toBe(0)
    expect(upgrade.stdout).toContain('authd is upgraded from')
    // (not initialised yet: the first run is still next)
    expect(upgrade.stdout).toContain(`\n  ${authd} init\nThen check everything with: ${authd} doctor\n`)
  }, 300_000)

  it('explains its options', async () => {
    const help = await install(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toStartWith('Usage: install.sh [options]\n\nInstalls authd on this Linux machine')
    expect(help.stdout).not.toContain('set -')
    expect(help.stdout).toContain('--systemd')
    // As the CLI answers a usage error: one line, a hint, exit 2 (not the whole usage).
    const bad = await install(['--frobnicate'])
    expect({ code: bad.code, stdout: bad.stdout, stderr: bad.stderr }).toEqual({ code: 2, stdout: '', stderr: 'install.sh: unknown option --frobnicate\nrun install.sh --help for usage\n' })
  })
})
