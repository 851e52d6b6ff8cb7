// The refresh-token format across a rolling upgrade, on the compiled binary: sessions started
// with AUTHD_REFRESH_TOKEN_FORMAT=hash (the format older versions read) keep it after the
// setting is gone, while new sessions start in the ordered one.
import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { BINARY, serveBinary, setUpAccount, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD, toResult } from '../helpers'

const testDir = useBinaryAndTempDir()

describe('dist/authd and AUTHD_REFRESH_TOKEN_FORMAT', () => {
  it('starts sessions in the earlier format while it is set (with a warning), and they keep it once it is unset', async () => {
    const data = join(testDir(), 'data')
    const { key } = await setUpAccount(cliRunner([BINARY], data), 'ada@example.com', PASSWORD)
    const login = (base: string) =>
      fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD }) }).then(toResult)
    const refresh = (base: string, cookie: string) => fetch(`${base}/api/v1/auth/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } }).then(toResult)

    const during = await serveBinary(data, { AUTHD_REFRESH_TOKEN_FORMAT: 'hash' })
    let earlier: string
    try {
      expect(during.startupLog).toContain('"level":"warn","msg":"AUTHD_REFRESH_TOKEN_FORMAT=hash: new sessions get the earlier refresh-token format')
      earlier = (await login(during.url)).refreshCookie!
      expect(earlier).toMatch(/^[A-Za-z0-9_-]{43}$/)
    } finally {
      during.proc.kill()
      await during.proc.exited
    }

    const after = await serveBinary(data)
    try {
      expect(after.startupLog).not.toContain('AUTHD_REFRESH_TOKEN_FORMAT')
      const rotated = await refresh(after.url, earlier)
      expect(rotated.status).toBe(201)
      expect(rotated.refreshCookie).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect((await refresh(after.url, rotated.refreshCookie!)).status).toBe(201)
      expect((await login(after.url)).refreshCookie).toMatch(/^[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/)
    } finally {
      after.proc.kill()
      await after.proc.exited
    }
  })
})
