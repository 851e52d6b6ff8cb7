// A page to read the OpenAPI document, served by authd itself. Documentation viewers load
// their code from CDNs (unpinned, in the case of the plugin's default); on the auth server's
// own origin such a script could call /refresh-token with a visitor's cookie and read the
// answer. This page is static HTML and one small script of ours, under a strict CSP.
import { Elysia } from 'elysia'

const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width">
<title>authd API</title>
<style>
  body { font-family: -apple-system, Segoe UI, Helvetica, Arial, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a }
  h2 { margin-top: 2.5rem; font-size: 1.1rem } code, pre { font-family: ui-monospace, Menlo, monospace; font-size: .85rem }
  .method { display: inline-block; min-width: 4rem; font-weight: 700 } pre { background: #f5f5f5; padding: .75rem; overflow-x: auto }
  details { margin: .25rem 0 } summary { cursor: pointer }
</style>
</head>
<body>
<h1>authd API</h1>
<p>The OpenAPI 3.1 document: <a href="openapi.json">openapi.json</a>. Every response is the envelope
<code>{ statusCode, message, data }</code>; errors have <code>data: null</code>.</p>
<main id="api">Loading…</main>
<script src="docs.js"></script>
</body>
</html>
`

// Renders with textContent only: nothing from the document is parsed as HTML.
const SCRIPT = `(async () => {
  const main = document.getElementById('api')
  const doc = await (await fetch('openapi.json')).json()
  const el = (tag, text, attrs = {}) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; Object.assign(e, attrs); return e }
  const block = (title, value) => { const d = el('details'); d.append(el('summary', title), el('pre', JSON.stringify(value, null, 2))); return d }
  main.textContent = ''
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const section = el('section')
      const heading = el('h2')
      heading.append(el('span', method.toUpperCase(), { className: 'method' }), el('code', path))
      section.append(heading)
      if (op.summary) section.append(el('p', op.summary))
      if (op.description) section.append(el('p', op.description))
      if (op.security) section.append(el('p', 'Authentication: ' + op.security.map((s) => Object.keys(s).join(' + ')).join(' or ')))
      const body = op.requestBody && op.requestBody.content && op.requestBody.content['application/json']
      if (body) section.append(block('Request body (application/json)', body.schema))
      for (const [status, response] of Object.entries(op.responses || {})) {
        const schema = response.content && response.content['application/json'] && response.content['application/json'].schema
        section.append(schema ? block(status + ': ' + response.description, schema) : el('p', status + ': ' + response.description))
      }
      main.append(section)
    }
  }
})()
`

export const docsRoutes = () =>
  new Elysia()
    .get('/docs', ({ set }) => {
      set.headers['content-type'] = 'text/html; charset=utf-8'
      set.headers['content-security-policy'] = CSP
      return PAGE
    })
    .get('/docs.js', ({ set }) => {
      set.headers['content-type'] = 'text/javascript; charset=utf-8'
      return SCRIPT
    })
