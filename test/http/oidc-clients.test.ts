// OpenID Connect clients (product spec §21) through the admin API (/api/v1/admin/clients) and
// the CLI (`authd clients …`): secrets shown once and stored hashed, exact redirect URIs,
// confined to the key's tenant, and a deleted client's grants revoked.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { sha256 } from '../../src/core/secrets'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createTestContext, databaseEnv, queryDatabase, type TestContext } from '../helpers'

let ctx: TestContext
let adminKey: string
beforeEach(async () => {
  ctx = await createTestContext()
  adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, name: 'backend', scope: 'admin' })).key
})
afterEach(() => ctx.close())

const admin = (method: string, path: string, body?: unknown, key = adminKey) => ctx.call(method, `/api/v1/admin${path}`, { apiKey: key, body })

describe('/api/v1/admin/clients', () => {
  it('creates a confidential client whose secret is shown once and stored only hashed; lists, updates, rotates and deletes it', async () => {
    const created = await admin('POST', '/clients', { name: 'Wiki', redirectUris: ['https://wiki.example/oauth/callback'], postLogoutRedirectUris: ['https://wiki.example/'] })
    expect(created.status).toBe(201)
    const { client, clientSecret } = created.json.data
    expect(client).toMatchObject({ name: 'Wiki', type: 'confidential', firstParty: false, redirectUris: ['https://wiki.example/oauth/callback'] })
    expect(clientSecret).toStartWith('authd_cs_')
    expect(client.secretPrefix).toBe(clientSecret.slice(0, 13))
    const [row] = await queryDatabase<{ secret_hash: string }>(ctx, 'SELECT secret_hash FROM oidc_clients WHERE id = $1', [client.clientId])
    expect(row!.secret_hash).toBe(sha256(clientSecret))
    expect(JSON.stringify((await admin('GET', '/clients')).json)).not.toContain(clientSecret)
    expect((await admin('GET', `/clients/${client.clientId}`)).json.data.clientId).toBe(client.clientId)

    const updated = await admin('PATCH', `/clients/${client.clientId}`, { firstParty: true, redirectUris: ['https://wiki.example/cb'] })
    expect(updated.json.data).toMatchObject({ firstParty: true, redirectUris: ['https://wiki.example/cb'] })
    const rotated = await admin('POST', `/clients/${client.clientId}/rotate-secret`)
    expect(rotated.json.data.clientSecret).not.toBe(clientSecret)
    expect((await admin('DELETE', `/clients/${client.clientId}`)).json.data).toEqual({ clientId: client.clientId })
    expect((await admin('GET', `/clients/${client.clientId}`)).status).toBe(404)
  })

  it('a public client has no secret; bad redirect URIs are 400s naming the field; another tenant’s client is a 404', async () => {
    const pub = await admin('POST', '/clients', { name: 'SPA', redirectUris: ['http://localhost:5173/cb'], public: true })
    expect(pub.json.data).toMatchObject({ clientSecret: null, client: { type: 'public', secretPrefix: null } })
    expect((await admin('POST', `/clients/${pub.json.data.client.clientId}/rotate-secret`)).status).toBe(400)
    for (const redirectUris of [[], ['http://wiki.example/cb'], ['https://wiki.example/cb#x'], ['/relative'], ['javascript:alert(1)']]) {
      const refused = await admin('POST', '/clients', { name: 'Bad', redirectUris })
      expect({ status: refused.status, message: refused.json.message }).toMatchObject({ status: 400, message: expect.stringContaining('redirectUris') })
    }
    // Written as a URL parser reads them, or refused: stored verbatim they would be matched verbatim.
    for (const uri of ['http://localhost\\@evil.com/cb', 'http:\\\\localhost/cb', 'http://127.1/cb', 'HTTP://LOCALHOST/cb', 'https://wiki.example']) {
      const refused = await admin('POST', '/clients', { name: 'Odd', redirectUris: [uri] })
      expect({ status: refused.status, message: refused.json.message }).toEqual({ status: 400, message: expect.stringContaining('canonical form') })
    }
    const beta = await createTenant(ctx.runtime, { name: 'Beta' })
    const betaKey = (await createApiKey(ctx.runtime, { tenantId: beta.id, scope: 'admin' })).key
    expect((await admin('GET', `/clients/${pub.json.data.client.clientId}`, undefined, betaKey)).status).toBe(404)
    expect((await admin('DELETE', `/clients/${pub.json.data.client.clientId}`, undefined, betaKey)).status).toBe(404)
    expect((await admin('GET', '/clients', undefined, betaKey)).json.data).toEqual([])
    expect((await admin('GET', '/clients', undefined, ctx.apiKey)).status).toBe(403)
  })
})

