// SIGTERM during a slow request: the request completes, new connections are refused, and
// the process exits 0.
import { describe, expect, it } from 'bun:test'
import { BINARY, readRest, serveBinary, setUpAccount, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD, toResult } from '../helpers'

const testDir = useBinaryAndTempDir()

describe('graceful shutdown', () => {
  it('finishes the in-flight login after SIGTERM, then exits 0', async () => {
    const dir = testDir()
    // Expensive hashing makes a login slow enough to be in flight when the signal lands.
    const slow = { AUTHD_ARGON2_MEMORY_KIB: '131072', AUTHD_ARGON2_TIME_COST: '8' }
    const authd = cliRunner([BINARY], dir, slow)
    const { key } = await setUpAccount(authd, 'ada@example.com', PASSWORD)
    const { proc, url } = await serveBinary(dir, slow)
    const inFlight = fetch(`${url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD }),
    }).then(toResult)
    await Bun.sleep(50)
    proc.kill('SIGTERM')
    const response = await inFlight
    expect(response.status).toBe(201)
    expect(await proc.exited).toBe(0)
    // The server's own log shows the login finished after the signal: it was in flight.
    const log = (await readRest(proc.stdout)).split('\n').filter(Boolean).map((line) => JSON.parse(line))
    const order = log.map((entry) => (entry.msg === 'request' ? `${entry.method} ${entry.path} ${entry.status}` : entry.msg))
    expect(order.indexOf('stopping')).toBeLessThan(order.indexOf('POST /api/v1/auth/login 201'))
    expect(order).toContain('stopped')
    await expect(fetch(`${url}/healthz`)).rejects.toThrow()
  }, 60_000)
})
