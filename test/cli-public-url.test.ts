// The links the CLI writes (spec §28): without AUTHD_PUBLIC_URL they use the address the server
// recorded at its start, not the CLI's own default port, and the CLI says which it assumed.
import { afterEach, describe, expect, it } from 'bun:test'
import { untilListening } from './binary'
import { cliRunner, SOURCE_CLI } from './cli-runner'
import { tempDir } from './helpers'
import { freePort } from './oidc-journey'
import { sentTo, startSmtp, type TestSmtp } from './smtp'

let stop: Array<() => Promise<unknown> | void> = []
afterEach(async () => {
  for (const done of stop.splice(0).reverse()) await done()
})

/** `authd serve` from source on `port`, until it says it listens. */
async function serve(dataDir: string, env: Record<string, string>) {
  const proc = Bun.spawn([...SOURCE_CLI, '--data-dir', dataDir, 'serve'], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', AUTHD_ARGON2_MEMORY_KIB: '64', AUTHD_ARGON2_TIME_COST: '1', ...env },
  })
  stop.push(async () => {
    proc.kill()
    await proc.exited
  })
  await untilListening(proc)
}

const linkIn = (text: string) => /https?:\/\/\S+/.exec(text)![0]

describe('links the CLI writes', () => {
  it('use the address the server listens on (AUTHD_PORT=…), and the CLI says so on stderr', async () => {
    const dir = tempDir()
    const smtp: TestSmtp = await startSmtp()
    stop.push(() => smtp.close())
    const authd = cliRunner(SOURCE_CLI, dir)
    const tenant = (await authd(['--json', 'tenants', 'create', '--name', 'Acme'])).json
    const port = freePort()
    await serve(dir, { AUTHD_PORT: String(port), AUTHD_SMTP_URL: smtp.url })
    const origin = `http://127.0.0.1:${port}`

    const invited = await authd(['users', 'create', '--tenant', tenant.tenantId, '--email', 'grace@example.com', '--first-name', 'Grace', '--last-name', 'Hopper', '--invite'])
    expect(invited.code).toBe(0)
    expect(invited.stderr).toBe(`authd: AUTHD_PUBLIC_URL is not set: links assume ${origin}, the address authd serve recorded at its last start; set AUTHD_PUBLIC_URL to the address people reach authd at\n`)
    const mail = await smtp.waitFor(sentTo('grace@example.com'))
    expect(linkIn(mail.text!)).toStartWith(`${origin}/t/${tenant.tenantId}/`)
    // The link reaches the server that mailed it.
    expect((await fetch(linkIn(mail.text!))).status).toBe(200)

    const updated = await authd(['tenants', 'update', tenant.tenantId, '--signup', 'open'])
    expect(updated.stdout).toContain(`pages at ${origin}/t/${tenant.tenantId}`)
    expect(updated.stderr).toContain(`links assume ${origin}`)
    // `tenants show` writes the pages' link too.
    const shown = await authd(['tenants', 'show', tenant.tenantId])
    expect(shown.stdout).toContain(`pages at ${origin}/t/${tenant.tenantId}`)
    expect(shown.stderr).toContain(`links assume ${origin}`)
    // A command that writes no link says nothing.
    expect((await authd(['users', 'list', '--tenant', tenant.tenantId])).stderr).toBe('')
  })

  it('use AUTHD_PUBLIC_URL where it is set, silently; the default address, said so, where no server recorded one', async () => {
    const dir = tempDir()
    const authd = cliRunner(SOURCE_CLI, dir)
    const tenant = (await authd(['--json', 'tenants', 'create', '--name', 'Acme'])).json
    const before = await authd(['--json', 'tenants', 'update', tenant.tenantId, '--signup', 'open'])
    expect(before.json.pagesUrl).toBe(`http://127.0.0.1:3000/t/${tenant.tenantId}`)
    expect(before.stderr).toBe('authd: AUTHD_PUBLIC_URL is not set: links assume http://127.0.0.1:3000, the default address (no server has recorded one yet); set AUTHD_PUBLIC_URL to the address people reach authd at\n')

    const port = freePort()
    await serve(dir, { AUTHD_PORT: String(port) })
    const set = await authd(['--json', 'tenants', 'update', tenant.tenantId, '--signup', 'closed'], { env: { AUTHD_PUBLIC_URL: 'https://auth.example.com' } })
    expect(set.json.pagesUrl).toBe(`https://auth.example.com/t/${tenant.tenantId}`)
    expect(set.stderr).toBe('')
    const doctor = await authd(['doctor'])
    expect(doctor.stdout).toContain(`public URL http://127.0.0.1:${port}`)
    expect(doctor.stderr).toContain(`links assume http://127.0.0.1:${port}`)
  })
})
