// What the compiled server exposes on its public port, tried as an attacker would over a raw
// socket: no /metrics there (it can tell registered addresses apart), and routing by the real
// path whatever the Host header says.
import { describe, expect, it } from 'bun:test'
import { connect } from 'node:net'
import { readRest, serveBinary, setUpAccount, BINARY, useBinaryAndTempDir } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD } from '../helpers'

const dir = useBinaryAndTempDir()

/** One HTTP/1.1 request written by hand, so the Host header is exactly what we say. */
function rawGet(url: string, path: string, host: string | null, headers: Record<string, string> = {}, version = '1.1'): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')
      socket.write(`GET ${path} HTTP/${version}\r\n${host === null ? '' : `Host: ${host}\r\n`}${extra}Connection: close\r\n\r\n`)
    })
    let raw = ''
    socket.on('data', (chunk) => (raw += chunk.toString()))
    socket.on('error', reject)
    socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1]), text: raw.slice(raw.indexOf('\r\n\r\n') + 4) }))
  })
}

describe('the public port of dist/authd', () => {
  it('serves no /metrics, routes by the real path whatever the Host, and masks addresses in any path', async () => {
    const authd = cliRunner([BINARY], dir())
    const { key } = await setUpAccount(authd, 'ada@example.com', PASSWORD)
    const { proc, url } = await serveBinary(dir(), { AUTHD_METRICS_ADDR: '127.0.0.1:0' })
    try {
      expect((await fetch(`${url}/metrics`)).status).toBe(404)
      for (const host of ['x', 'ab', 'localhost']) {
        expect((await rawGet(url, '/zz/metrics', host)).status).toBe(404)
        expect((await rawGet(url, '/zz/api/v1/auth/forgot-password/ada@example.com', host, { 'x-api-key': key })).status).toBe(404)
        expect((await rawGet(url, '/healthz', host)).status).toBe(200)
      }
      expect((await rawGet(url, '/api/v1/auth/forgot-password/ada@example.com', 'x', { 'x-api-key': key })).status).toBe(200)
    } finally {
      proc.kill('SIGTERM')
    }
    const log = await readRest(proc.stdout)
    expect(log).toContain('"path":"/zz/api/v1/auth/forgot-password/a***@example.com","status":404')
    expect(log).not.toContain('ada@example.com')
  })

  it('serves a request with no Host, or a Host that makes no URL, as one with a short Host: never a 500 or the runtime\'s error page', async () => {
    const authd = cliRunner([BINARY], dir())
    const { tenantId } = await setUpAccount(authd, 'ada@example.com', PASSWORD)
    const { proc, url } = await serveBinary(dir())
    try {
      const noHost = await rawGet(url, `/t/${tenantId}/login`, null, {}, '1.0')
      expect(noHost.status).toBe(200)
      expect(noHost.text).toContain('<form')
      for (const host of ['a b', '@evil', 'localhost:1#', 'localhost:1/../x']) {
        const answer = await rawGet(url, `/t/${tenantId}/login`, host)
        expect({ host, status: answer.status, form: answer.text.includes('<form') }).toEqual({ host, status: 200, form: true })
        expect(answer.text).not.toContain('__bunfallback')
        expect(answer.text).not.toContain(process.cwd())
      }
      expect((await rawGet(url, '/healthz', 'a b')).status).toBe(200)
    } finally {
      proc.kill('SIGTERM')
    }
  })

  it('serves /metrics on AUTHD_METRICS_ADDR only, and says where at start-up', async () => {
    const off = await serveBinary(dir())
    off.proc.kill('SIGTERM')
    expect(off.listening.metrics).toBe('off')
    const { proc, url, listening } = await serveBinary(dir(), { AUTHD_METRICS_ADDR: '127.0.0.1:0' })
    try {
      expect(listening.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
      expect(listening.metrics.startsWith(url)).toBe(false)
      const scraped = await fetch(listening.metrics)
      expect(scraped.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
      expect(await scraped.text()).toContain('# TYPE authd_http_requests_total counter')
      expect((await fetch(listening.metrics.replace('/metrics', '/api/v1/auth/login'))).status).toBe(404)
    } finally {
      proc.kill('SIGTERM')
    }
  })
})
