// `authd providers …` and the identities in `authd users show | unlink-identity` (product spec
// §25): the client secret read from standard input and never printed, the redirect URI to
// register upstream (said to assume an address where AUTHD_PUBLIC_URL is unset, §28), updates
// that replace or clear, a delete that names the identities it takes and asks first.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { auditEvent, CLI_ACTOR } from '../src/core/audit/audit'
import { createUser } from '../src/core/accounts/users'
import { providerSecretOf } from '../src/core/federation/providers'
import type { Identity } from '../src/core/federation/types'
import { createGroup } from '../src/core/groups/groups'
import { cliRunner, SOURCE_CLI, type CliResult } from './cli-runner'
import { createTestContext, databaseEnv, type TestContext } from './helpers'

const AUTHD = 'https://auth.example.com'
const SECRET = 'upstream-client-secret-7c2d41'
let ctx: TestContext
let authd: ReturnType<typeof cliRunner>
beforeEach(async () => {
  ctx = await createTestContext()
  authd = cliRunner(SOURCE_CLI, ctx.dir, { ...databaseEnv(ctx), AUTHD_PUBLIC_URL: AUTHD })
})
afterEach(() => ctx.close())

const ok = (r: CliResult) => {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
  return r.json
}
const fails = (r: CliResult) => ({ code: r.code, stderr: r.stderr.split('\n')[0], stdout: r.stdout })
const createGoogle = () => authd(['--json', 'providers', 'create', '--tenant', ctx.tenantId, '--type', 'google', '--client-id', 'web.apps.googleusercontent.com', '--client-secret-stdin'], { stdin: `${SECRET}\n` })

async function link(providerId: string, userId: string, fields: Partial<Identity> = {}): Promise<Identity> {
  const identity: Identity = { id: Bun.randomUUIDv7(), tenantId: ctx.tenantId, providerId, subject: Bun.randomUUIDv7(), userId, email: null, emailVerified: false, createdAt: ctx.clock.now(), lastUsedAt: null, ...fields }
  expect(await ctx.runtime.store.identities.insert(identity, auditEvent(ctx.runtime, 'identity.linked', CLI_ACTOR, { tenantId: ctx.tenantId, userId }))).toBe(true)
  ctx.clock.advance(1)
  return identity
}

