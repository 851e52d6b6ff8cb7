// A FAKE of GitHub for the tests of the `github` preset (§25). It is NOT GitHub and was never
// checked against GitHub: it imitates, on 127.0.0.1, what GitHub's documentation says of
//   - "Authorizing OAuth apps", the web application flow: GET /login/oauth/authorize and
//     POST /login/oauth/access_token, with PKCE (S256 only; GitHub.com documents PKCE, some
//     GitHub Enterprise Server versions still say it is unsupported), errors as GitHub documents
//     them ("Troubleshooting authorization request errors" and "… access token request errors":
//     the token endpoint answers its errors with HTTP 200);
//   - the REST API's "Get the authenticated user" (GET /user) and "List email addresses for the
//     authenticated user" (GET /user/emails, which needs the scope user:email or user).
// The paths are laid out as GitHub Enterprise Server's are (OAuth under the host, the REST API
// under /api/v3), so authd's `--type github --issuer http://127.0.0.1:PORT` reaches it as it would
// reach an Enterprise Server. Where GitHub's documentation says nothing (a wrong code_verifier,
// an unknown client at /authorize), the fake's answer is its own choice, said where it is made.
import { createHash, randomBytes } from 'node:crypto'

export interface GitHubFakeEmail {
  email: string
  primary: boolean
  verified: boolean
  visibility: 'public' | 'private' | null
}

/** A GitHub user: `id` is the stable subject (a login can be renamed). */
export interface GitHubFakeUser {
  id: number
  login: string
  name?: string | null
  /** The public profile e-mail of GET /user (null when the user keeps theirs private). */
  email?: string | null
  emails: GitHubFakeEmail[]
}

/** An OAuth app as registered at GitHub: one callback URL. */
export interface GitHubFakeApp {
  clientId: string
  clientSecret: string
  callbackUrl: string
}

export interface GitHubFake {
  /** The Enterprise-Server-shaped base, http://127.0.0.1:PORT (what authd's --issuer takes). */
  url: string
  /** The REST API's base: `${url}/api/v3`. */
  apiUrl: string
  users: Map<number, GitHubFakeUser>
  setUser(user: GitHubFakeUser): void
  setApp(app: GitHubFakeApp): void
  /** 'error': every request answers 500; 'slow': answers after `slowMs`; 'hang': never answers. */
  mode: 'ok' | 'error' | 'slow' | 'hang'
  slowMs: number
  /** Every request, in order (e.g. to see that authd asked /user/emails, with which token). */
  requests: Array<{ method: string; path: string; authorization: string | null; accept: string | null }>
  close(): Promise<void>
}

const DOCS = 'https://docs.github.com'
const CODE_TTL_MS = 10 * 60_000 // "The temporary code will expire after 10 minutes."

interface PendingCode {
  clientId: string
  redirectUri: string
  scope: string
  userId: number
  codeChallenge: string | undefined
  expiresAt: number
}

