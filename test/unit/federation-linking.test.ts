// §25 rules 1-3 as a table: which local account an upstream identity belongs to. Each row is a
// case an attacker would try or a user would expect; the linking rule is the one function
// (core/federation/linking.ts) the callback asks.
import { describe, expect, it } from 'bun:test'
import { resolveAccount, upstreamMfaTrusted, type AccountResolution, type ResolutionInput } from '../../src/core/federation/linking'
import { hasSecondFactor } from '../../src/core/forward-auth/check'

const verifiedUser = { id: 'local', emailVerifiedAt: 1 }
const unverifiedUser = { id: 'local', emailVerifiedAt: null }
const vouched = { email: 'ada@example.com', emailVerified: true }
const unvouched = { email: 'ada@example.com', emailVerified: false }

type Row = [string, Partial<ResolutionInput>, AccountResolution]

const rows: Row[] = [
  ['rule 1: a known identity signs its user in, whatever the address says now', { identity: { userId: 'linked' }, profile: unvouched, localUser: verifiedUser }, { outcome: 'sign-in', userId: 'linked' }],
  ['rule 2: both vouch, provider set to verified: linked', { profile: vouched, localUser: verifiedUser }, { outcome: 'link', userId: 'local' }],
  ['rule 2: the upstream does not vouch (an attacker typing the victim\'s address upstream): proof asked', { profile: unvouched, localUser: verifiedUser }, { outcome: 'prove', userId: 'local' }],
  ['rule 2: the local address is unproven (a pre-hijacked account): proof asked', { profile: vouched, localUser: unverifiedUser }, { outcome: 'prove', userId: 'local' }],
  ['rule 2: a provider set to never: proof asked even when both vouch', { provider: { linkByEmail: 'never', createUsers: null }, profile: vouched, localUser: verifiedUser }, { outcome: 'prove', userId: 'local' }],
  ['rule 3: no such user, the tenant open to sign-ups: created for the address the upstream vouched for', { tenantSignup: 'open', profile: vouched }, { outcome: 'create' }],
  ['rule 3: never for an address nobody vouched for (an account waiting for its owner with someone else\'s ways in)', { tenantSignup: 'open', profile: unvouched }, { outcome: 'refuse', reason: 'unverified-email' }],
  ['rule 3: no such user, the tenant closed: refused', { tenantSignup: 'closed', profile: vouched }, { outcome: 'refuse', reason: 'creation-closed' }],
  ['rule 3: the provider\'s own policy wins over the tenant\'s', { provider: { linkByEmail: 'verified', createUsers: 'open' }, tenantSignup: 'closed', profile: vouched }, { outcome: 'create' }],
  ['rule 3: provider closed, tenant open: refused', { provider: { linkByEmail: 'verified', createUsers: 'closed' }, tenantSignup: 'open', profile: vouched }, { outcome: 'refuse', reason: 'creation-closed' }],
  ['rule 3: a listed domain the upstream vouched for: created', { provider: { linkByEmail: 'verified', createUsers: 'domains:example.com' }, profile: vouched }, { outcome: 'create' }],
  ['rule 3: a listed domain nobody vouched for: refused', { provider: { linkByEmail: 'verified', createUsers: 'domains:example.com' }, profile: unvouched }, { outcome: 'refuse', reason: 'unverified-email' }],
  ['rule 3: another domain: refused', { provider: { linkByEmail: 'verified', createUsers: 'domains:example.org' }, profile: vouched }, { outcome: 'refuse', reason: 'creation-closed' }],
  ['no address from the upstream: nothing can be found or made', { tenantSignup: 'open', profile: { email: null, emailVerified: false } }, { outcome: 'refuse', reason: 'no-email' }],
]

describe('which local account an upstream identity belongs to (§25)', () => {
  for (const [name, given, expected] of rows) {
    it(name, () => {
      const input: ResolutionInput = { identity: null, provider: { linkByEmail: 'verified', createUsers: null }, tenantSignup: 'closed', profile: vouched, localUser: null, ...given }
      expect(resolveAccount(input)).toEqual(expected)
    })
  }
})

describe('the upstream\'s second factor (§25 --trust-upstream-mfa)', () => {
  it('counts only when the provider trusts it and the amr names one', () => {
    expect(upstreamMfaTrusted({ trustUpstreamMfa: true }, { amr: ['pwd', 'mfa'] })).toBe(true)
    expect(upstreamMfaTrusted({ trustUpstreamMfa: true }, { amr: ['hwk'] })).toBe(true)
    expect(upstreamMfaTrusted({ trustUpstreamMfa: true }, { amr: ['otp'] })).toBe(true)
    expect(upstreamMfaTrusted({ trustUpstreamMfa: true }, { amr: ['pwd'] })).toBe(false)
    expect(upstreamMfaTrusted({ trustUpstreamMfa: false }, { amr: ['mfa'] })).toBe(false)
  })
})

describe('a session signed in through a provider, then a passkey (forward auth\'s two_factor)', () => {
  it('has two factors: the upstream\'s sign-in and the passkey; the upstream alone is one', () => {
    expect(hasSecondFactor(['fed', 'hwk'])).toBe(true)
    expect(hasSecondFactor(['fed', 'otp'])).toBe(true)
    expect(hasSecondFactor(['fed'])).toBe(false)
    expect(hasSecondFactor(['hwk'])).toBe(false)
  })
})
