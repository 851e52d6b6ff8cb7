// Where an upstream provider's issuer comes from (core/federation/presets.ts) and how its
// settings are read (provider-fields.ts): the pure parts, which need no database.
import { describe, expect, it } from 'bun:test'
import { AppError } from '../../src/core/errors'
import { issuerOf, validateIssuer } from '../../src/core/federation/presets'
import { redirectUriOf } from '../../src/core/federation/providers'
import { validateScopes } from '../../src/core/federation/provider-fields'

const refusal = (run: () => unknown) => {
  try {
    run()
  } catch (error) {
    return error instanceof AppError ? `${error.status} ${error.message}` : String(error)
  }
  return 'accepted'
}

describe('validateIssuer', () => {
  it.each([
    ['https://login.example.com', 'https://login.example.com'],
    ['https://login.example.com/', 'https://login.example.com'],
    [' https://Login.Example.com/realms/staff/ ', 'https://login.example.com/realms/staff'],
    ['https://login.example.com:8443/x', 'https://login.example.com:8443/x'],
    ['http://localhost:4000', 'http://localhost:4000'],
    ['http://127.0.0.1:4000/', 'http://127.0.0.1:4000'],
    ['http://[::1]:4000/oidc', 'http://[::1]:4000/oidc'],
  ])('takes %s as %s', (raw, stored) => expect(validateIssuer(raw)).toBe(stored))

  it.each([
    ['http off the loopback interface', 'http://login.example.com'],
    ['http on a name that only ends like localhost', 'http://localhost.example.com'],
    ['another scheme', 'ftp://login.example.com'],
    ['no scheme', 'login.example.com'],
    ['user info', 'https://admin:pw@login.example.com'],
    ['a query', 'https://login.example.com?x=1'],
    ['an empty query', 'https://login.example.com/?'],
    ['a fragment', 'https://login.example.com#top'],
    ['nothing', ''],
    ['not a string', 42],
  ])('refuses %s', (_, raw) => expect(refusal(() => validateIssuer(raw))).toStartWith('400 issuer must'))
})

describe('issuerOf', () => {
  it('gives each preset its issuer, and refuses what the type does not take', () => {
    expect(issuerOf('google', {})).toBe('https://accounts.google.com')
    expect(issuerOf('gitlab', {})).toBe('https://gitlab.com')
    expect(issuerOf('gitlab', { issuer: 'https://git.example.com/' })).toBe('https://git.example.com')
    expect(issuerOf('github', {})).toBeNull()
    expect(issuerOf('github', { issuer: null })).toBeNull()
    expect(issuerOf('microsoft', { entraTenant: 'COMMON' })).toBe('https://login.microsoftonline.com/common/v2.0')
    expect(refusal(() => issuerOf('microsoft', { entraTenant: 'consumers' }))).toStartWith('400 entraTenant must be organizations, common, or a Microsoft Entra tenant id')
    expect(refusal(() => issuerOf('microsoft', { entraTenant: '../common' }))).toStartWith('400 entraTenant must be')
    expect(refusal(() => issuerOf('oidc', {}))).toStartWith('400 issuer is required for oidc')
    expect(refusal(() => issuerOf('google', { issuer: 'https://accounts.google.com' }))).toBe('400 issuer is not taken for google: its issuer is https://accounts.google.com')
    expect(refusal(() => issuerOf('github', { entraTenant: 'common' }))).toBe('400 entraTenant applies to microsoft only')
  })
})

describe('validateScopes', () => {
  it('folds spaces and repeats, and wants openid of an OpenID Connect provider only', () => {
    expect(validateScopes(' openid  email\temail profile ', true)).toBe('openid email profile')
    expect(validateScopes('read:user user:email', false)).toBe('read:user user:email')
    expect(refusal(() => validateScopes('read:user', true))).toBe('400 scopes must include openid for an OpenID Connect provider')
  })
})

describe('redirectUriOf', () => {
  it('names the tenant by id (a slug may change; a URI registered upstream must not)', () => {
    expect(redirectUriOf({ publicUrl: 'https://auth.example.com' }, { id: 'p1', tenantId: 't1' })).toBe('https://auth.example.com/t/t1/login/p1/callback')
  })
})