describe('authd providers create', () => {
  it('reads the secret from standard input, never prints it, and says the redirect URI to register upstream', async () => {
    const text = await authd(['providers', 'create', '--tenant', ctx.tenantId, '--type', 'gitlab', '--issuer', 'https://gitlab.example.com/', '--client-id', 'gitlab-app', '--client-secret-stdin'], { stdin: `${SECRET}\n` })
    expect({ code: text.code, stderr: text.stderr }).toEqual({ code: 0, stderr: '' })
    const [provider] = await ctx.runtime.store.providers.list(ctx.tenantId)
    expect(text.stdout).toStartWith(`created gitlab provider GitLab (${provider!.id}) in tenant ${ctx.tenantId}\nissuer: https://gitlab.example.com\n`)
    expect(text.stdout).toEndWith(`Register this redirect URI upstream: ${AUTHD}/t/${ctx.tenantId}/login/${provider!.id}/callback\n`)
    expect(text.stdout).not.toContain(SECRET)
    // (one trailing newline is the terminal's, not the secret's)
    expect(providerSecretOf(ctx.runtime, provider!)).toBe(SECRET)

    const json = ok(await createGoogle())
    expect(json).toEqual({
      providerId: expect.any(String),
      tenantId: ctx.tenantId,
      type: 'google',
      name: 'Google',
      issuer: 'https://accounts.google.com',
      clientId: 'web.apps.googleusercontent.com',
      scopes: 'openid email profile',
      linkByEmail: 'verified',
      createUsers: null,
      trustUpstreamMfa: false,
      groupsClaim: null,
      groupMap: {},
      redirectUri: `${AUTHD}/t/${ctx.tenantId}/login/${json.providerId}/callback`,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
  })

  it('takes every setting as a flag', async () => {
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'staff' })
    const created = ok(
      await authd(
        ['--json', 'providers', 'create', '--tenant', ctx.tenantId, '--type', 'oidc', '--name', 'Keycloak', '--issuer', 'https://sso.example.com/realms/staff', '--client-id', 'authd', '--client-secret-stdin',
          '--scopes', 'openid email profile groups', '--link-by-email', 'verified', '--create-users', 'domains:example.com', '--trust-upstream-mfa', '--groups-claim', 'groups',
          '--map-group', '/Admins=admins', '--map-group', 'team=a=staff'],
        { stdin: SECRET },
      ),
    )
    expect(created).toMatchObject({ type: 'oidc', name: 'Keycloak', scopes: 'openid email profile groups', linkByEmail: 'verified', createUsers: 'domains:example.com', trustUpstreamMfa: true, groupsClaim: 'groups', groupMap: { '/Admins': 'admins', 'team=a': 'staff' } })
    const microsoft = ok(await authd(['--json', 'providers', 'create', '--tenant', ctx.tenantId, '--type', 'microsoft', '--entra-tenant', 'common', '--client-id', 'app', '--client-secret-stdin'], { stdin: SECRET }))
    expect(microsoft.issuer).toBe('https://login.microsoftonline.com/common/v2.0')
  })

  it('refuses, in one line, what is missing or wrong', async () => {
    const base = ['providers', 'create', '--tenant', ctx.tenantId, '--type', 'google', '--client-id', 'x']
    for (const [args, stdin, code, line] of [
      [base, undefined, 2, 'authd: missing --client-secret-stdin (the client secret is read from standard input)'],
      [[...base, '--client-secret-stdin'], '', 1, 'authd: --client-secret-stdin: standard input was empty'],
      [['providers', 'create', '--tenant', ctx.tenantId, '--client-id', 'x', '--client-secret-stdin'], SECRET, 2, 'authd: missing required option --type'],
      [[...base, '--client-secret-stdin', '--map-group', 'admins'], SECRET, 2, 'authd: --map-group must be upstream-group=local-group, not "admins"'],
      [[...base, '--client-secret-stdin', '--groups-claim', 'groups', '--map-group', 'x=ghosts'], SECRET, 1, 'authd: No group named ghosts in the tenant'],
      [[...base, '--client-secret-stdin', '--issuer', 'https://evil.example.com'], SECRET, 1, 'authd: issuer is not taken for google: its issuer is https://accounts.google.com'],
      [['providers', 'create', '--tenant', ctx.tenantId, '--type', 'oidc', '--issuer', 'https://sso.example.com', '--client-id', 'x', '--client-secret-stdin'], SECRET, 1, 'authd: name is required for oidc: the login page shows "Continue with {name}"'],
      [['providers', 'create', '--tenant', 'no-such-tenant', '--type', 'google', '--client-id', 'x', '--client-secret-stdin'], SECRET, 1, 'authd: Tenant not found: no-such-tenant'],
    ] as Array<[string[], string | undefined, number, string]>) {
      const run = await authd(args, { stdin })
      expect({ args, ...fails(run) }).toEqual({ args, code, stderr: line, stdout: '' })
      expect(run.stderr).not.toContain(SECRET)
    }
    expect(await ctx.runtime.store.providers.list(ctx.tenantId)).toEqual([])
  })

  it('says which address the redirect URI assumes where AUTHD_PUBLIC_URL is unset', async () => {
    const unset = cliRunner(SOURCE_CLI, ctx.dir, databaseEnv(ctx))
    const run = await unset(['--json', 'providers', 'create', '--tenant', ctx.tenantId, '--type', 'github', '--client-id', 'Iv1.abc', '--client-secret-stdin'], { stdin: SECRET })
    expect(run.code).toBe(0)
    expect(run.json.redirectUri).toStartWith('http://127.0.0.1:3000/t/')
    expect(run.stderr).toBe('authd: AUTHD_PUBLIC_URL is not set: links assume http://127.0.0.1:3000, the default address (no server has recorded one yet); set AUTHD_PUBLIC_URL to the address people reach authd at\n')
  })
})

