// Request bodies: JSON objects only, and bodies over the limit are refused before anything
// parses them: by Content-Length up front, and for chunked bodies (no length) while reading.
// A GET or HEAD body is never read, so it is not measured either. Bun's own cap (set higher in
// serve.ts) is only a backstop, since it answers without our envelope.
import { Elysia } from 'elysia'
import { AppError, badRequest, payloadTooLarge as tooLarge } from '../../core/errors'
import { refuseNulInJson } from './nul-characters'

const utf8 = new TextDecoder()

async function readText(request: Request, limit: number): Promise<string> {
  if (!request.body) return ''
  // With a Content-Length (held to the limit in onRequest) the body is read whole: streaming it
  // chunk by chunk cost a POST ~17 µs more of CPU. The size is checked again because an
  // in-process Request (app.handle) is not framed by its header.
  if (request.headers.has('content-length')) {
    const bytes = await request.arrayBuffer()
    if (bytes.byteLength > limit) throw tooLarge()
    return utf8.decode(bytes)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of request.body) {
    size += chunk.byteLength
    if (size > limit) throw tooLarge()
    chunks.push(chunk)
  }
  return utf8.decode(Buffer.concat(chunks))
}

/** On a parsed form, the names it sent more than once (not enumerable: no field): the OAuth
 *  endpoints refuse those (RFC 6749 §3.2) where a page takes the first. */
export const REPEATED_FIELDS = Symbol('repeated form fields')

/** A form as authd's pages send it (application/x-www-form-urlencoded): each name's first value. */
function parseForm(text: string): Record<string, string> {
  const form: Record<string, string> = {}
  const repeated: string[] = []
  for (const [name, value] of new URLSearchParams(text)) {
    if (value.includes('\0') || name.includes('\0')) throw badRequest('A form field must not contain a NUL character')
    if (Object.hasOwn(form, name)) repeated.push(name)
    else form[name] = value
  }
  if (repeated.length > 0) Object.defineProperty(form, REPEATED_FIELDS, { value: repeated })
  return form
}

/** @param formPathPrefix where HTML forms are taken (authd's pages); every other path takes JSON only */
export const bodyLimit = (maxBytes: number, formPathPrefix?: string) =>
  new Elysia({ name: 'body-limit', seed: maxBytes })
    .onRequest(({ request }) => {
      // Elysia reads no body for GET or HEAD (and no header need be read: see observability.ts)
      if (request.method === 'GET' || request.method === 'HEAD') return
      const length = request.headers.get('content-length')
      if (length !== null && !(Number(length) <= maxBytes)) throw tooLarge()
    })
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      const text = await readText(request, maxBytes)
      if (text === '') return {}
      // The API takes JSON only, so that no HTML form on another site can post to it.
      // authd's pages take forms only (their script sends forms too): a JSON body there is
      // no request a page makes.
      if (formPathPrefix !== undefined && isUnder(request.url, formPathPrefix)) {
        if (/^application\/x-www-form-urlencoded\b/i.test(contentType ?? '')) return parseForm(text)
        throw badRequest('A form must be sent as application/x-www-form-urlencoded')
      }
      if (!/^application\/(.+\+)?json\b/i.test(contentType ?? '')) {
        throw badRequest('Request body must be JSON (Content-Type: application/json)')
      }
      let body: unknown
      try {
        // A NUL can only come as the escape \u0000 (JSON refuses a raw one): the reviver, which
        // costs a call per value, runs only for a body that may hold one.
        body = text.includes('\\u0000') ? JSON.parse(text, refuseNulInJson) : JSON.parse(text)
      } catch (error) {
        if (error instanceof AppError) throw error
        throw badRequest('Request body must be valid JSON')
      }
      // Every body this API takes is an object; say so rather than list its missing fields.
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('Request body must be a JSON object')
      return body
    })

/** Whether an absolute URL's path starts with `prefix`, without parsing the URL. */
function isUnder(url: string, prefix: string): boolean {
  return url.startsWith(prefix, url.indexOf('/', url.indexOf('//') + 2))
}