describe('/api/v1/admin/clients: the ID-token algorithm', () => {
  it('is RS256 unless the client asks for ES256, changes with PATCH, and anything else is a 400 naming both', async () => {
    const plain = (await admin('POST', '/clients', { name: 'Wiki', redirectUris: ['https://wiki.example/cb'] })).json.data.client
    expect(plain.idTokenAlg).toBe('RS256')
    const es = (await admin('POST', '/clients', { name: 'Grafana', redirectUris: ['https://grafana.example/cb'], idTokenAlg: 'ES256' })).json.data.client
    expect(es.idTokenAlg).toBe('ES256')
    expect((await admin('GET', `/clients/${es.clientId}`)).json.data.idTokenAlg).toBe('ES256')
    expect((await admin('GET', '/clients')).json.data.map((c: any) => c.idTokenAlg)).toEqual(['RS256', 'ES256'])
    expect((await admin('PATCH', `/clients/${es.clientId}`, { idTokenAlg: 'RS256' })).json.data.idTokenAlg).toBe('RS256')
    // Any case, as the CLI's --id-token-alg takes it; stored upper case.
    expect((await admin('PATCH', `/clients/${es.clientId}`, { idTokenAlg: 'es256' })).json.data.idTokenAlg).toBe('ES256')
    const lower = (await admin('POST', '/clients', { name: 'Lower', redirectUris: ['https://lower.example/cb'], idTokenAlg: 'Rs256' })).json.data.client
    expect((await admin('GET', `/clients/${lower.clientId}`)).json.data.idTokenAlg).toBe('RS256')
    for (const idTokenAlg of ['HS256', 'none', 'es 256', '', 256, null]) {
      for (const [method, path] of [['POST', '/clients'], ['PATCH', `/clients/${plain.clientId}`]] as const) {
        const refused = await admin(method, path, { name: 'Bad', redirectUris: ['https://bad.example/cb'], idTokenAlg })
        expect({ status: refused.status, message: refused.json.message }).toEqual({ status: 400, message: typeof idTokenAlg === 'string' ? 'idTokenAlg must be RS256 or ES256' : expect.stringContaining('idTokenAlg') })
      }
    }
    expect((await admin('GET', '/clients')).json.data).toHaveLength(3)
    expect((await admin('GET', `/clients/${plain.clientId}`)).json.data).toMatchObject({ name: 'Wiki', idTokenAlg: 'RS256' })
  })
})

describe('authd clients', () => {
  it('create prints the secret once; list, update, rotate-secret and delete work by client id', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, { ...databaseEnv(ctx), AUTHD_PUBLIC_URL: ctx.runtime.config.publicUrl })
    const created = await authd(['--json', 'clients', 'create', '--tenant', ctx.tenantId, '--name', 'Grafana', '--redirect-uri', 'https://grafana.example/login/generic_oauth', '--redirect-uri', 'https://grafana.example/alt', '--first-party'])
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' })
    expect(created.json).toMatchObject({ client: { name: 'Grafana', firstParty: true, type: 'confidential', redirectUris: ['https://grafana.example/login/generic_oauth', 'https://grafana.example/alt'] }, issuer: `http://127.0.0.1:3000/t/${ctx.tenantId}` })
    const clientId = created.json.client.clientId
    expect(created.json.clientSecret).toStartWith('authd_cs_')

    const listed = await authd(['clients', 'list', '--tenant', ctx.tenantId])
    expect(listed.stdout).toContain(clientId)
    expect(listed.stdout).not.toContain(created.json.clientSecret)
    const updated = await authd(['--json', 'clients', 'update', clientId, '--third-party', '--name', 'Grafana Prod'])
    expect(updated.json).toMatchObject({ name: 'Grafana Prod', firstParty: false })
    const rotated = await authd(['--json', 'clients', 'rotate-secret', clientId])
    expect(rotated.json.clientSecret).toStartWith('authd_cs_')
    expect((await authd(['clients', 'delete', clientId])).code).toBe(0)
    const gone = await authd(['clients', 'delete', clientId])
    expect({ code: gone.code, stderr: gone.stderr.trim() }).toEqual({ code: 1, stderr: `authd: Client not found: ${clientId}` })
    const missing = await authd(['clients', 'create', '--tenant', ctx.tenantId, '--name', 'X'])
    expect(missing.code).toBe(2)
  })

  it('--id-token-alg: RS256 by default, ES256 when asked, shown by list; a wrong value is a usage error naming the flag', async () => {
    const authd = cliRunner(SOURCE_CLI, ctx.dir, databaseEnv(ctx))
    const create = (...extra: string[]) => authd(['--json', 'clients', 'create', '--tenant', ctx.tenantId, '--name', 'Wiki', '--redirect-uri', 'https://wiki.example/cb', ...extra])
    const plain = (await create()).json.client
    expect(plain.idTokenAlg).toBe('RS256')
    const es = await authd(['clients', 'create', '--tenant', ctx.tenantId, '--name', 'Grafana', '--redirect-uri', 'https://grafana.example/cb', '--id-token-alg', 'ES256'])
    expect(es.stdout).toContain('ID tokens ES256')
    const listed = await authd(['clients', 'list', '--tenant', ctx.tenantId])
    expect(listed.stdout).toMatch(/idTokenAlg/)
    expect(listed.stdout).toMatch(new RegExp(`${plain.clientId}.*RS256`))
    expect((await authd(['--json', 'clients', 'update', plain.clientId, '--id-token-alg', 'es256'])).json.idTokenAlg).toBe('ES256')
    for (const wrong of [['create', ...['--tenant', ctx.tenantId, '--name', 'X', '--redirect-uri', 'https://x.example/cb']], ['update', plain.clientId]]) {
      const refused = await authd(['clients', ...wrong, '--id-token-alg', 'HS256'])
      expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 2, stderr: 'authd: --id-token-alg must be RS256 or ES256, not "HS256"\n' })
    }
    expect((await authd(['--json', 'clients', 'list', '--tenant', ctx.tenantId])).json.map((c: any) => c.idTokenAlg)).toEqual(['ES256', 'ES256'])
  })
})
