// The error codes are published (logs, metrics and scripts key on them): the HTTP API reference
// (docs/api.md) lists every one that src/core/errors.ts declares.
import { describe, expect, it } from 'bun:test'

describe('the HTTP API reference (docs/api.md)', () => {
  it('lists every error code', async () => {
    const source = await Bun.file(new URL('../../src/core/errors.ts', import.meta.url)).text()
    const readme = await Bun.file(new URL('../../docs/api.md', import.meta.url)).text()
    const union = /export type ErrorCode =([^]*?)\n\n/.exec(source)?.[1] ?? ''
    const codes = [...union.matchAll(/'([a-z_]+)'/g)].map((match) => match[1]!)
    expect(codes.length).toBeGreaterThan(15)
    const listed = readme.slice(readme.indexOf('Every error also has a stable code'))
    expect(codes.filter((code) => !listed.includes(`\`${code}\``))).toEqual([])
  })
})
