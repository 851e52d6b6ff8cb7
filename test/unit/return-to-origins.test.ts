// The origins a sign-in's return_to may lead to (core/tenant-pages.ts): origins alone, as
// strictly as passkey origins, with a host plain enough to be written into a CSP source.
import { describe, expect, it } from 'bun:test'
import { validateReturnToOrigins } from '../../src/core/tenants/tenant-pages'

describe('validateReturnToOrigins', () => {
  it('takes https origins, and http for a loopback host; one of each', () => {
    expect(validateReturnToOrigins([' https://app.example.com ', 'https://app.example.com/', 'https://app.example.com:8443', 'http://localhost:5173', 'http://dev.localhost', 'http://127.0.0.1:8080', 'http://[::1]:3000'])).toEqual([
      'https://app.example.com',
      'https://app.example.com:8443',
      'http://localhost:5173',
      'http://dev.localhost',
      'http://127.0.0.1:8080',
      'http://[::1]:3000',
    ])
    expect(validateReturnToOrigins([])).toEqual([])
  })

  it.each([
    ['a path', 'https://app.example.com/after'],
    ['a query', 'https://app.example.com?x=1'],
    ['a fragment', 'https://app.example.com#x'],
    ['a user name', 'https://user@app.example.com'],
    ['http off loopback', 'http://app.example.com'],
    ['http to a private address', 'http://10.0.0.1'],
    ['another scheme', 'javascript:alert(1)'],
    ['no scheme', 'app.example.com'],
    ['the default port written out', 'https://app.example.com:443'],
    ['upper case (not the canonical form)', 'https://App.Example.com'],
    ['CSP syntax in the host', "https://a;b.example"],
    ['a wildcard host', 'https://*.example.com'],
    ['a quote in the host', "https://a'b.example"],
  ])('refuses %s: %s', (_, origin) => {
    expect(() => validateReturnToOrigins([origin])).toThrow('returnToOrigins must be origins such as https://app.example.com (https, no path; http only for a loopback host)')
  })

  it('refuses more than 20', () => {
    expect(() => validateReturnToOrigins(Array.from({ length: 21 }, (_, i) => `https://app${i}.example.com`))).toThrow('returnToOrigins must list at most 20 origins')
  })
})