export async function startGitHubFake(options: { app?: GitHubFakeApp; users?: GitHubFakeUser[] } = {}): Promise<GitHubFake> {
  const apps = new Map<string, GitHubFakeApp>()
  if (options.app) apps.set(options.app.clientId, options.app)
  const users = new Map((options.users ?? []).map((u) => [u.id, u]))
  const codes = new Map<string, PendingCode>()
  const tokens = new Map<string, { userId: number; scope: string }>()

  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(request): Promise<Response> {
      const url = new URL(request.url)
      fake.requests.push({ method: request.method, path: url.pathname, authorization: request.headers.get('authorization'), accept: request.headers.get('accept') })
      if (fake.mode === 'hang') return new Promise<Response>(() => {})
      if (fake.mode === 'slow') await Bun.sleep(fake.slowMs)
      if (fake.mode === 'error') return new Response('<h1>500 Internal Server Error</h1>', { status: 500, headers: { 'content-type': 'text/html' } })
      switch (`${request.method} ${url.pathname}`) {
        case 'GET /login/oauth/authorize':
          return authorize(url.searchParams, undefined)
        case 'POST /login/oauth/authorize':
          return authorize(new URLSearchParams(await request.text()), 'submitted')
        case 'POST /login/oauth/access_token':
          return accessToken(request, url)
        case 'GET /api/v3/user':
          return api(request, (user) => json(200, userJson(user)))
        case 'GET /api/v3/user/emails':
          return api(request, (user, scopes) =>
            scopes.has('user:email') || scopes.has('user')
              ? json(200, user.emails)
              : json(404, { message: 'Not Found', documentation_url: `${DOCS}/rest/users/emails#list-email-addresses-for-the-authenticated-user`, status: '404' }),
          )
        default:
          return json(404, { message: 'Not Found', documentation_url: `${DOCS}/rest`, status: '404' })
      }
    },
  })
  const base: string = server.url.origin

  /** The authorize page (GET) and its form (POST: the person's answer, the request's parameters
   *  carried in hidden fields and checked again). */
  function authorize(params: URLSearchParams, submitted: 'submitted' | undefined): Response {
    const app = apps.get(params.get('client_id') ?? '')
    // An unknown client_id: no callback to send the error to, so a page (a 404: the fake's choice).
    if (!app) return html(404, '<h1>Not Found</h1><p>No OAuth app with this client_id.</p>')
    const state = params.get('state')
    const back = (to: string, query: Record<string, string>) => {
      const target = new URL(to)
      for (const [k, v] of Object.entries(query)) target.searchParams.set(k, v)
      if (state !== null) target.searchParams.set('state', state)
      return Response.redirect(target.href, 302)
    }
    const redirectUri = params.get('redirect_uri') ?? app.callbackUrl
    if (!redirectUriAllowed(redirectUri, app.callbackUrl)) {
      // Documented: GitHub sends the error to the *registered* callback URL.
      return back(app.callbackUrl, {
        error: 'redirect_uri_mismatch',
        error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
        error_uri: `${DOCS}/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch`,
      })
    }
    const challenge = params.get('code_challenge') ?? undefined
    const method = params.get('code_challenge_method')
    // Documented: S256 only, "plain" is not supported. The answer (a 400 page) is the fake's.
    if ((challenge || method) && (method !== 'S256' || !challenge || !/^[\w-]{43}$/.test(challenge))) {
      return html(400, '<h1>Bad request</h1><p>code_challenge must be a 43-character S256 challenge and code_challenge_method S256.</p>')
    }
    if (!submitted) return authorizePage(app, params)
    const form = params
    if (form.get('action') === 'cancel') {
      return back(redirectUri, {
        error: 'access_denied',
        error_description: 'The user has denied your application access.',
        error_uri: `${DOCS}/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#access-denied`,
      })
    }
    const user = [...users.values()].find((u) => u.login === form.get('login'))
    if (!user) return authorizePage(app, params, `No user "${form.get('login') ?? ''}" at this fake.`)
    const code = randomBytes(10).toString('hex')
    codes.set(code, { clientId: app.clientId, redirectUri, scope: params.get('scope') ?? '', userId: user.id, codeChallenge: challenge, expiresAt: Date.now() + CODE_TTL_MS })
    return back(redirectUri, { code })
  }

  async function accessToken(request: Request, url: URL): Promise<Response> {
    // GitHub takes the parameters in the query string, a form body or a JSON body; the client's
    // credentials in them or in HTTP Basic.
    const params = new URLSearchParams(url.searchParams)
    const type = request.headers.get('content-type') ?? ''
    const body = await request.text()
    if (type.includes('application/json') && body) for (const [k, v] of Object.entries(JSON.parse(body))) params.set(k, String(v))
    else for (const [k, v] of new URLSearchParams(body)) params.set(k, v)
    const basic = /^basic (.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1]
    if (basic) {
      const decoded = Buffer.from(basic, 'base64').toString('utf8')
      const colon = decoded.indexOf(':')
      params.set('client_id', decodeURIComponent(decoded.slice(0, colon)))
      params.set('client_secret', decodeURIComponent(decoded.slice(colon + 1)))
    }
    const answer = (fields: Record<string, string>) => tokenAnswer(request, fields)
    const app = apps.get(params.get('client_id') ?? '')
    if (!app || params.get('client_secret') !== app.clientSecret) {
      return answer({
        error: 'incorrect_client_credentials',
        error_description: 'The client_id and/or client_secret passed are incorrect.',
        error_uri: `${DOCS}/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#incorrect-client-credentials`,
      })
    }
    const badCode = () =>
      answer({
        error: 'bad_verification_code',
        error_description: 'The code passed is incorrect or expired.',
        error_uri: `${DOCS}/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code`,
      })
    const code = params.get('code') ?? ''
    const pending = codes.get(code)
    if (!pending || pending.clientId !== app.clientId || pending.expiresAt < Date.now()) return badCode()
    const redirectUri = params.get('redirect_uri')
    if (redirectUri !== null && redirectUri !== pending.redirectUri) {
      return answer({
        error: 'redirect_uri_mismatch',
        error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
        error_uri: `${DOCS}/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#redirect-uri-mismatch2`,
      })
    }
    // A missing or wrong code_verifier: GitHub documents no error of its own; the fake answers as
    // for a bad code. The code is spent either way (one try, as a code should be).
    codes.delete(code)
    if (pending.codeChallenge !== undefined) {
      const verifier = params.get('code_verifier') ?? ''
      if (createHash('sha256').update(verifier).digest('base64url') !== pending.codeChallenge) return badCode()
    }
    const token = `gho_${randomBytes(18).toString('base64url')}`
    // GitHub lists granted scopes comma-separated.
    const scope = pending.scope.split(/[\s,]+/).filter(Boolean).join(',')
    tokens.set(token, { userId: pending.userId, scope })
    return answer({ access_token: token, token_type: 'bearer', scope })
  }

  /** The REST API's authentication: `Authorization: Bearer X` or `token X`. */
  function api(request: Request, handler: (user: GitHubFakeUser, scopes: Set<string>) => Response): Response {
    // api.github.com refuses requests without a User-Agent (403); so does the fake.
    if (!request.headers.get('user-agent')) {
      return new Response('Request forbidden by administrative rules. Please make sure your request has a User-Agent header.', { status: 403 })
    }
    const match = /^(?:bearer|token) (\S+)$/i.exec(request.headers.get('authorization') ?? '')
    if (!match) return json(401, { message: 'Requires authentication', documentation_url: `${DOCS}/rest`, status: '401' })
    const granted = tokens.get(match[1]!)
    const user = granted && users.get(granted.userId)
    if (!granted || !user) return json(401, { message: 'Bad credentials', documentation_url: `${DOCS}/rest`, status: '401' })
    const response = handler(user, new Set(granted.scope.split(',').filter(Boolean)))
    response.headers.set('x-oauth-scopes', granted.scope.split(',').join(', '))
    return response
  }

  function userJson(user: GitHubFakeUser): Record<string, unknown> {
    return {
      login: user.login,
      id: user.id,
      node_id: Buffer.from(`04:User${user.id}`).toString('base64'),
      avatar_url: `${base}/avatars/u/${user.id}`,
      html_url: `${base}/${user.login}`,
      type: 'User',
      site_admin: false,
      name: user.name ?? null,
      company: null,
      blog: '',
      location: null,
      email: user.email ?? null,
      hireable: null,
      bio: null,
      public_repos: 0,
      followers: 0,
      following: 0,
      created_at: '2020-01-01T00:00:00Z',
      updated_at: '2020-01-01T00:00:00Z',
    }
  }

  function authorizePage(app: GitHubFakeApp, params: URLSearchParams, error?: string): Response {
    const hidden = ['client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method']
      .filter((name) => params.get(name) !== null)
      .map((name) => `<input type="hidden" name="${name}" value="${escapeHtml(params.get(name)!)}">`)
      .join('\n')
    return html(
      200,
      `<h1>Authorize ${escapeHtml(app.clientId)} (GitHub fake)</h1>
<p>Scopes asked: ${escapeHtml(params.get('scope') ?? '(none)')}</p>
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/login/oauth/authorize">
${hidden}
<label for="login">Username</label>
<input id="login" name="login" autocomplete="username" value="${escapeHtml(params.get('login') ?? '')}" required autofocus>
<button type="submit" name="action" value="authorize">Authorize</button>
<button type="submit" name="action" value="cancel" formnovalidate>Cancel</button>
</form>`,
    )
  }

  const fake: GitHubFake = {
    url: base,
    apiUrl: `${base}/api/v3`,
    users,
    setUser: (user) => void users.set(user.id, user),
    setApp: (app) => void apps.set(app.clientId, app),
    mode: 'ok',
    slowMs: 5_000,
    requests: [],
    close: async () => {
      await server.stop(true)
    },
  }
  return fake
}

