// Known-answer vectors for the OpenID Provider's hashes, and its redirect URI rule.
import { describe, expect, it } from 'bun:test'
import { validateRedirectUri } from '../../src/core/oidc/clients'
import { atHash, s256 } from '../../src/core/oidc/tokens'

describe('hashes', () => {
  it('S256 is RFC 7636 Appendix B', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')
  })
  it('at_hash is OpenID Connect Core Appendix A.4 (the left half of SHA-256)', () => {
    expect(atHash('jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y')).toBe('77QmUPtjPfzWtF2AnpK9RQ')
  })
})

describe('validateRedirectUri', () => {
  it.each(['https://app.example/cb', 'https://app.example/cb?tenant=1', 'http://localhost:8080/cb', 'http://127.0.0.1/cb', 'http://[::1]:3000/cb', 'com.example.app:/oauth2redirect'])('accepts %s', (uri) => {
    expect(validateRedirectUri('redirectUris', uri)).toBe(uri)
  })
  it.each(['http://app.example/cb', 'https://app.example/cb#x', '/cb', 'javascript:alert(1)', 'data:text/html,x', 'https://user:pw@app.example/cb', 'myapp:/cb', '', 'x'.repeat(2001)])('refuses %s', (uri) => {
    expect(() => validateRedirectUri('redirectUris', uri)).toThrow('redirectUris')
  })
})
