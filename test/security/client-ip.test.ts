import { describe, expect, it } from 'bun:test'
import { loadConfig } from '../../src/config'
import { resolveClientIp } from '../../src/server/plugins/client-ip'

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
  ])('is %s', (_, peer, header, expected) => {
    expect(resolveClientIp(peer, header, trusted)).toBe(expected)
  })

  it('refuses a bad AUTHD_TRUSTED_PROXIES with one clear line', () => {
    expect(() => loadConfig({ AUTHD_TRUSTED_PROXIES: '10.0.0.0/99' })).toThrow('AUTHD_TRUSTED_PROXIES must list IP addresses or CIDRs such as 10.0.0.0/8 (got "10.0.0.0/99")')
  })
})
