// The rules of webhooks that need no server: the back-off, event patterns, which URLs and
// addresses a delivery may go to.
import { describe, expect, it } from 'bun:test'
import { addressAllowed, checkEndpointUrl, RefusedAddress, resolveTarget } from '../../src/core/webhooks/address'
import { tenantReadable } from '../../src/core/webhooks/endpoints'
import { ATTEMPT_TIMEOUT_MS, DELIVERY_LEASE_MS, retryDelayMs } from '../../src/core/webhooks/delivery'
import { perTenantShare } from '../../src/core/webhooks/worker'
import { parseEventPatterns, subscribes } from '../../src/core/webhooks/events'

const strict = { allowInsecure: false, allowPrivate: [] as never[] }

describe('the back-off', () => {
  it('retries first within 5 s, doubles with jitter of up to half, and stays within 6 h', () => {
    expect(retryDelayMs(1, 0)).toBe(2_500)
    expect(retryDelayMs(1, 0.999)).toBeLessThanOrEqual(5_000)
    expect(retryDelayMs(2, 1)).toBe(10_000)
    expect(retryDelayMs(40, 1)).toBe(6 * 3600_000)
    expect(retryDelayMs(40, 0)).toBe(3 * 3600_000)
  })

  it('tries about twenty times in the three days before a delivery is dead', () => {
    let elapsed = 0
    let attempts = 0
    while (elapsed < 3 * 86400_000) elapsed += retryDelayMs(++attempts, 0.5)
    expect(attempts).toBeGreaterThan(15)
    expect(attempts).toBeLessThan(30)
  })
})

describe('claims', () => {
  it('last comfortably longer than an attempt can (its one deadline covers resolution too), and give a tenant a quarter of the slots', () => {
    expect(DELIVERY_LEASE_MS).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS + 5_000)
    expect(perTenantShare(8)).toBe(2)
    expect(perTenantShare(2)).toBe(1)
  })
})

describe('event patterns', () => {
  it.each([
    ['user.*', 'user.mfa_enabled', true],
    ['user.*', 'passkey.added', false],
    ['*', 'signup.verified', true],
    ['session.created', 'session.ended', false],
  ])('%s subscribes to %s: %p', (pattern, type, expected) => {
    expect(subscribes({ eventTypes: parseEventPatterns(pattern) }, type)).toBe(expected)
  })

  it('refuses unknown types and families, and lists the types', () => {
    expect(() => parseEventPatterns('users.*')).toThrow('user.created, user.updated')
    expect(() => parseEventPatterns('user.created,*.created')).toThrow('"*.created" is no event type')
    expect(parseEventPatterns([' user.created ', 'user.created', 'session.*'])).toEqual(['user.created', 'session.*'])
  })
})

