// HTTPS served directly: a self-signed certificate made with openssl, trusted by the client.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { silentLogger } from '../../src/log'
import { startServer, type RunningServer } from '../../src/server/serve'
import { createTestContext, PASSWORD, tempDir, toResult, type TestContext } from '../helpers'

let ctx: TestContext
let server: RunningServer
let ca: string
beforeAll(async () => {
  const dir = tempDir()
  const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')]
  const openssl = Bun.spawnSync(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', cert], { stderr: 'pipe' })
  if (openssl.exitCode !== 0) throw new Error(`openssl: ${openssl.stderr}`)
  ca = readFileSync(cert, 'utf8')
  ctx = await createTestContext({ AUTHD_PORT: '0', AUTHD_TLS_CERT: cert, AUTHD_TLS_KEY: key })
  server = await startServer(ctx.runtime, silentLogger)
})
afterAll(async () => {
  await server.stop()
  ctx.close()
})

describe('HTTPS with AUTHD_TLS_CERT and AUTHD_TLS_KEY', () => {
  it('serves the API over TLS, with an https public URL and issuer', async () => {
    expect(server.url).toStartWith('https://127.0.0.1:')
    const { email } = await ctx.addUser()
    const res = await fetch(`${server.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ctx.apiKey },
      body: JSON.stringify({ email, password: PASSWORD }),
      tls: { ca },
    }).then(toResult)
    expect(res.status).toBe(201)
    expect(res.setCookie).toContain('Secure')
    const claims = JSON.parse(Buffer.from(res.json.data.response.accessToken.split('.')[1], 'base64url').toString())
    expect(claims.iss).toBe(server.url)
  })

  it('refuses plain HTTP on the TLS port', async () => {
    await expect(fetch(server.url.replace('https:', 'http:') + '/healthz')).rejects.toThrow()
  })

  it.each([
    [{ AUTHD_TLS_CERT: '/nonexistent/cert.pem', AUTHD_TLS_KEY: '/nonexistent/key.pem' }, 'AUTHD_TLS_CERT: no such file /nonexistent/cert.pem'],
    [{ AUTHD_TLS_CERT: '/etc/hostname' }, 'AUTHD_TLS_CERT and AUTHD_TLS_KEY must be set together'],
  ])('refuses a half or missing TLS configuration with one clear line', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message)
  })
})
