import { describe, expect, it } from 'bun:test'
import { newRefreshToken, refreshTokenKey, successorRefreshToken } from '../../src/core/sessions/refresh-tokens'
import { hmacSha256, randomToken, sha256 } from '../../src/core/secrets'

describe('refresh tokens and the key they are stored under', () => {
  const at = Date.UTC(2026, 10, 27, 5, 0, 0)

  it('are their issue time and 256 random bits, stored under that time and their hash', () => {
    const token = newRefreshToken(at)
    expect(token).toMatch(/^[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/)
    expect(Number.parseInt(token.slice(0, 12), 16)).toBe(at)
    expect(refreshTokenKey(token)).toBe(`${token.slice(0, 12)}.${sha256(token)}`)
    expect(refreshTokenKey(token)).not.toContain(token.slice(13))
  })

  // What keeps a refresh's index insert at the index's end: keys sort as their tokens were issued.
  it('have keys that sort by issue time, as an index orders them', () => {
    const times = Array.from({ length: 200 }, (_, i) => at + i * 997 + (i % 7))
    const keys = times.map((t) => refreshTokenKey(newRefreshToken(t)))
    expect([...keys].sort()).toEqual(keys)
    const successors = times.map((t) => refreshTokenKey(successorRefreshToken('server-key', newRefreshToken(at), t)))
    expect([...successors].sort()).toEqual(successors)
  })

  it('derive one successor per token and spending time, which no other key or token gives', () => {
    const token = newRefreshToken(at)
    const successor = successorRefreshToken('server-key', token, at + 5)
    expect(successor).toBe(successorRefreshToken('server-key', token, at + 5))
    expect(successor).toMatch(/^[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/)
    expect(successor.slice(0, 12)).toBe((at + 5).toString(16).padStart(12, '0'))
    expect(successorRefreshToken('another-key', token, at + 5)).not.toBe(successor)
    expect(successorRefreshToken('server-key', newRefreshToken(at), at + 5)).not.toBe(successor)
  })

  it('find a token of the earlier format (43 characters) under its hash alone', () => {
    const legacy = newRefreshToken(at, 'hash')
    expect(legacy).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(refreshTokenKey(legacy)).toBe(sha256(legacy))
    expect(refreshTokenKey(randomToken(32))).toHaveLength(43)
  })

  // What an older authd derives, so both versions rotate one session alike during an upgrade.
  it('keep a session in the format of its first token: the successor of the earlier format is HMAC(token)', () => {
    const legacy = randomToken(32)
    expect(successorRefreshToken('server-key', legacy, at + 5)).toBe(hmacSha256('server-key', legacy))
    expect(successorRefreshToken('server-key', legacy, at + 9)).toBe(hmacSha256('server-key', legacy))
  })

  it('bind the key to the whole token: another issue time in front is another key', () => {
    const token = newRefreshToken(at)
    const forged = `${(at + 1).toString(16).padStart(12, '0')}${token.slice(12)}`
    expect(refreshTokenKey(forged)).not.toBe(refreshTokenKey(token))
    expect(refreshTokenKey(forged).slice(13)).not.toBe(refreshTokenKey(token).slice(13))
  })
})
