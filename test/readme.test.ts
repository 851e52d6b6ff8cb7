// The README's reference tables against what authd really is: the routes of the OpenAPI
// document the server serves, the errors declared in src/core/errors.ts, the kinds of mail
// the outbox holds. A route, error or mail added without its line in the README fails here.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as errors from '../src/core/errors'
import { mailOutbox } from '../src/db/sqlite/schema'
import { createTestContext, type TestContext } from './helpers'

const README = readFileSync(join(import.meta.dir, '../README.md'), 'utf8')

/** The text of the README section whose heading is `heading`, up to the next heading of any level. */
function section(heading: string): string {
  const start = README.indexOf(`\n${heading}\n`)
  if (start === -1) throw new Error(`no section "${heading}" in the README`)
  const rest = README.slice(start + heading.length + 2)
  return rest.slice(0, rest.search(/\n#{2,4} /) === -1 ? undefined : rest.search(/\n#{2,4} /))
}

/** The rows of the first table in `text`, as arrays of cells (the header and rule left out). */
function tableRows(text: string): string[][] {
  const lines = text.split('\n')
  const first = lines.findIndex((line) => line.startsWith('|'))
  const rows: string[][] = []
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break
    rows.push(line.slice(1, -1).split(/(?<!\\)\|/).map((cell) => cell.trim()))
  }
  return rows
}

const routesIn = (cell: string, prefix: string) =>
  [...cell.matchAll(/`(GET|POST|PATCH|PUT|DELETE) (\/[^`\s?]*)[^`]*`/g)].map(([, method, path]) => `${method} ${prefix}${path!.replace(/\{[^}]+\}/g, '{}')}`)

let ctx: TestContext
let documented: string[]
beforeAll(async () => {
  ctx = await createTestContext()
  const doc = (await ctx.call('GET', '/api/v1/auth/openapi.json', { apiKey: null })).json
  documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`),
  )
})
afterAll(() => ctx.close())

describe('the README', () => {
  it('lists every route of the auth API in its table, and no route the server does not have', () => {
    const listed = tableRows(section('## The HTTP API')).flatMap(([route]) => routesIn(route!, '/api/v1/auth'))
    expect(listed.sort()).toEqual(documented.filter((route) => route.includes(' /api/v1/auth/')).sort())
    for (const probe of ['GET /healthz', 'GET /readyz']) {
      expect(documented).toContain(probe)
      expect(section('## The HTTP API')).toContain(`\`${probe}\``)
    }
  })

  it('lists every route of the admin API in its table', () => {
    const listed = tableRows(section('### The admin API: users without a shell')).flatMap(([route]) => routesIn(route!, '/api/v1/admin'))
    expect(listed.sort()).toEqual(documented.filter((route) => route.includes(' /api/v1/admin/')).sort())
  })

  it('gives every error with a fixed message its line in the envelope table, and every stable code', () => {
    const rows = tableRows(section('### The envelope'))
    const messagesOf = (status: number) => rows.filter(([s]) => s === String(status)).flatMap(([, messages]) => [...messages!.matchAll(/`([^`]+)`/g)].map((m) => m[1]))
    const declared = Object.entries(errors).filter(([, value]) => typeof value === 'function' && value !== errors.AppError) as Array<[string, (...args: unknown[]) => unknown]>
    const codes = new Set<string>()
    for (const [name, make] of declared) {
      const [one, two] = [make('x', 'y'), make('z', 'w')] as errors.AppError[]
      expect({ name, isAppError: one instanceof errors.AppError }).toEqual({ name, isAppError: true })
      codes.add(one!.code)
      // A message that does not depend on the arguments is what clients see: it must be listed.
      const line = one!.message === two!.message ? one!.message : undefined
      expect({ name, status: one!.status, listed: line === undefined ? rows.some(([s]) => s === String(one!.status)) : messagesOf(one!.status).includes(line) }).toEqual({ name, status: one!.status, listed: true })
    }
    const paragraph = section('### The envelope').slice(section('### The envelope').indexOf('messages may be reworded:'))
    const listedCodes = [...paragraph.slice(0, paragraph.indexOf('(declared in')).matchAll(/`([a-z_]+)`/g)].map((m) => m[1])
    expect(listedCodes.sort()).toEqual([...codes].sort())
  })

  it('names every kind of mail authd sends', () => {
    const kinds = tableRows(section('### Mail')).map(([kind]) => kind!.replaceAll('`', ''))
    expect(kinds.sort()).toEqual([...mailOutbox.kind.enumValues].sort())
  })
})
