import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { cliRunner, SOURCE_CLI, type CliResult } from './cli-runner'
import { PASSWORD, tempDir } from './helpers'

let dir: string
let authd: ReturnType<typeof cliRunner>
beforeEach(() => {
  dir = tempDir()
  // (set: the links these commands print need not be said to assume an address, see cli-public-url.test.ts)
  authd = cliRunner(SOURCE_CLI, dir, { AUTHD_PUBLIC_URL: 'http://127.0.0.1:3000' })
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const ok = (r: CliResult) => {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
  return r.json
}
const failsWith = (r: CliResult, line: string) => {
  expect(r.code).toBe(1)
  expect(r.stderr).toBe(`authd: ${line}\n`)
  expect(r.stdout).toBe('')
}

async function setUpTenant() {
  const tenant = ok(await authd(['--json', 'tenants', 'create', '--name', 'Acme']))
  return tenant.tenantId as string
}

describe('authd CLI', () => {
  it('--help lists every command group and exits 0', async () => {
    const r = await authd(['--help'])
    expect(r.code).toBe(0)
    for (const command of ['serve', 'migrate', 'tenants', 'api-keys', 'users', 'keys', 'sessions']) expect(r.stdout).toContain(command)
  })

  it('migrate --status lists pending migrations, migrate applies them, --json prints {applied, pending}', async () => {
    const before = ok(await authd(['--json', 'migrate', '--status']))
    expect(before.applied).toEqual([])
    expect(before.pending.length).toBeGreaterThan(0)
    const after = ok(await authd(['--json', 'migrate']))
    expect(after).toEqual({ applied: before.pending, pending: [] })
    expect((await authd(['migrate'])).stdout).toBe('the database is up to date\n')
  })

  it('tenants create | list | disable | enable, with the --json shapes of the spec', async () => {
    const tenant = ok(await authd(['--json', 'tenants', 'create', '--name', 'Acme']))
    expect(tenant).toEqual({ tenantId: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Acme', audience: `urn:authd:tenant:${tenant.tenantId}` })
    expect(ok(await authd(['--json', 'tenants', 'list']))).toEqual([{ ...tenant, signup: 'closed', disabled: false, createdAt: expect.any(String), returnToOrigins: [], forwardAuthDomains: [] }])
    expect(ok(await authd(['--json', 'tenants', 'disable', tenant.tenantId])).disabled).toBe(true)
    expect(ok(await authd(['--json', 'tenants', 'enable', tenant.tenantId])).disabled).toBe(false)
  })

  it("tenants create --audience and tenants update --audience set the tokens' aud; one audience per tenant", async () => {
    const a = ok(await authd(['--json', 'tenants', 'create', '--name', 'A', '--audience', 'https://api.a.example']))
    expect(a.audience).toBe('https://api.a.example')
    const b = ok(await authd(['--json', 'tenants', 'create', '--name', 'B']))
    expect(ok(await authd(['--json', 'tenants', 'update', b.tenantId, '--audience', 'https://api.b.example'])).audience).toBe('https://api.b.example')
    const taken = await authd(['tenants', 'update', b.tenantId, '--audience', 'https://api.a.example'])
    expect({ code: taken.code, stderr: taken.stderr }).toEqual({ code: 1, stderr: 'authd: Audience https://api.a.example belongs to another tenant\n' })
    expect((await authd(['tenants', 'create', '--name', 'C', '--audience', 'has space'])).stderr).toBe('authd: Audience must be 1 to 200 printable ASCII characters without spaces\n')
    // authd's own form is reserved to the tenant it names: B cannot take A's default, A can take its own back.
    const squat = await authd(['tenants', 'update', b.tenantId, '--audience', `URN:authd:tenant:${a.tenantId}`])
    expect({ code: squat.code, stderr: squat.stderr }).toEqual({ code: 1, stderr: `authd: Audience urn:authd:… is reserved: only urn:authd:tenant:${b.tenantId} may be given for this tenant\n` })
    expect(ok(await authd(['--json', 'tenants', 'update', a.tenantId, '--audience', `urn:authd:tenant:${a.tenantId}`])).audience).toBe(`urn:authd:tenant:${a.tenantId}`)
  })

  it('tenants update --signup sets who may sign up (closed by default); list shows it', async () => {
    const a = ok(await authd(['--json', 'tenants', 'create', '--name', 'A']))
    expect(ok(await authd(['--json', 'tenants', 'list'])).find((t: { tenantId: string }) => t.tenantId === a.tenantId).signup).toBe('closed')
    expect(ok(await authd(['--json', 'tenants', 'update', a.tenantId, '--signup', 'domains:B.example, a.example'])).signup).toBe('domains:a.example,b.example')
    expect((await authd(['tenants', 'update', a.tenantId, '--signup', 'open'])).stdout).toContain('sign-up open')
    const none = await authd(['tenants', 'update', a.tenantId])
    expect({ code: none.code, stderr: none.stderr }).toEqual({ code: 2, stderr: 'authd: nothing to change: give --audience, --signup, --passkey-rp-id, --passkey-origins, --return-to-origin, --forward-auth-domain, --slug, --display-name, --accent-color, --logo-url, --logo or --console\n' })
    const bad = await authd(['tenants', 'update', a.tenantId, '--signup', 'domains:'])
    expect(bad.stderr).toBe('authd: signup must be closed, open, or domains: followed by 1 to 100 comma-separated e-mail domains (domains:a.example,b.example)\n')
    expect((await authd(['tenants', 'update', 'nope', '--signup', 'open'])).stderr).toBe('authd: Tenant not found: nope\n')
  })

  it('tenants update --console off|on turns the tenant’s admin console off and on; show says which', async () => {
    const a = ok(await authd(['--json', 'tenants', 'create', '--name', 'A']))
    expect(ok(await authd(['--json', 'tenants', 'show', a.tenantId])).console).toBe('on')
    expect(ok(await authd(['--json', 'tenants', 'update', a.tenantId, '--console', 'off'])).console).toBe('off')
    expect((await authd(['tenants', 'show', a.tenantId])).stdout).toContain('admin console off (--console on to open it)')
    expect((await authd(['tenants', 'update', a.tenantId, '--console', 'on'])).code).toBe(0)
    expect((await authd(['tenants', 'show', a.tenantId])).stdout).toContain(`admin console at `)
    const bad = await authd(['tenants', 'update', a.tenantId, '--console', 'maybe'])
    expect({ code: bad.code, stderr: bad.stderr }).toEqual({ code: 2, stderr: 'authd: --console must be on or off, not "maybe"\n' })
  })

  it('tenants update --return-to-origin sets the origins return_to may lead to (repeatable, replacing the list; \'\' clears it); show and list show them', async () => {
    const a = ok(await authd(['--json', 'tenants', 'create', '--name', 'A']))
    const set = ok(await authd(['--json', 'tenants', 'update', a.tenantId, '--return-to-origin', 'https://app.example.com', '--return-to-origin', 'http://localhost:5173,http://127.0.0.1:8080']))
    expect(set.returnToOrigins).toEqual(['https://app.example.com', 'http://localhost:5173', 'http://127.0.0.1:8080'])
    expect(ok(await authd(['--json', 'tenants', 'show', a.tenantId]))).toMatchObject({ tenantId: a.tenantId, returnToOrigins: set.returnToOrigins, passkeyOrigins: ['http://127.0.0.1:3000'] })
    expect(ok(await authd(['--json', 'tenants', 'list']))[0].returnToOrigins).toEqual(set.returnToOrigins)
    expect((await authd(['tenants', 'show', a.tenantId])).stdout).toContain("return_to may lead to authd's own pages and https://app.example.com, http://localhost:5173, http://127.0.0.1:8080\n")
    // An origin only, as strictly as passkey origins: https (http for loopback), no path, nothing else.
    // (every form refused: test/unit/return-to-origins.test.ts)
    for (const origin of ['https://app.example.com/after', 'http://app.example.com']) {
      const refused = await authd(['tenants', 'update', a.tenantId, '--return-to-origin', origin])
      expect({ origin, code: refused.code, stderr: refused.stderr }).toEqual({ origin, code: 1, stderr: 'authd: returnToOrigins must be origins such as https://app.example.com (https, no path; http only for a loopback host)\n' })
    }
    expect(ok(await authd(['--json', 'tenants', 'show', a.tenantId])).returnToOrigins).toEqual(set.returnToOrigins)
    expect(ok(await authd(['--json', 'tenants', 'update', a.tenantId, '--return-to-origin', 'https://other.example.com'])).returnToOrigins).toEqual(['https://other.example.com'])
    expect(ok(await authd(['--json', 'tenants', 'update', a.tenantId, '--return-to-origin', ''])).returnToOrigins).toEqual([])
    expect((await authd(['tenants', 'show', a.tenantId])).stdout).toContain("return_to may lead to authd's own pages only\n")
    expect((await authd(['tenants', 'show', 'nope'])).stderr).toBe('authd: Tenant not found: nope\n')
    // (eleven CLI processes, each opening the database: ~4.9 s on this machine, past bun's 5 s default at times)
  }, 15_000)

  it('api-keys create prints the key once; list shows only its prefix; revoke marks it', async () => {
    const tenantId = await setUpTenant()
    const created = ok(await authd(['--json', 'api-keys', 'create', '--tenant', tenantId, '--name', 'web']))
    expect(created).toEqual({ keyId: expect.any(String), tenantId, name: 'web', scope: 'client', key: expect.stringMatching(/^authd_[A-Za-z0-9_-]{43}$/) })
    const list = await authd(['--json', 'api-keys', 'list', '--tenant', tenantId])
    expect(list.stdout).not.toContain(created.key)
    expect(list.json).toEqual([{ keyId: created.keyId, tenantId, name: 'web', prefix: created.key.slice(0, 12), scope: 'client', createdAt: expect.any(String), revokedAt: null }])
    expect(ok(await authd(['--json', 'api-keys', 'revoke', created.keyId])).revokedAt).toEqual(expect.any(String))
  })

  it('users create with --password-stdin prints the User object', async () => {
    const tenantId = await setUpTenant()
    const user = ok(
      await authd(['--json', 'users', 'create', '--tenant', tenantId, '--email', ' Ada@Example.com', '--first-name', 'Ada', '--last-name', 'Lovelace', '--type', 'admin', '--password-stdin'], {
        stdin: PASSWORD + '\n',
      }),
    )
    expect(user).toEqual({ userId: expect.any(String), email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', type: 'admin', tenant: { tenantId, name: 'Acme' }, emailVerifiedAt: null, groups: [] })
    const [listed] = ok(await authd(['--json', 'users', 'list', '--tenant', tenantId])).items
    expect(listed).toMatchObject({ ...user, hasPassword: true, disabled: false })
  })

  it('users create without a password issues a setup token; a tenant-type user gets none', async () => {
    const tenantId = await setUpTenant()
    const base = ['--json', 'users', 'create', '--tenant', tenantId, '--first-name', 'New', '--last-name', 'Person']
    const invited = ok(await authd([...base, '--email', 'new@example.com']))
    expect(invited.setupToken).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(Date.parse(invited.setupTokenExpiresAt) - Date.now()).toBeGreaterThan(71 * 3600 * 1000)
    const machine = ok(await authd([...base, '--email', 'svc@example.com', '--type', 'tenant']))
    expect(machine.type).toBe('tenant')
    expect(machine.setupToken).toBeUndefined()
  })

  it('users disable | enable', async () => {
    const tenantId = await setUpTenant()
    const user = ok(await authd(['--json', 'users', 'create', '--tenant', tenantId, '--email', 'a@example.com', '--first-name', 'A', '--last-name', 'B']))
    expect(ok(await authd(['--json', 'users', 'disable', user.userId])).disabled).toBe(true)
    expect(ok(await authd(['--json', 'users', 'enable', user.userId])).disabled).toBe(false)
  })

  it('users mfa-reset says whether there was a factor to remove, and names an unknown user', async () => {
    const tenantId = await setUpTenant()
    const user = ok(await authd(['--json', 'users', 'create', '--tenant', tenantId, '--email', 'm@example.com', '--first-name', 'M', '--last-name', 'F']))
    expect(ok(await authd(['--json', 'users', 'mfa-reset', user.userId]))).toEqual({ userId: user.userId, removed: false })
    expect((await authd(['users', 'mfa-reset', user.userId])).stdout).toBe(`user ${user.userId} had no second factor\n`)
    const unknown = await authd(['users', 'mfa-reset', 'nobody'])
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({ code: 1, stderr: 'authd: User not found: nobody\n' })
  })

  it('users show | update | delete, with a clear line for nothing to change and for a deleted user', async () => {
    const tenantId = await setUpTenant()
    const user = ok(await authd(['--json', 'users', 'create', '--tenant', tenantId, '--email', 'a@example.com', '--first-name', 'A', '--last-name', 'B']))
    const updated = ok(await authd(['--json', 'users', 'update', user.userId, '--first-name', 'Zed', '--type', 'admin']))
    expect(updated).toMatchObject({ userId: user.userId, firstName: 'Zed', lastName: 'B', type: 'admin' })
    expect(ok(await authd(['--json', 'users', 'show', user.userId]))).toEqual({ ...updated, identities: [] })
    failsWith(await authd(['users', 'update', user.userId, '--type', 'root']), 'type must be one of admin, user, tenant')
    expect(ok(await authd(['--json', 'users', 'delete', user.userId]))).toEqual({ userId: user.userId })
    failsWith(await authd(['users', 'show', user.userId]), `User not found: ${user.userId}`)
    expect(ok(await authd(['--json', 'users', 'list', '--tenant', tenantId]))).toEqual({ items: [], nextCursor: null })
  })

  it('keys rotate | list and sessions revoke', async () => {
    const tenantId = await setUpTenant()
    const first = ok(await authd(['--json', 'keys', 'rotate']))
    const second = ok(await authd(['--json', 'keys', 'rotate']))
    // One key of each algorithm; the ES256 key (access tokens') at the top, as before the RSA key.
    expect(second).toEqual({ kid: second.keys[0].kid, alg: 'ES256', createdAt: expect.any(String), keys: [expect.objectContaining({ alg: 'ES256' }), expect.objectContaining({ alg: 'RS256' })] })
    const keys = ok(await authd(['--json', 'keys', 'list']))
    expect(keys.map((k: any) => [k.kid, k.alg, k.active, k.published]).sort()).toEqual([
      [first.keys[0].kid, 'ES256', false, true],
      [first.keys[1].kid, 'RS256', false, true],
      [second.keys[0].kid, 'ES256', true, true],
      [second.keys[1].kid, 'RS256', true, true],
    ].sort())
    expect((await authd(['keys', 'rotate'])).stdout).toMatch(/^new signing key \S+ \(ES256\) is now active\nnew signing key \S+ \(RS256\) is now active\n$/)
    // Revoking the RSA key replaces it with an RSA key.
    const rsaKid = ok(await authd(['--json', 'keys', 'list'])).findLast((k: any) => k.alg === 'RS256' && k.active).kid
    const revoked = ok(await authd(['--json', 'keys', 'revoke', '--', rsaKid]))
    expect(revoked).toEqual({ kid: rsaKid, alg: 'RS256', replacementKid: expect.any(String), sessionsRevoked: 0 })
    expect(ok(await authd(['--json', 'keys', 'list'])).filter((k: any) => k.active).map((k: any) => k.alg).sort()).toEqual(['ES256', 'RS256'])
    const user = ok(await authd(['--json', 'users', 'create', '--tenant', tenantId, '--email', 'a@example.com', '--first-name', 'A', '--last-name', 'B']))
    expect(ok(await authd(['--json', 'sessions', 'revoke', '--user', user.userId]))).toEqual({ userId: user.userId, revoked: 0 })
    // (nine CLI processes: over 5 s on PostgreSQL; it timed out so before this branch too)
  }, 15_000)

  it('audit lists security events, filtered by type (or family), tenant and time, without secrets', async () => {
    const tenantId = await setUpTenant()
    const key = ok(await authd(['--json', 'api-keys', 'create', '--tenant', tenantId]))
    const events = ok(await authd(['--json', 'audit', '--since', '1h']))
    expect(events.map((e: any) => e.type)).toEqual(['api_key.created', 'tenant.created'])
    expect(events[0]).toEqual({ at: expect.any(String), type: 'api_key.created', tenantId, userId: null, ip: null, userAgent: 'authd-cli', apiKeyId: null, actorUserId: null, detail: { keyId: key.keyId, prefix: key.key.slice(0, 12), scope: 'client' } })
    expect(JSON.stringify(events)).not.toContain(key.key)
    expect(ok(await authd(['--json', 'audit', '--type', 'tenant.*', '--tenant', tenantId])).map((e: any) => e.type)).toEqual(['tenant.created'])
    expect(ok(await authd(['--json', 'audit', '--since', '2999-01-01']))).toEqual([])
    // (a bad option value is a usage error: exit 2)
    const since = await authd(['audit', '--since', 'yesterday'])
    expect({ code: since.code, stderr: since.stderr }).toEqual({ code: 2, stderr: 'authd: --since must be a duration such as 24h or a date such as 2026-11-01 (got "yesterday")\n' })
  })

  it('--env-file reads AUTHD_* settings (as systemd would), and the real environment wins', async () => {
    const tenantId = await setUpTenant()
    const envFile = `${dir}/authd.env`
    await Bun.write(envFile, '# authd settings\n\nAUTHD_PASSWORD_MIN_LENGTH="40"\n')
    const create = (email: string) => ['--env-file', envFile, 'users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'A', '--last-name', 'B', '--password-stdin']
    failsWith(await authd(create('a@example.com'), { stdin: PASSWORD }), 'Password must be at least 40 characters long')
    ok(await authd(create('b@example.com'), { stdin: PASSWORD, env: { AUTHD_PASSWORD_MIN_LENGTH: '15' } }))
    await Bun.write(envFile, 'AUTHD_PORT=3000\nnot a setting\n')
    expect(await authd(['--env-file', envFile, 'tenants', 'list'])).toMatchObject({ code: 2, stderr: `authd: ${envFile}:2: expected KEY=VALUE\n` })
    expect(await authd(['--env-file', `${dir}/missing.env`, 'tenants', 'list'])).toMatchObject({ code: 2, stderr: `authd: --env-file: no such file ${dir}/missing.env\n` })
  })

  describe('one clear line on stderr and exit 1 on error', () => {
    it.each([
      [['tenants', 'disable', 'no-such-tenant'], 'Tenant not found: no-such-tenant'],
      [['api-keys', 'create', '--tenant', 'nope'], 'Tenant not found: nope'],
      [['api-keys', 'revoke', 'nope'], 'API key not found: nope'],
      [['users', 'disable', 'nope'], 'User not found: nope'],
      [['sessions', 'revoke', '--user', 'nope'], 'User not found: nope'],
      [['users', 'create', '--tenant', 'nope', '--email', 'a@example.com', '--first-name', 'A', '--last-name', 'B'], 'Tenant not found: nope'],
    ])('%p', async (args, line) => failsWith(await authd(args), line))

    // docs/cli.md: exit 2 for a usage error, as commander's own (an unknown option) are.
    it.each([
      [['tenants', 'create'], 'missing required option --name'],
      [['users', 'create', '--email', 'a@example.com', '--first-name', 'A', '--last-name', 'B'], 'missing required option --tenant'],
      [['tenants', 'update', 'nope'], 'nothing to change: give --audience, --signup, --passkey-rp-id, --passkey-origins, --return-to-origin, --forward-auth-domain, --slug, --display-name, --accent-color, --logo-url, --logo or --console'],
      [['users', 'update', 'nope'], 'nothing to change: give --email, --first-name, --last-name, --type or --email-verified'],
      [['users', 'set-password', 'nope'], 'missing --password-stdin (the password is read from standard input)'],
    ])('a usage error exits 2: %p', async (args, line) => {
      const r = await authd(args)
      expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 2, stderr: `authd: ${line}\n`, stdout: '' })
    })

    it('for a bad user: invalid e-mail, unknown type, duplicate, weak or empty password', async () => {
      const tenantId = await setUpTenant()
      const create = ['users', 'create', '--tenant', tenantId, '--first-name', 'Ada', '--last-name', 'Lovelace']
      failsWith(await authd([...create, '--email', 'nope']), 'email must be a valid e-mail address')
      failsWith(await authd([...create, '--email', 'a@example.com', '--type', 'root']), 'type must be one of admin, user, tenant')
      failsWith(await authd([...create, '--email', 'a@example.com', '--password-stdin'], { stdin: 'short\n' }), 'Password must be at least 15 characters long')
      failsWith(await authd([...create, '--email', 'a@example.com', '--password-stdin'], { stdin: '' }), '--password-stdin: standard input was empty')
      ok(await authd([...create, '--email', 'a@example.com']))
      failsWith(await authd([...create, '--email', 'A@example.com']), 'A user with e-mail a@example.com already exists in this tenant')
    })

    it('for bad configuration: one line and exit code 2', async () => {
      const failsWith = (r: CliResult, line: string) => expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 2, stderr: `authd: ${line}\n`, stdout: '' })
      failsWith(
        await authd(['tenants', 'list'], { env: { AUTHD_DATABASE_URL: 'postgres://db/authd?sslmode=sometimes' } }),
        'AUTHD_DATABASE_URL must be a URL such as postgres://user:password@host:5432/authd?sslmode=require',
      )
      failsWith(await authd(['tenants', 'list'], { env: { AUTHD_ACCESS_TOKEN_TTL: 'soon' } }), 'AUTHD_ACCESS_TOKEN_TTL must be a duration such as 900, 15m, 72h or 30d (got "soon")')
    })

    // docs/cli.md: one line `authd: …`, then the --help that says how, and exit 2, for what the
    // command line parser finds too (commander's own were three lines starting `error:`).
    it.each([
      ['an unknown option', ['users', 'create', '--bogus'], "unknown option '--bogus'", 'users create'],
      ['a misspelt option', ['users', 'create', '--tenat', 'x'], "unknown option '--tenat' (did you mean --tenant?)", 'users create'],
      ['an option without its value', ['users', 'create', '--tenant'], "option '--tenant <tenantId>' argument missing", 'users create'],
      ['a missing argument', ['users', 'invite'], "missing required argument 'userId'", 'users invite'],
      ['an argument too many', ['users', 'invite', 'a', 'b'], "too many arguments for 'invite'. Expected 1 argument but got 2.", 'users invite'],
      ['an unknown command', ['frobnicate'], "unknown command 'frobnicate'", ''],
      ['an unknown command near a known one', ['userz'], "unknown command 'userz' (did you mean users?)", ''],
      ['an unknown subcommand', ['users', 'frobnicate'], "unknown command 'frobnicate'", 'users'],
      ['a command group without its command', ['users', 'passkeys'], 'missing command: give one of list, delete', 'users passkeys'],
      ['a letter for a number', ['users', 'list', '--tenant', 'x', '--limit', 'abc'], '--limit must be an integer from 1 to 100 (got "abc")', 'users list'],
      ['zero for a number from 1', ['users', 'list', '--tenant', 'x', '--limit', '0'], '--limit must be an integer from 1 to 100 (got "0")', 'users list'],
      ['a number over the maximum', ['users', 'list', '--tenant', 'x', '--limit', '101'], '--limit must be an integer from 1 to 100 (got "101")', 'users list'],
      ['an exponent', ['audit', '--limit', '1e3'], '--limit must be an integer from 1 to 1000 (got "1e3")', 'audit'],
      ['zero deliveries', ['webhooks', 'deliveries', 'x', '--limit', '0'], '--limit must be an integer from 1 to 1000 (got "0")', 'webhooks deliveries'],
      ['a port in words', ['serve', '--port', 'eighty'], '--port must be an integer from 0 to 65535 (got "eighty")', 'serve'],
      ['a port too high', ['serve', '--port', '65536'], '--port must be an integer from 0 to 65535 (got "65536")', 'serve'],
    ])('a usage error of the command line, %s: one authd: line, its --help, exit 2', async (_, args, line, command) => {
      for (const json of [[], ['--json']]) {
        const r = await authd([...json, ...args])
        expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 2, stderr: `authd: ${line}\nrun ${['authd', command].join(' ').trim()} --help for usage\n`, stdout: '' })
      }
    })
  })
})