describe('where a delivery may go', () => {
  it.each([
    ['a public IPv4 address', '93.184.215.14', true],
    ['a public IPv6 address', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', true],
    ['10/8', '10.0.0.1', false],
    ['172.16/12', '172.16.5.4', false],
    ['192.168/16', '192.168.1.1', false],
    ['loopback', '127.0.0.53', false],
    ['the metadata service', '169.254.169.254', false],
    ['carrier-grade NAT', '100.64.0.1', false],
    ['unspecified', '0.0.0.0', false],
    ['IPv6 loopback', '::1', false],
    ['IPv6 unique local', 'fd00::1', false],
    ['IPv6 link-local', 'fe80::1', false],
    ['loopback mapped into IPv6', '::ffff:127.0.0.1', false],
    ['the metadata service mapped into IPv6', '::ffff:169.254.169.254', false],
  ])('%s (%s): %p', (_, address, allowed) => {
    expect(addressAllowed(address, strict, false)).toBe(allowed)
  })

  it('allows private ranges only as AUTHD_WEBHOOKS_ALLOW_PRIVATE says', async () => {
    const { parseCIDR } = await import('ipaddr.js')
    const tenNet = { allowInsecure: false, allowPrivate: [parseCIDR('10.0.0.0/8')] }
    expect(addressAllowed('10.9.8.7', tenNet, false)).toBe(true)
    expect(addressAllowed('192.168.1.1', tenNet, false)).toBe(false)
    expect(addressAllowed('169.254.169.254', { allowInsecure: false, allowPrivate: 'all' }, false)).toBe(true)
  })

  it('checks every address a name has, and connects to the one it checked', async () => {
    // (the tenant reads the message: no address in it; the operator's log reads .address)
    const refused = (await resolveTarget('https://mixed.test/x', strict, async () => ['93.184.215.14', '10.0.0.1']).catch((error: RefusedAddress) => error)) as RefusedAddress
    expect({ message: refused.message, address: refused.address }).toEqual({
      message: 'mixed.test does not resolve to a public address',
      address: { address: '10.0.0.1', range: 'private' },
    })
    expect(await resolveTarget('https://public.test:8443/x?y=1', strict, async () => ['93.184.215.14'])).toEqual({ hostname: 'public.test', urls: ['https://93.184.215.14:8443/x?y=1'] })
    expect((await resolveTarget('https://v6.test/x', strict, async () => ['2606:2800:21f:cb07:6820:80da:af6b:8b2c', '93.184.215.14'])).urls).toEqual(['https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/x', 'https://93.184.215.14/x'])
    // A name with no address, or none at all, reads the same to the tenant: only .detail (the log) differs.
    const none = (await resolveTarget('https://nothing.test/x', strict, async () => []).catch((error: RefusedAddress) => error)) as RefusedAddress
    const unknown = (await resolveTarget('https://nosuch.test/x', strict, async () => { throw new Error('getaddrinfo ENOTFOUND nosuch.test') }).catch((error: RefusedAddress) => error)) as RefusedAddress
    expect([none.message, none.detail, unknown.message, unknown.detail]).toEqual(['nothing.test does not resolve to a public address', 'the name has no address', 'nosuch.test does not resolve to a public address', 'cannot resolve: getaddrinfo ENOTFOUND nosuch.test'])
  })

  it('takes https URLs, and http only to loopback with the switch on', () => {
    expect(checkEndpointUrl('https://hooks.example.com/a', strict)).toBe('https://hooks.example.com/a')
    expect(() => checkEndpointUrl('http://127.0.0.1:8080/a', strict)).toThrow('url must be https')
    const insecure = { allowInsecure: true, allowPrivate: [] as never[] }
    expect(checkEndpointUrl('http://127.0.0.1:8080/a', insecure)).toBe('http://127.0.0.1:8080/a')
    expect(checkEndpointUrl('http://localhost:8080/a', insecure)).toBe('http://localhost:8080/a')
    expect(() => checkEndpointUrl('http://hooks.example.com/a', insecure)).toThrow('http only to a loopback address')
    expect(() => checkEndpointUrl('http://10.0.0.1/a', insecure)).toThrow('http only to a loopback address')
  })

  it('refuses an http URL whose name resolves off loopback, even with the switch on', async () => {
    const insecure = { allowInsecure: true, allowPrivate: [] as never[] }
    await expect(resolveTarget('http://localhost:8080/a', insecure, async () => ['93.184.215.14'])).rejects.toThrow('localhost resolves to an address that is not loopback (http is allowed only to loopback)')
    expect((await resolveTarget('http://localhost:8080/a', insecure, async () => ['::1', '127.0.0.1'])).urls).toEqual(['http://[::1]:8080/a', 'http://127.0.0.1:8080/a'])
  })
})

describe('a stored error as the tenant reads it', () => {
  it('names no address, even one stored before refusals stopped naming it', () => {
    expect(tenantReadable('refused: hooks.test resolves to 10.1.2.3, a private address (AUTHD_WEBHOOKS_ALLOW_PRIVATE allows such addresses)')).toBe('refused: hooks.test does not resolve to a public address')
    expect(tenantReadable('refused: v6.test resolves to fd00::1, an uniqueLocal address (x)')).toBe('refused: v6.test does not resolve to a public address')
    expect(tenantReadable('refused: hooks.test resolves to a non-public address (AUTHD_WEBHOOKS_ALLOW_PRIVATE allows such addresses)')).toBe('refused: hooks.test does not resolve to a public address')
    // (nor whether a name exists, stored before refusals said the same for both)
    expect(tenantReadable('cannot resolve: getaddrinfo ENOTFOUND nosuch.test')).toBe('refused: the host does not resolve to a public address')
    expect(tenantReadable('refused: localhost resolves to an address that is not loopback (http is allowed only to loopback)')).toBe('refused: localhost resolves to an address that is not loopback (http is allowed only to loopback)')
    expect(tenantReadable('answered 503')).toBe('answered 503')
    expect(tenantReadable(null)).toBeNull()
  })
})