/** GitHub's documented rule ("Redirect URLs"): the callback URL's host (or a sub-domain of it) and
 *  port, and a path at or below the callback's path; with a loopback callback (127.0.0.1, ::1)
 *  any port. */
function redirectUriAllowed(redirectUri: string, callbackUrl: string): boolean {
  let given: URL
  let registered: URL
  try {
    given = new URL(redirectUri)
    registered = new URL(callbackUrl)
  } catch {
    return false
  }
  const loopback = ['127.0.0.1', '[::1]'].includes(registered.hostname)
  const path = registered.pathname.replace(/\/$/, '')
  return (
    given.protocol === registered.protocol &&
    (given.hostname === registered.hostname || given.hostname.endsWith(`.${registered.hostname}`)) &&
    (given.port === registered.port || loopback) &&
    (given.pathname === registered.pathname || given.pathname.startsWith(`${path}/`)) &&
    !given.pathname.split('/').includes('..')
  )
}

/** The token endpoint's answer: JSON when asked for (Accept: application/json), else GitHub's
 *  default, a form-encoded body. Always HTTP 200, errors included, as GitHub does. */
function tokenAnswer(request: Request, fields: Record<string, string>): Response {
  if ((request.headers.get('accept') ?? '').includes('application/json')) return json(200, fields)
  return new Response(new URLSearchParams(fields).toString(), { status: 200, headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' } })
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8' } })
}

function html(status: number, body: string): Response {
  return new Response(`<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>GitHub fake</title></head>\n<body>\n<main>\n${body}\n</main>\n</body>\n</html>`, {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
  })
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

function unescapeHtml(text: string): string {
  return text.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)))
}

