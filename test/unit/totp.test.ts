// TOTP against the independent reference: the test vectors of RFC 6238 Appendix B (SHA-1) and
// RFC 4226 Appendix D, and the RFC 4648 base32 vectors.
import { describe, expect, it } from 'bun:test'
import { base32Decode, base32Encode, hotp, matchTotp, otpauthUrl, totpCode, totpStep } from '../../src/core/mfa/totp'

const RFC_SECRET = base32Encode(Buffer.from('12345678901234567890'))

describe('TOTP', () => {
  it('gives the RFC 4226 Appendix D HOTP values', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489']
    expect(expected.map((_, i) => hotp(Buffer.from('12345678901234567890'), i))).toEqual(expected)
  })

  it('gives the RFC 6238 Appendix B SHA-1 values (8 digits, and their last 6 as we use them)', () => {
    const vectors: Array<[number, string]> = [
      [59, '94287082'],
      [1111111109, '07081804'],
      [1111111111, '14050471'],
      [1234567890, '89005924'],
      [2000000000, '69279037'],
      [20000000000, '65353130'],
    ]
    for (const [seconds, code] of vectors) {
      expect(totpCode(RFC_SECRET, totpStep(seconds * 1000), 8)).toBe(code)
      expect(totpCode(RFC_SECRET, totpStep(seconds * 1000))).toBe(code.slice(2))
    }
  })

  it('encodes and decodes base32 as RFC 4648 §10 does (without padding)', () => {
    const cases: Array<[string, string]> = [['', ''], ['f', 'MY'], ['fo', 'MZXQ'], ['foo', 'MZXW6'], ['foob', 'MZXW6YQ'], ['fooba', 'MZXW6YTB'], ['foobar', 'MZXW6YTBOI']]
    for (const [plain, encoded] of cases) {
      expect(base32Encode(Buffer.from(plain))).toBe(encoded)
      expect(base32Decode(encoded).toString()).toBe(plain)
    }
  })

  it('accepts the code of now and of one step either side, not two; each step once', () => {
    const now = 1_800_000_000_000
    const step = totpStep(now)
    for (const drift of [-1, 0, 1]) expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step + drift), now, null)).toBe(step + drift)
    for (const drift of [-2, 2]) expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step + drift), now, null)).toBeNull()
    // Replay: a code of a step already used, or of an older one, is refused.
    expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step), now, step)).toBeNull()
    expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step - 1), now, step)).toBeNull()
    expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step + 1), now, step)).toBe(step + 1)
    expect(matchTotp(RFC_SECRET, '12345', now, null)).toBeNull()
    expect(matchTotp(RFC_SECRET, '12345a', now, null)).toBeNull()
  })

  it('writes the otpauth URL authenticator apps read, issuer in label and parameter', () => {
    expect(otpauthUrl({ issuer: 'Acme Corp', account: 'ada@example.com', secret: 'JBSWY3DPEHPK3PXP' })).toBe(
      'otpauth://totp/Acme%20Corp:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Acme%20Corp&algorithm=SHA1&digits=6&period=30',
    )
  })
})
