// The reference tables of the docs against what authd really is: the routes of the OpenAPI
// document the server serves, the errors declared in src/core/errors.ts, the kinds of mail
// the outbox holds (docs/api.md). A route, error or mail added without its line there fails
// here. And every relative link of the README and docs/ leads to a file and heading that exist.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import * as errors from '../src/core/errors'
import { mailOutbox } from '../src/db/sqlite/schema'
import { createTestContext, type TestContext } from './helpers'

const ROOT = join(import.meta.dir, '..')
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8')

/** The text of the section of `file` whose heading is `heading`, up to the next heading of level 2 to 4
 *  (a `# ` line inside a shell example is a comment, so a page's title ends nothing). */
function section(file: string, heading: string): string {
  const text = `\n${read(file)}`
  const start = text.indexOf(`\n${heading}\n`)
  if (start === -1) throw new Error(`no section "${heading}" in ${file}`)
  const rest = text.slice(start + heading.length + 2)
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

describe('the HTTP API reference (docs/api.md)', () => {
  it('lists every route of the auth API in its table, and no route the server does not have', () => {
    const listed = tableRows(section('docs/api.md', '# The HTTP API')).flatMap(([route]) => routesIn(route!, '/api/v1/auth'))
    expect(listed.sort()).toEqual(documented.filter((route) => route.includes(' /api/v1/auth/')).sort())
    for (const probe of ['GET /healthz', 'GET /readyz']) {
      expect(documented).toContain(probe)
      expect(section('docs/api.md', '# The HTTP API')).toContain(`\`${probe}\``)
    }
  })

  it('lists every route of the admin API in its table', () => {
    const listed = tableRows(section('docs/api.md', '## The admin API: users without a shell')).flatMap(([route]) => routesIn(route!, '/api/v1/admin'))
    expect(listed.sort()).toEqual(documented.filter((route) => route.includes(' /api/v1/admin/')).sort())
  })

  it('gives every error with a fixed message its line in the envelope table, and every stable code', () => {
    const rows = tableRows(section('docs/api.md', '## The envelope'))
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
    const paragraph = section('docs/api.md', '## The envelope').slice(section('docs/api.md', '## The envelope').indexOf('messages may be reworded:'))
    const listedCodes = [...paragraph.slice(0, paragraph.indexOf('(declared in')).matchAll(/`([a-z_]+)`/g)].map((m) => m[1])
    expect(listedCodes.sort()).toEqual([...codes].sort())
  })

  it('names every kind of mail authd sends', () => {
    const kinds = tableRows(section('docs/api.md', '## Mail')).map(([kind]) => kind!.replaceAll('`', ''))
    expect(kinds.sort()).toEqual([...mailOutbox.kind.enumValues].sort())
  })
})

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')

/** The file's text outside fenced code blocks (where `# ` is a shell comment and `[…](…)` is code). */
const prose = (text: string) => text.split(/^```.*$/m).filter((_, i) => i % 2 === 0).join('\n')

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>()
  const times = new Map<string, number>() // a repeated heading's anchor takes -1, -2, …
  for (const [, heading] of prose(read(file)).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!)
    const n = times.get(base) ?? 0
    anchors.add(n === 0 ? base : `${base}-${n}`)
    times.set(base, n + 1)
  }
  return anchors
}

describe('the README and docs/', () => {
  it('have every relative link lead to a file, and every #anchor to a heading of it', () => {
    const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]
    const links: string[] = []
    const broken: string[] = []
    for (const file of files) {
      const text = prose(read(file)).replace(/`[^`\n]*`/g, '')
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue // https:, mailto:: not ours to check
        links.push(`${file} → ${target}`)
        const [path, anchor] = target!.split('#') as [string, string | undefined]
        const linked = path === '' ? file : relative(ROOT, resolve(dirname(join(ROOT, file)), decodeURIComponent(path)))
        if (!existsSync(join(ROOT, linked))) broken.push(`${file} → ${target} (no file ${linked})`)
        else if (anchor !== undefined && (!linked.endsWith('.md') || !anchorsOf(linked).has(anchor))) broken.push(`${file} → ${target} (no heading #${anchor} in ${linked})`)
      }
    }
    expect(links.length).toBeGreaterThan(30)
    expect(broken).toEqual([])
  })
})
