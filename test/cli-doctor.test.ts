import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cliRunner, SOURCE_CLI } from './cli-runner'
import { tempDir } from './helpers'
import { startSmtp } from './smtp'
import { startOidcUpstream } from './upstreams/oidc-provider'
import { loadConfig } from '../src/config'
import { sizeFindings } from '../src/cli/doctor/size'

let dir: string
let authd: ReturnType<typeof cliRunner>
beforeEach(() => {
  dir = join(tempDir(), 'data')
  authd = cliRunner(SOURCE_CLI, dir)
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const statusOf = (findings: Array<{ check: string; status: string }>) => Object.fromEntries(findings.map((f) => [f.check, f.status]))

describe('authd doctor', () => {
  it('creates the data directory 700, and the database, backups and mail files 600 from the start', async () => {
    await authd(['migrate'])
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, 'authd.db')).mode & 0o777).toBe(0o600)
    const backup = join(dir, '..', 'backup.db')
    await authd(['backup', backup])
    expect(statSync(backup).mode & 0o777).toBe(0o600)
    const { tenantId } = (await authd(['--json', 'tenants', 'create', '--name', 'Acme'])).json
    const { userId } = (await authd(['--json', 'users', 'create', '--tenant', tenantId, '--email', 'ada@example.com', '--first-name', 'Ada', '--last-name', 'L'])).json
    await authd(['users', 'invite', userId])
    const mailDir = join(dir, 'mail')
    expect(statSync(mailDir).mode & 0o777).toBe(0o700)
    const [eml] = readdirSync(mailDir)
    expect(statSync(join(mailDir, eml!)).mode & 0o777).toBe(0o600)
    const r = await authd(['--json', 'doctor'])
    expect(statusOf(r.json)['mail directory permissions']).toBe('ok')
  })

  it("checks each tenant's passkey relying party as a browser would", async () => {
    await authd(['migrate'])
    const { tenantId } = (await authd(['--json', 'tenants', 'create', '--name', 'Acme'])).json
    // The default: the host of AUTHD_PUBLIC_URL, here the address authd listens on.
    const onIp = (await authd(['--json', 'doctor'])).json.find((f: { check: string }) => f.check === 'passkeys')
    expect(onIp).toMatchObject({ status: 'warn', detail: 'tenant Acme: the RP ID 127.0.0.1 is an IP address, which browsers refuse: its users cannot use passkeys (its pages offer none)' })
    const named = cliRunner(SOURCE_CLI, dir, { AUTHD_PUBLIC_URL: 'https://auth.example.com' })
    expect(statusOf((await named(['--json', 'doctor'])).json).passkeys).toBe('ok')
    expect((await named(['tenants', 'update', tenantId, '--passkey-rp-id', 'example.com', '--passkey-origins', 'https://app.example.com'])).code).toBe(0)
    expect(statusOf((await named(['--json', 'doctor'])).json).passkeys).toBe('ok')
    // Origins edited by hand beside the RP ID: the CLI and the admin API refuse a misfit, doctor finds one.
    const db = new Database(join(dir, 'authd.db'))
    db.run(`UPDATE tenants SET passkey_origins = '["https://app.example.org"]'`)
    db.close()
    const misfit = (await named(['--json', 'doctor'])).json.find((f: { check: string }) => f.check === 'passkeys')
    expect(misfit).toMatchObject({ status: 'fail', detail: 'tenant Acme: the RP ID example.com is not a registrable suffix of https://app.example.org: browsers refuse passkeys there' })
  })

  it("fails forward authentication that cannot work: no trusted proxy to ask, or authd's host on none of the tenant's domains", async () => {
    await authd(['migrate'])
    const { tenantId } = (await authd(['--json', 'tenants', 'create', '--name', 'Acme'])).json
    const at = (publicUrl: string, proxies = '') => cliRunner(SOURCE_CLI, dir, { AUTHD_PUBLIC_URL: publicUrl, AUTHD_TRUSTED_PROXIES: proxies })
    expect((await at('https://auth.example.com')(['tenants', 'update', tenantId, '--forward-auth-domain', 'example.com'])).code).toBe(0)
    const forwardAuth = (findings: Array<{ check: string; status: string; detail: string; fix?: string }>) => findings.filter((f) => f.check === 'forward auth')

    const noProxy = await at('https://auth.example.com')(['--json', 'doctor'])
    expect(noProxy.code).toBe(1)
    expect(forwardAuth(noProxy.json)).toEqual([
      {
        check: 'forward auth',
        status: 'fail',
        detail: "tenant Acme has forward-auth domains but AUTHD_TRUSTED_PROXIES is empty: authd believes no proxy's account of the original request, so it refuses every check (403)",
        fix: 'set AUTHD_TRUSTED_PROXIES to the address of the reverse proxy that asks (such as 127.0.0.1) and restart authd',
      },
    ])
    expect(forwardAuth((await at('https://auth.example.com', '127.0.0.1')(['--json', 'doctor'])).json)).toEqual([{ check: 'forward auth', status: 'ok', detail: 'tenant Acme: session cookie for example.com' }])

    // AUTHD_PUBLIC_URL moved off the domain: no cookie would be set.
    const moved = await at('https://login.example.org', '127.0.0.1')(['doctor'])
    expect(moved.code).toBe(1)
    expect(moved.stdout).toContain(
      "✗ forward auth: tenant Acme: authd's public URL https://login.example.org is on none of its forward-auth domains (example.com): a sign-in sets no session cookie for them, so every check of their applications answers as if nobody had signed in\n" +
        `    fix: set AUTHD_PUBLIC_URL to an address on one of them, such as https://auth.example.com, or give the domain that holds login.example.org: authd tenants update ${tenantId} --forward-auth-domain <domain>\n`,
    )
    // A disabled tenant guards nothing.
    await authd(['tenants', 'disable', tenantId])
    expect(forwardAuth((await at('https://login.example.org')(['--json', 'doctor'])).json)).toEqual([])
  })

  it('reads each upstream provider\'s discovery as a sign-in would, and says which cannot be read', async () => {
    const upstream = await startOidcUpstream()
    try {
      await authd(['migrate'])
      const { tenantId } = (await authd(['--json', 'tenants', 'create', '--name', 'Acme'])).json
      const create = (name: string, issuer: string) =>
        authd(['--json', 'providers', 'create', '--tenant', tenantId, '--type', 'oidc', '--name', name, '--issuer', issuer, '--client-id', 'authd', '--client-secret-stdin'], { stdin: 'secret\n' })
      expect((await create('Upstream', upstream.issuer)).code).toBe(0)
      const providers = (findings: Array<{ check: string; status: string; detail: string }>) => findings.filter((f) => f.check === 'providers')
      // on this machine: a private address, which authd reaches only when told
      const closed = await authd(['--json', 'doctor'])
      expect(providers(closed.json)).toEqual([
        expect.objectContaining({ status: 'fail', detail: expect.stringContaining('tenant Acme: Upstream (' + upstream.issuer + ') cannot be read: 127.0.0.1 does not resolve to an address authd may reach') }),
      ])
      const allowed = { env: { AUTHD_PROVIDERS_ALLOW_PRIVATE: '127.0.0.1/32' } }
      expect(providers((await authd(['--json', 'doctor'], allowed)).json)).toEqual([{ check: 'providers', status: 'ok', detail: '1 upstream provider(s) answer' }])
      expect((await create('Gone', 'http://127.0.0.1:9')).code).toBe(0)
      const gone = providers((await authd(['--json', 'doctor'], allowed)).json)
      expect(gone).toEqual([expect.objectContaining({ status: 'fail', detail: expect.stringContaining('tenant Acme: Gone (http://127.0.0.1:9) cannot be read') })])
    } finally {
      await upstream.close()
    }
  })

  it('warns about a mail file that other users can read', async () => {
    await authd(['migrate'])
    mkdirSync(join(dir, 'mail'), { mode: 0o700 })
    writeFileSync(join(dir, 'mail', 'm.eml'), 'OTP', { mode: 0o644 })
    const r = await authd(['--json', 'doctor'])
    expect(r.json.find((f: any) => f.check === 'mail directory permissions')).toMatchObject({ status: 'warn', fix: `chmod go-rwx ${join(dir, 'mail', 'm.eml')}` })
  })

  it('warns about AUTHD_* names it does not know, with the closest setting, and says not that all are valid', async () => {
    await authd(['migrate'])
    const envFile = join(dir, '..', 'authd.env')
    writeFileSync(envFile, 'AUTHD_TLS_CRT=/etc/authd/cert.pem\n')
    const r = await authd(['--env-file', envFile, '--json', 'doctor'], { env: { AUTHD_CORS_ORIGIN: 'https://app.example.com', AUTHD_NONSENSE_WORDS: '1', AUTHD_PUBLIC_URL: 'http://127.0.0.1:3000' } })
    expect(r.stderr).toBe('')
    expect(r.json.find((f: any) => f.check === 'configuration')).toEqual({
      check: 'configuration',
      status: 'warn',
      detail:
        'AUTHD_CORS_ORIGIN is not an authd setting (did you mean AUTHD_CORS_ORIGINS?): it is ignored; AUTHD_NONSENSE_WORDS is not an authd setting: it is ignored; AUTHD_TLS_CRT is not an authd setting (did you mean AUTHD_TLS_CERT?): it is ignored',
      fix: 'rename AUTHD_CORS_ORIGIN to AUTHD_CORS_ORIGINS, remove AUTHD_NONSENSE_WORDS, rename AUTHD_TLS_CRT to AUTHD_TLS_CERT (docs/configuration.md)',
    })
    // Every other command says it once on stderr, and goes on.
    const listed = await authd(['--env-file', envFile, '--json', 'tenants', 'list'], { env: { AUTHD_CORS_ORIGIN: 'https://app.example.com' } })
    expect(listed).toMatchObject({ code: 0, json: [] })
    expect(listed.stderr).toBe(
      'authd: warning: AUTHD_CORS_ORIGIN is not an authd setting (did you mean AUTHD_CORS_ORIGINS?): it is ignored\n' +
        'authd: warning: AUTHD_TLS_CRT is not an authd setting (did you mean AUTHD_TLS_CERT?): it is ignored\n',
    )
  })

  it('reports a healthy installation, with SMTP reachable', async () => {
    const smtp = await startSmtp()
    try {
      await authd(['keys', 'rotate'])
      const r = await authd(['--json', 'doctor'], { env: { AUTHD_SMTP_URL: smtp.url } })
      expect(r.code).toBe(0)
      expect(statusOf(r.json)).toEqual({
        configuration: 'ok',
        database: 'ok',
        migrations: 'ok',
        'signing key': 'ok',
        'mail outbox': 'ok',
        'database size': 'ok',
        'data directory permissions': 'ok',
        'database file permissions': 'ok',
        transport: 'ok',
        metrics: 'ok',
        smtp: 'ok',
      })
      expect(r.json.find((f: any) => f.check === 'metrics').fix).toContain('AUTHD_METRICS_ADDR=127.0.0.1:9464')
    } finally {
      await smtp.close()
    }
  })

  it('says what to fix, and exits 1 on a failure', async () => {
    await authd(['migrate'])
    chmodSync(dir, 0o755)
    const r = await authd(['doctor'], { env: { AUTHD_SMTP_URL: 'smtp://127.0.0.1:1', AUTHD_HOST: '0.0.0.0', AUTHD_METRICS_ADDR: '0.0.0.0:9464', AUTHD_REFRESH_TOKEN_FORMAT: 'hash' } })
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(`! data directory permissions: ${dir} is 755`)
    expect(r.stdout).toContain(`    fix: chmod go-rwx ${dir}`)
    expect(r.stdout).toContain('✗ smtp: cannot reach the SMTP server')
    expect(r.stdout).toContain('! transport: listening on 0.0.0.0')
    expect(r.stdout).toContain('! signing key: no signing key yet')
    expect(r.stdout).toContain('! metrics: http://0.0.0.0:9464/metrics listens on every interface')
    expect(r.stdout).toContain('! refresh tokens: AUTHD_REFRESH_TOKEN_FORMAT=hash')
  })

  it('warns when deleted rows left much of the file free, and says how to give the space back', async () => {
    await authd(['migrate'])
    const db = new Database(join(dir, 'authd.db'))
    // 96 MiB of audit rows, then deleted (as retention deletes them): their pages stay in the file.
    const insert = db.prepare("INSERT INTO audit_events (at, type, detail) VALUES (0, 'bench', ?)")
    db.transaction(() => {
      for (let i = 0; i < 96; i++) insert.run('x'.repeat(1024 * 1024))
    })()
    db.run("DELETE FROM audit_events WHERE type = 'bench'")
    db.run('PRAGMA wal_checkpoint(TRUNCATE)')
    insert.finalize()
    db.close()
    const r = await authd(['--json', 'doctor'])
    const finding = r.json.find((f: any) => f.check === 'database free space')
    expect(finding).toEqual({ check: 'database free space', status: 'warn', detail: expect.stringMatching(/^9\d MiB \(\d+%\) of the database is free pages left by deleted rows/), fix: expect.stringContaining('authd backup compact.db') })
  })

  it('warns past 1 GiB with the largest tables and the retention in effect (the figures as the engines report them)', () => {
    const config = loadConfig({ AUTHD_RETAIN_AUDIT: '90d' }, { dataDir: dir })
    const facts = { engine: 'sqlite' as const, bytes: 3 * 1024 ** 3, freeBytes: 0, largest: [{ table: 'refresh_tokens', rows: 20_000_000 }, { table: 'audit_events', rows: 5_000_000 }] }
    expect(sizeFindings(facts, config)).toEqual([
      {
        check: 'database size',
        status: 'warn',
        detail: 'the database is 3.0 GiB (largest: refresh_tokens 20,000,000 rows, audit_events 5,000,000 rows); retention keeps audit events 90 d, ended sessions 30 d, sent mail 30 d',
        fix: expect.stringContaining('lower AUTHD_RETAIN_AUDIT'),
      },
    ])
    expect(sizeFindings({ ...facts, bytes: 200 * 1024 ** 2, largest: [] }, config)).toEqual([{ check: 'database size', status: 'ok', detail: '200 MiB, 0% free' }])
  })

  it('fails on a missing database', async () => {
    const r = await authd(['--json', 'doctor'])
    expect(r.code).toBe(1)
    expect(r.json.find((f: any) => f.check === 'database')).toMatchObject({ status: 'fail', fix: expect.stringContaining('authd migrate') })
  })
})
