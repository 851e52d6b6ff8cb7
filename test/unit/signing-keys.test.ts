// A signing key's kid is typed on the command line (`authd keys revoke <kid>`).
import { describe, expect, it } from 'bun:test'
import { commandLineSafeKid, generateSigningKey } from '../../src/core/sessions/signing-keys'

describe('signing key ids', () => {
  it('never begin with "-", which the CLI would read as an option (1 in 64 random ids did)', () => {
    const kids = Array.from({ length: 2000 }, () => commandLineSafeKid())
    expect(kids.filter((kid) => kid.startsWith('-'))).toEqual([])
    expect(new Set(kids).size).toBe(2000)
    expect(generateSigningKey(0).kid).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{15}$/)
  })
})
