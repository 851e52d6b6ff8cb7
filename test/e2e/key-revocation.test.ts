// `authd keys revoke KID` against a running server: the leaked key leaves the JWKS at once,
// the sessions it signed for end, the others go on, and new tokens are signed by a new key.
import { describe, expect, it } from 'bun:test'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { BINARY, serveBinary, setUpAccount, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD, toResult } from '../helpers'

const dir = useBinaryAndTempDir()

describe('authd keys revoke', () => {
  it('removes the key from the JWKS at once and ends exactly the sessions it signed for', async () => {
    const authd = cliRunner([BINARY], dir())
    const { key, tenantId } = await setUpAccount(authd, 'ada@example.com', PASSWORD)
    const { proc, url } = await serveBinary(dir())
    const api = `${url}/api/v1/auth`
    const login = () =>
      fetch(`${api}/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD }) }).then(toResult)
    const refresh = (cookie: string) => fetch(`${api}/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } }).then(toResult)
    const jwks = async () => (await fetch(`${api}/.well-known/jwks.json`)).json() as Promise<{ keys: Array<{ kid: string }> }>
    try {
      const leakedSession = await login()
      const leakedKid = decodeProtectedHeader(leakedSession.json.data.response.accessToken).kid!
      const rotated = (await authd(['--json', 'keys', 'rotate'])).json.kid
      await Bun.sleep(5500) // the server's key ring picks up the rotation
      const otherSession = await login()
      expect(decodeProtectedHeader(otherSession.json.data.response.accessToken).kid).toBe(rotated)
      expect((await jwks()).keys.map((k) => k.kid)).toEqual([leakedKid, rotated])

      let finished = false
      const revoke = authd(['--json', 'keys', 'revoke', leakedKid]).finally(() => (finished = true))
      // Out of the JWKS at once: while the command still waits to sweep sessions a second time.
      let goneWhileRunning = false
      while (!finished && !goneWhileRunning) {
        goneWhileRunning = !(await jwks()).keys.some((k) => k.kid === leakedKid)
        await Bun.sleep(50)
      }
      // (when the command ended first, its output says why)
      expect({ goneWhileRunning, endedFirstWith: goneWhileRunning ? null : (await revoke).stderr }).toEqual({ goneWhileRunning: true, endedFirstWith: null })
      expect((await jwks()).keys.map((k) => k.kid)).toEqual([rotated])
      const result = await revoke
      expect(result.json).toEqual({ kid: leakedKid, alg: 'ES256', replacementKid: null, sessionsRevoked: 1 })

      expect((await refresh(leakedSession.refreshCookie!)).status).toBe(401)
      const still = await refresh(otherSession.refreshCookie!)
      expect(still.status).toBe(201)
      await jwtVerify(still.json.data.response.accessToken, createLocalJWKSet(await jwks()), { issuer: url, audience: `urn:authd:tenant:${tenantId}` })
      const listed = (await authd(['--json', 'keys', 'list'])).json
      expect(listed.find((k: any) => k.kid === leakedKid)).toMatchObject({ active: false, published: false, revokedAt: expect.any(String) })

      // Revoking the active key puts a new one in its place at once.
      const secondRun = await authd(['--json', 'keys', 'revoke', rotated])
      // (stderr beside the output: when the command fails, it says why)
      expect({ output: secondRun.json, stderr: secondRun.stderr }).toEqual({ output: { kid: rotated, alg: 'ES256', replacementKid: expect.any(String), sessionsRevoked: 1 }, stderr: '' })
      const second = secondRun.json
      expect((await jwks()).keys.map((k) => k.kid)).toEqual([second.replacementKid])
      const fresh = await login()
      expect(decodeProtectedHeader(fresh.json.data.response.accessToken).kid).toBe(second.replacementKid)
      expect((await authd(['keys', 'revoke', 'nope'])).stderr).toBe('authd: Signing key not found: nope\n')
    } finally {
      proc.kill('SIGTERM')
    }
  }, 60_000)
})