/** A page's words, for an error message. */
function textOf(html: string): string {
  return unescapeHtml(html.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ').trim()
}

/**
 * Plays the person at the fake: loads the authorize page at `authorizeUrl`, authorizes as
 * `login` (or presses Cancel with `{ cancel: true }`), and returns the redirect to authd's
 * callback (code and state, or error) without following it. Throws with what the fake said if
 * it answers otherwise.
 */
export async function authorizeAtGitHubFake(authorizeUrl: string | URL, login: string, { cancel = false } = {}): Promise<string> {
  const url = new URL(authorizeUrl)
  const page = await fetch(url, { redirect: 'manual' })
  if (page.status >= 300 && page.status < 400) return new URL(page.headers.get('location')!, url).href
  const text = await page.text()
  if (page.status !== 200) throw new Error(`the GitHub fake answered ${page.status}: ${textOf(text).slice(0, 400)}`)
  const form = new URLSearchParams()
  for (const [, name, value] of text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.set(name!, unescapeHtml(value!))
  }
  form.set('login', login)
  form.set('action', cancel ? 'cancel' : 'authorize')
  const answer = await fetch(new URL('/login/oauth/authorize', url), { method: 'POST', redirect: 'manual', body: form })
  const location = answer.headers.get('location')
  if (answer.status === 302 && location) return new URL(location, url).href
  throw new Error(`the GitHub fake answered ${answer.status}: ${textOf(await answer.text()).slice(0, 400)}`)
}
