import { describe, expect, it } from 'bun:test'
import { loadConfig } from '../../src/config'
import { ipSubject } from '../../src/core/guards/limits'
import { jsonLogger } from '../../src/log'
import { createApp } from '../../src/server/app'
import { isUntrustedLocalProxy, peerAddresses, resolveClientIp } from '../../src/server/plugins/client-ip'
import { cliRunner, SOURCE_CLI } from '../cli-runner'
import { createTestContext, databaseEnv } from '../helpers'

const trusted = loadConfig({ AUTHD_TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.1, fd00::/8' }).trustedProxies

describe('the client IP', () => {
  it.each([
    ['the socket peer when nothing is forwarded', '203.0.113.5', null, '203.0.113.5'],
    ['the socket peer when the peer is not a trusted proxy', '203.0.113.5', '1.2.3.4', '203.0.113.5'],
    ['the forwarded client behind a trusted proxy', '10.0.0.2', '198.51.100.7', '198.51.100.7'],
    ['the first untrusted hop from the right through a chain of proxies', '10.0.0.2', '6.6.6.6, 198.51.100.7, 10.9.9.9', '198.51.100.7'],
    ['the peer when every hop is trusted', '10.0.0.2', '10.1.1.1', '10.0.0.2'],
    ['the peer when a hop is not an address', '10.0.0.2', 'garbage', '10.0.0.2'],
    ['IPv4 from an IPv4-mapped IPv6 peer', '::ffff:203.0.113.5', null, '203.0.113.5'],
    ['a trusted IPv6 proxy', 'fd00::1', '2001:db8::42', '2001:db8::42'],
    ['unknown when there is no socket (in-process)', undefined, '1.2.3.4', 'unknown'],
    ['an IPv4 hop written with a port', '10.0.0.2', '198.51.100.1:1111', '198.51.100.1'],
    ['an IPv6 hop written in brackets with a port', '10.0.0.2', '[2001:db8::1]:443', '2001:db8::1'],
    ['an IPv6 hop in brackets without a port', '10.0.0.2', '[2001:db8::2]', '2001:db8::2'],
    ['a trusted proxy hop with a port, skipped', '10.0.0.2', '198.51.100.3, 10.1.1.1:8080', '198.51.100.3'],
  ])('is %s', (_, peer, header, expected) => {
    expect(resolveClientIp(peer, header, trusted)).toBe(expected)
  })

  it.each([
    ['203.0.113.5', '203.0.113.5'],
    ['2001:db8:aa:bb:1:2:3:4', '2001:db8:aa:bb::/64'],
    ['2001:db8:aa:bb::ffff', '2001:db8:aa:bb::/64'],
  ])('counts %s for per-IP limits as %s', (ip, subject) => {
    expect(ipSubject(ip)).toBe(subject)
  })

  it('refuses a bad AUTHD_TRUSTED_PROXIES with one clear line', () => {
    expect(() => loadConfig({ AUTHD_TRUSTED_PROXIES: '10.0.0.0/99' })).toThrow('AUTHD_TRUSTED_PROXIES must list IP addresses or CIDRs such as 10.0.0.0/8 (got "10.0.0.0/99")')
  })
})

describe('X-Forwarded-For from 127.0.0.1 with no trusted proxy', () => {
  it('is reported once in the log and the audit log, and authd doctor fails with the fix', async () => {
    const ctx = await createTestContext()
    try {
      const lines: string[] = []
      const app = createApp(ctx.runtime, jsonLogger((line) => lines.push(line)))
      for (let i = 0; i < 3; i++) {
        const request = new Request('http://localhost/api/v1/auth/.well-known/jwks.json', { headers: { 'x-forwarded-for': '198.51.100.7' } })
        peerAddresses.set(request, '127.0.0.1')
        await app.handle(request)
      }
      const warnings = lines.filter((l) => l.includes('no proxy is trusted'))
      expect(warnings.length).toBe(1)
      expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 'warn' })
      await Bun.sleep(50)
      const doctor = await cliRunner(SOURCE_CLI, ctx.dir, databaseEnv(ctx))(['--json', 'doctor'])
      expect(doctor.code).toBe(1)
      expect(doctor.json.find((f: any) => f.check === 'client IPs')).toMatchObject({ status: 'fail', fix: expect.stringContaining('AUTHD_TRUSTED_PROXIES=127.0.0.1') })
      const trusted = await cliRunner(SOURCE_CLI, ctx.dir, databaseEnv(ctx))(['--json', 'doctor'], { env: { AUTHD_TRUSTED_PROXIES: '127.0.0.1' } })
      expect(trusted.json.find((f: any) => f.check === 'client IPs')).toBeUndefined()
    } finally {
      await ctx.close()
    }
  })

  it('is not reported from a non-loopback peer, nor when a proxy is trusted', async () => {
    expect(isUntrustedLocalProxy('203.0.113.5', '1.2.3.4', [])).toBe(false)
    expect(isUntrustedLocalProxy('127.0.0.1', '1.2.3.4', trusted)).toBe(false)
    expect(isUntrustedLocalProxy('127.0.0.1', null, [])).toBe(false)
    expect(isUntrustedLocalProxy('::1', '1.2.3.4', [])).toBe(true)
  })
})
