// Webhooks survive crashes (product spec §22): authd killed (-9) in the middle of a delivery
// loses no event, neither the one in flight nor those written while it was down; and two
// instances on one PostgreSQL database deliver each event once. Counted at a real receiver
// that verifies every delivery with the Standard Webhooks library.
import { afterAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { mkdirSync } from 'node:fs'
import { BINARY, serveBinary, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD } from '../helpers'
import { createTestDatabase, describePostgres } from '../pg'
import { startReceiver, until } from '../webhook-receiver'

const testDir = useBinaryAndTempDir()
const receivers: Array<ReturnType<typeof startReceiver>> = []
afterAll(() => receivers.forEach((r) => r.stop()))

const INSECURE = { AUTHD_WEBHOOKS_ALLOW_INSECURE: '1' }

/** A tenant with an endpoint subscribed to user.created at a new receiver. */
async function subscribed(authd: ReturnType<typeof cliRunner>) {
  const receiver = startReceiver()
  receivers.push(receiver)
  const { tenantId } = (await authd(['--json', 'tenants', 'create', '--name', 'Acme'])).json
  const created = await authd(['--json', 'webhooks', 'create', '--tenant', tenantId, '--url', receiver.url, '--events', 'user.created'])
  expect(created.code).toBe(0)
  receiver.state.secrets.push(created.json.secret)
  return { receiver, tenantId }
}

const createUsers = async (authd: ReturnType<typeof cliRunner>, tenantId: string, from: number, count: number) => {
  for (let i = from; i < from + count; i++) {
    const res = await authd(['users', 'create', '--tenant', tenantId, '--email', `person${i}@example.com`, '--first-name', 'P', '--last-name', 'Q', '--password-stdin'], { stdin: PASSWORD })
    expect(res.code).toBe(0)
  }
}

describe('a crash during a delivery (SQLite)', () => {
  it('loses no event: the one in flight and those written while authd was down all arrive after a restart', async () => {
    const dir = join(testDir(), 'sqlite')
    mkdirSync(dir)
    const authd = cliRunner([BINARY], dir, INSECURE)
    const { receiver, tenantId } = await subscribed(authd)
    receiver.state.mode = 'hang'
    await createUsers(authd, tenantId, 0, 3)
    let { proc } = await serveBinary(dir, INSECURE)
    // The receiver holds the first delivery: authd is killed while it waits for the answer.
    await until('a delivery in flight', () => receiver.state.requests >= 1)
    proc.kill('SIGKILL')
    await proc.exited
    await createUsers(authd, tenantId, 3, 3)

    receiver.state.mode = 'ok'
    ;({ proc } = await serveBinary(dir, INSECURE))
    try {
      // The delivery in flight comes back once its lease (15 s) has run out.
      await until('all six user.created events', () => receiver.ids().size === 6, 45_000)
      expect(receiver.state.refused).toBe(0)
      expect(receiver.received.map((r) => r.data.user.email).sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `person${i}@example.com`))
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
    }
  }, 90_000)
})

describePostgres('webhooks with two instances on one PostgreSQL database', () => {
  it('deliver each event once, and lose none when one instance is killed (-9) mid-delivery', async () => {
    const db = await createTestDatabase()
    const env = { ...INSECURE, AUTHD_DATABASE_URL: db.url }
    const authd = cliRunner([BINARY], join(testDir()), env)
    await authd(['migrate'])
    const instances = await Promise.all([serveBinary(testDir(), env), serveBinary(testDir(), env)])
    try {
      const { receiver, tenantId } = await subscribed(authd)
      await createUsers(authd, tenantId, 0, 12)
      await until('twelve events', () => receiver.ids().size === 12, 30_000)
      await Bun.sleep(1500) // a second copy would have arrived by now
      expect(receiver.received.length).toBe(12)

      // One instance dies while the receiver holds a delivery (whichever instance sent it): the
      // other delivers everything, taking over a delivery of the dead one when its lease runs out.
      receiver.state.mode = 'hang'
      const before = receiver.state.requests
      await createUsers(authd, tenantId, 12, 6)
      await until('a delivery in flight', () => receiver.state.requests > before)
      instances[0]!.proc.kill('SIGKILL')
      await instances[0]!.proc.exited
      receiver.state.mode = 'ok'
      await until('all eighteen events', () => receiver.ids().size === 18, 45_000)
      expect(receiver.state.refused).toBe(0)
    } finally {
      for (const { proc } of instances) proc.kill('SIGTERM')
      await Promise.all(instances.map(({ proc }) => proc.exited))
      await db.drop()
    }
  }, 120_000)
})
