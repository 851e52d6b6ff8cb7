import { describe, expect, it } from 'bun:test'
import { backoffDelayMs, type BackoffRule } from '../../src/core/guards/limits'
import { underAddressLimits } from '../../src/core/accounts/password-reset'

describe('the back-off (one definition for both engines)', () => {
  const rule: BackoffRule = { name: 'r', kind: 'backoff', threshold: 3, baseMs: 1000, capMs: 5000, windowMs: 86_400_000, resetOnSuccess: true }
  it('blocks from the threshold on, doubling from base, capped', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelayMs(rule, n))).toEqual([0, 0, 1000, 2000, 4000, 5000, 5000])
  })
  it('stays at the cap however long the run', () => {
    expect(backoffDelayMs(rule, 10_000)).toBe(5000)
  })
})

describe('the per-address limit on reset mails', () => {
  const limits = { forgotAddressIntervalSec: 60, forgotAddressPerHour: 5 }
  const now = 10_000_000
  it('allows the first, then one a minute, then none once five went out in the hour', () => {
    expect(underAddressLimits(limits, { issued: 0, lastIssuedAt: null }, now)).toBe(true)
    expect(underAddressLimits(limits, { issued: 1, lastIssuedAt: now - 59_999 }, now)).toBe(false)
    expect(underAddressLimits(limits, { issued: 1, lastIssuedAt: now - 60_000 }, now)).toBe(true)
    expect(underAddressLimits(limits, { issued: 4, lastIssuedAt: now - 60_000 }, now)).toBe(true)
    expect(underAddressLimits(limits, { issued: 5, lastIssuedAt: now - 600_000 }, now)).toBe(false)
  })
})
