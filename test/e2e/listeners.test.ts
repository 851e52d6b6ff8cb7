// dist/authd when a socket cannot be opened as configured: a port someone else holds, a TLS
// key that is not the certificate's. The process must end with one line naming the setting
// and exit 2, never keep serving without the listener; doctor must see the bad pair too.
import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { BINARY, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'

const dir = useBinaryAndTempDir()

/** `authd serve` to its end: it must exit by itself (a test that hangs here has failed). */
async function serveUntilExit(env: Record<string, string>, args: string[] = []) {
  const proc = Bun.spawn([BINARY, '--data-dir', dir(), 'serve', ...args], {
    env: { PATH: process.env.PATH ?? '', AUTHD_ARGON2_MEMORY_KIB: '64', AUTHD_ARGON2_TIME_COST: '1', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

function selfSigned(name: string) {
  const [cert, key] = [join(dir(), `${name}-cert.pem`), join(dir(), `${name}-key.pem`)]
  const openssl = Bun.spawnSync(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', key, '-out', cert], { stderr: 'pipe' })
  if (openssl.exitCode !== 0) throw new Error(`openssl: ${openssl.stderr}`)
  return { cert, key }
}

describe('dist/authd serve when a listener cannot start', () => {
  it('ends with one line naming AUTHD_METRICS_ADDR, and exit 2, when the metrics port is taken', async () => {
    const taken = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('someone else') })
    try {
      const r = await serveUntilExit({ AUTHD_METRICS_ADDR: `127.0.0.1:${taken.port}` }, ['--port', '0'])
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: `authd: cannot listen on 127.0.0.1:${taken.port} (AUTHD_METRICS_ADDR): the address is in use\n` })
      expect(r.stdout).not.toContain('"msg":"listening"')
    } finally {
      taken.stop(true)
    }
  }, 30_000)

  it('names AUTHD_HOST and AUTHD_PORT when the public port is taken', async () => {
    const taken = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('someone else') })
    try {
      const r = await serveUntilExit({}, ['--port', String(taken.port)])
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: `authd: cannot listen on 127.0.0.1:${taken.port} (AUTHD_HOST, AUTHD_PORT): the address is in use\n` })
    } finally {
      taken.stop(true)
    }
  }, 30_000)

  it('refuses a TLS key that is not the certificate\'s, naming AUTHD_TLS_KEY, in serve and in doctor', async () => {
    const first = selfSigned('first')
    const second = selfSigned('second')
    const env = { AUTHD_TLS_CERT: first.cert, AUTHD_TLS_KEY: second.key }
    const line = `AUTHD_TLS_KEY: ${second.key} is not the private key of the certificate in AUTHD_TLS_CERT (${first.cert})`

    const r = await serveUntilExit(env, ['--port', '0'])
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: `authd: ${line}\n` })

    const doctor = await cliRunner([BINARY], dir(), env)(['--json', 'doctor'])
    expect(doctor.code).toBe(1)
    expect(doctor.json.find((f: { check: string }) => f.check === 'transport')).toMatchObject({ status: 'fail', detail: line })

    const matching = await cliRunner([BINARY], dir(), { AUTHD_TLS_CERT: first.cert, AUTHD_TLS_KEY: first.key })(['--json', 'doctor'])
    expect(matching.json.find((f: { check: string }) => f.check === 'transport')).toMatchObject({ status: 'ok', detail: expect.stringContaining(`HTTPS with ${first.cert}`) })
  }, 30_000)
})