describe('authd providers list | show | update | delete', () => {
  it('lists and shows (never a secret), updates what is given, and replaces the secret from standard input', async () => {
    await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
    const created = ok(await createGoogle())
    const id = created.providerId
    expect(ok(await authd(['--json', 'providers', 'list', '--tenant', ctx.tenantId]))).toEqual([created])
    const shown = await authd(['providers', 'show', id])
    expect(shown.stdout).toContain(`redirect URI: ${AUTHD}/t/${ctx.tenantId}/login/${id}/callback`)
    expect(shown.stdout).toContain('scopes: openid email profile')

    const changed = ok(await authd(['--json', 'providers', 'update', id, '--name', 'Google Workspace', '--create-users', 'closed', '--trust-upstream-mfa', '--groups-claim', 'groups', '--map-group', 'admins@example.com=admins']))
    expect(changed).toMatchObject({ providerId: id, name: 'Google Workspace', createUsers: 'closed', trustUpstreamMfa: true, groupsClaim: 'groups', groupMap: { 'admins@example.com': 'admins' } })
    // '' clears; --no-trust-upstream-mfa turns it off; the rest stays
    const cleared = ok(await authd(['--json', 'providers', 'update', id, '--create-users', '', '--map-group', '', '--groups-claim', '', '--no-trust-upstream-mfa']))
    expect(cleared).toEqual({ ...changed, createUsers: null, trustUpstreamMfa: false, groupsClaim: null, groupMap: {}, updatedAt: expect.any(String) })

    const rotated = await authd(['providers', 'update', id, '--client-secret-stdin'], { stdin: 'the-new-secret\n' })
    expect({ code: rotated.code, stdout: rotated.stdout }).toEqual({ code: 0, stdout: `updated google provider Google Workspace (${id}) (client secret replaced)\n` })
    expect(providerSecretOf(ctx.runtime, (await ctx.runtime.store.providers.get(id))!)).toBe('the-new-secret')

    for (const [args, code, line] of [
      [['providers', 'update', id], 2, 'authd: nothing to change: give --name, --issuer, --entra-tenant, --client-id, --client-secret-stdin, --scopes, --link-by-email, --create-users, --[no-]trust-upstream-mfa, --groups-claim or --map-group'],
      [['providers', 'update', id, '--type', 'github'], 2, "authd: unknown option '--type'"],
      [['providers', 'update', id, '--entra-tenant', 'common'], 1, 'authd: entraTenant applies to microsoft only'],
      [['providers', 'show', 'nothing'], 1, 'authd: Identity provider not found: nothing'],
    ] as Array<[string[], number, string]>) {
      expect({ args, ...fails(await authd(args)) }).toEqual({ args, code, stderr: line, stdout: '' })
    }
  })

  it('deletes only when told to (--yes off a terminal), naming the identities that go with it', async () => {
    const { providerId } = ok(await createGoogle())
    const { userId } = await ctx.addUser()
    await link(providerId, userId)
    const refused = await authd(['providers', 'delete', providerId])
    expect(fails(refused)).toEqual({ code: 2, stderr: 'authd: deleting provider Google deletes the 1 identity linked through it (their users stay) too: give --yes to confirm', stdout: '' })
    expect(await ctx.runtime.store.providers.get(providerId)).not.toBeNull()

    expect(ok(await authd(['--json', 'providers', 'delete', providerId, '--yes']))).toEqual({ providerId, identitiesDeleted: 1 })
    expect(await ctx.runtime.store.identities.listByUser(userId)).toEqual([])
    expect(fails(await authd(['providers', 'delete', providerId, '--yes']))).toEqual({ code: 1, stderr: `authd: Identity provider not found: ${providerId}`, stdout: '' })
    const other = ok(await createGoogle())
    expect((await authd(['providers', 'delete', other.providerId, '-y'])).stdout).toBe(`deleted provider ${other.providerId} and the 0 identities linked through it\n`)
  })
})

describe('authd users show | unlink-identity', () => {
  it("lists a user's identities, unlinks one, and never the last way to sign in", async () => {
    const google = ok(await createGoogle())
    const github = ok(await authd(['--json', 'providers', 'create', '--tenant', ctx.tenantId, '--type', 'github', '--client-id', 'Iv1.abc', '--client-secret-stdin'], { stdin: SECRET }))
    // (a user an upstream sign-in created: no password, no passkey)
    const { user } = await createUser(ctx.runtime, { tenantId: ctx.tenantId, email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' })
    const first = await link(google.providerId, user.id, { email: 'grace@gmail.example', subject: '1077' })
    const second = await link(github.providerId, user.id, { subject: '583231' })

    const json = ok(await authd(['--json', 'users', 'show', user.id]))
    expect(json.userId).toBe(user.id)
    expect(json.identities).toEqual([
      { identityId: first.id, providerId: google.providerId, providerName: 'Google', providerType: 'google', subject: '1077', email: 'grace@gmail.example', linkedAt: new Date(first.createdAt).toISOString(), lastUsedAt: null },
      { identityId: second.id, providerId: github.providerId, providerName: 'GitHub', providerType: 'github', subject: '583231', email: null, linkedAt: new Date(second.createdAt).toISOString(), lastUsedAt: null },
    ])
    const text = await authd(['users', 'show', user.id])
    expect(text.stdout).toContain('identities (2):')
    expect(text.stdout).toMatch(new RegExp(`^${first.id}\\s+Google \\(google\\)\\s+grace@gmail\\.example\\s+${new Date(first.createdAt).toISOString()}\\s+-$`, 'm'))

    expect(ok(await authd(['--json', 'users', 'unlink-identity', user.id, first.id]))).toEqual({ userId: user.id, identityId: first.id })
    expect(fails(await authd(['users', 'unlink-identity', user.id, second.id]))).toEqual({
      code: 1,
      stderr: "authd: This identity is the user's last way to sign in (no password, no passkey, no other identity): it cannot be unlinked until they have another",
      stdout: '',
    })
    expect(fails(await authd(['users', 'unlink-identity', user.id, first.id]))).toEqual({ code: 1, stderr: `authd: Identity not found: ${first.id}`, stdout: '' })
    expect(ok(await authd(['--json', 'users', 'show', user.id])).identities.map((i: { identityId: string }) => i.identityId)).toEqual([second.id])
  })
})
