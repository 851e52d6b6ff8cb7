// A browser without JavaScript, for the pages' HTTP scenarios: it keeps cookies, reads a
// page's forms and sends them back as a browser would (urlencoded, with its hidden fields and
// its Origin), through app.handle.
import { peerAddresses } from '../src/server/plugins/client-ip'
import type { TestContext } from './helpers'

export interface PageAnswer {
  status: number
  headers: Headers
  html: string
  location: string | null
}

export class PageBrowser {
  readonly cookies = new Map<string, string>()
  constructor(
    private readonly ctx: TestContext,
    readonly headers: Record<string, string> = {},
    /** The scheme and host the browser asked for (its Host header): authd's own, or a rebound name. */
    readonly site = 'http://localhost',
  ) {}

  get(path: string, headers: Record<string, string> = {}) {
    return this.send('GET', path, undefined, headers)
  }

  /** Sends the form whose action ends with `action` on `page`, with its hidden fields and `fields`. */
  submit(page: PageAnswer, action: string, fields: Record<string, string>, headers: Record<string, string> = { origin: 'http://localhost' }) {
    const form = formOn(page.html, action)
    return this.send('POST', form.action, new URLSearchParams({ ...form.hidden, ...fields }).toString(), headers)
  }

  /** A POST of exactly these fields (no hidden ones read from a page). */
  post(path: string, fields: Record<string, string>, headers: Record<string, string> = { origin: 'http://localhost' }) {
    return this.send('POST', path, new URLSearchParams(fields).toString(), headers)
  }

  async send(method: string, path: string, body: string | undefined, extra: Record<string, string>): Promise<PageAnswer> {
    const headers: Record<string, string> = { ...this.headers, ...extra }
    if (body !== undefined) headers['content-type'] ??= 'application/x-www-form-urlencoded'
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
    const request = new Request(`${this.site}${path}`, { method, headers, body })
    peerAddresses.set(request, '127.0.0.1')
    const response = await this.ctx.app.handle(request)
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = cookie.split(';')
      const [name = '', value = ''] = pair.split('=')
      if (value === '' || attributes.some((a) => /max-age=0\b/i.test(a.trim()))) this.cookies.delete(name.trim())
      else this.cookies.set(name.trim(), value)
    }
    return { status: response.status, headers: response.headers, html: await response.text(), location: response.headers.get('location') }
  }
}

/** The form posting to a path ending with `action`: its target and hidden fields. */
export function formOn(html: string, action: string): { action: string; hidden: Record<string, string> } {
  const forms = [...html.matchAll(/<form method="post" action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)]
  const found = forms.find((f) => unescape(f[1]!).split('#')[0]!.endsWith(action))
  if (!found) throw new Error(`no form for ${action} on the page`)
  const hidden = Object.fromEntries([...found[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, unescape(m[2]!)]))
  return { action: unescape(found[1]!), hidden }
}

const unescape = (text: string) => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')

/** The message shown on a field (its error paragraph), or null. */
export function fieldError(html: string, name: string): string | null {
  const match = new RegExp(`<p class="error" id="f-${name}-error">([^<]*)</p>`).exec(html)
  return match ? unescape(match[1]!) : null
}

/** The page's problem summary (form-level and field errors), as text. */
export const problemText = (html: string) => /<div class="problem"[\s\S]*?<\/div>/.exec(html)?.[0].replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim() ?? null

/** The page's notice, as text. */
export const noticeText = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1] ?? null
