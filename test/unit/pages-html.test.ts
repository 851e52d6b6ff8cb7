// The pages' templates escape by default (src/server/pages/html.ts); the one way around it,
// unsafeRaw, is used only where listed here with the reason, so a new use fails this test
// until someone has read it and added it.
import { describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { html, unsafeRaw } from '../../src/server/pages/html'

describe('html``', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const evil = `"><script>alert('x')</script>&`
    expect(html`<p title="${evil}">${evil}</p>`.value).toBe(
      '<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</p>',
    )
  })

  it('keeps nested templates and lists of them, escapes strings inside them once, and draws nothing for false, null and undefined', () => {
    const item = (text: string) => html`<li>${text}</li>`
    expect(html`<ul>${['<a>', 'b&'].map(item)}</ul>${false}${null}${undefined}${0}`.value).toBe('<ul><li>&lt;a&gt;</li><li>b&amp;</li></ul>0')
  })

  it('does not take an object that only looks like SafeHtml', () => {
    const forged = { value: '<script>' } as never
    expect(html`${forged}`.value).toBe('[object Object]')
  })
})

/** Every unsafeRaw in the pages, and why its text is safe. */
const ALLOWED_UNSAFE_RAW: Record<string, string> = {
  'layout.ts: unsafeRaw(css)': "the pages' own style sheet, compiled into the binary; no user's value is in it",
  'two-factor.ts: unsafeRaw(await qrSvg(enrolment.otpauthUrl)': "the qrcode library's SVG: a path of the modules' coordinates, no text of the URL in it",
}

describe('unsafeRaw', () => {
  it('is used only where listed, with the reason', () => {
    const dir = join(import.meta.dir, '../../src/server/pages')
    const uses: string[] = []
    const walk = (folder: string) => {
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        const path = join(folder, entry.name)
        if (entry.isDirectory()) walk(path)
        else if (entry.name.endsWith('.ts') && entry.name !== 'html.ts') {
          for (const match of readFileSync(path, 'utf8').matchAll(/unsafeRaw\([^)]*\)/g)) uses.push(`${path.slice(dir.length + 1)}: ${match[0]}`)
        }
      }
    }
    walk(dir)
    expect(uses.sort()).toEqual(Object.keys(ALLOWED_UNSAFE_RAW).sort())
    expect(unsafeRaw('<b>').value).toBe('<b>')
  })
})
