// Nothing derived from a password without a slow hash is stored anywhere (product spec §18):
// the admin API's Idempotency-Key fingerprint leaves the password out, so neither the raw
// database files nor a backup hold a SHA-256 of the password or of a body that carries it.
// SQLite's own files are searched (PostgreSQL's live on its server).
import { afterEach, describe, expect, it } from 'bun:test'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { backupDatabase } from '../../src/db/sqlite/backup'
import { createTestContext, queryDatabase, type TestContext } from '../helpers'

let ctx: TestContext
afterEach(() => ctx?.close())

const PASSWORD = 'canary passphrase for the fingerprint'
/** The ways a SHA-256 of `text` could be written down. */
const digests = (text: string) => {
  const digest = createHash('sha256').update(text).digest()
  return [digest.toString('hex'), digest.toString('base64'), digest.toString('base64url'), digest.toString('latin1')]
}

describe('the Idempotency-Key fingerprint', () => {
  it('holds no fast hash of the password or of the body that carried it, in the raw database files or a backup', async () => {
    ctx = await createTestContext()
    const adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })).key
    const body = { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', password: PASSWORD }
    const create = () => ctx.call('POST', '/api/v1/admin/users', { body, apiKey: adminKey, headers: { 'idempotency-key': 'create-grace' } })
    expect((await create()).status).toBe(201)
    // The key works as before: the retry is the first answer.
    const retried = await create()
    expect(retried.status).toBe(201)
    expect(retried.headers.get('idempotent-replayed')).toBe('true')
    expect(await queryDatabase(ctx, 'SELECT count(*) AS n FROM idempotency_keys')).toEqual([{ n: 1 }])

    const backup = join(ctx.dir, 'backup.db')
    backupDatabase(ctx.runtime.config.databasePath, backup)
    const files = ['authd.db', 'authd.db-wal', 'backup.db'].map((f) => {
      try {
        return readFileSync(join(ctx.dir, f)).toString('latin1')
      } catch {
        return ''
      }
    })
    expect(files[2]!.length).toBeGreaterThan(0)
    const json = JSON.stringify(body)
    for (const text of [PASSWORD, json, JSON.stringify(['POST /users', body])]) {
      for (const digest of digests(text)) for (const file of files) expect(file.includes(digest)).toBe(false)
    }
  })

  it('tells another request under the same key apart, but not one that differs only in its password', async () => {
    ctx = await createTestContext()
    const adminKey = (await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })).key
    const create = (fields: Record<string, unknown>) =>
      ctx.call('POST', '/api/v1/admin/users', { body: { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', ...fields }, apiKey: adminKey, headers: { 'idempotency-key': 'k' } })
    expect((await create({ password: PASSWORD })).status).toBe(201)
    expect((await create({ password: 'another passphrase entirely' })).headers.get('idempotent-replayed')).toBe('true')
    expect((await create({ password: PASSWORD, lastName: 'Murray' })).status).toBe(409)
    expect((await create({})).status).toBe(409)
  })
})
