// An upstream OpenID Provider for the tests of sign-in through upstream identity providers
// (§25): panva's oidc-provider, a certified OpenID Provider, on a real socket on 127.0.0.1 (plain
// http: authd accepts http issuers on loopback hosts only). It runs in the test process, under
// Bun: oidc-provider is Koa on node:http, which Bun serves. It prints "Unsupported runtime" once
// when imported under Bun; the flows the tests use (discovery, authorization with PKCE, token,
// userinfo, JWKS) work there.
//
// What the tests control: the accounts (claims, amr, groups) and the registered client (its
// redirect URIs may be set after authd has named its callback). The interaction page is ours,
// not oidc-provider's development views: one plain HTML form (a field `login`, a "Sign in" and a
// "Cancel" button), which a test drives over HTTP with signInAtUpstream / cancelAtUpstream or a
// browser fills in. There is no consent step: the test client is treated as first-party.
import { generateKeyPairSync } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Provider, type Adapter, type AdapterPayload, type ClientAuthMethod, type ClientMetadata, type Grant, type KoaContextWithOIDC } from 'oidc-provider'

/** An account at the upstream; its id is its subject (`sub`) and what the sign-in form asks. */
export interface UpstreamAccount {
  email?: string
  email_verified?: boolean
  name?: string
  given_name?: string
  family_name?: string
  preferred_username?: string
  /** Released with the scope `groups` (or always, with `groups: 'always'`). */
  groups?: string[]
  /** How the account "authenticated" at the upstream: the ID token's `amr` (e.g. ['pwd', 'mfa']).
   *  A property of the sign-in, not a claim of the account, so never in userinfo. */
  amr?: string[]
  /** Any other claim is kept but never released: only those above are in a scope here. */
  [claim: string]: unknown
}

/** The relying party (authd) as registered at the upstream: one confidential web client. */
export interface UpstreamClient {
  clientId: string
  clientSecret: string
  redirectUris: string[]
}

export interface OidcUpstreamOptions {
  client?: UpstreamClient
  accounts?: Record<string, UpstreamAccount>
  /** Client authentication methods the token endpoint accepts, as discovery then lists them.
   *  oidc-provider takes client_secret_basic and client_secret_post alike from a client
   *  registered with either, so by default both work; list one to refuse the other. */
  clientAuthMethods?: Array<'client_secret_basic' | 'client_secret_post'>
  /** true: the ID token carries only sub (and amr, nonce…), the profile and e-mail claims come
   *  from userinfo alone, as OpenID Connect Core says for the code flow (oidc-provider's default,
   *  `conformIdTokenClaims`). false (the default here): they are in the ID token too, as Google,
   *  Entra ID and GitLab put them. */
  claimsOnlyAtUserinfo?: boolean
  /** 'scope' (default): `groups` only when the scope `groups` is asked; 'always': with `openid`. */
  groups?: 'scope' | 'always'
}

export interface OidcUpstream {
  /** The issuer identifier, http://127.0.0.1:PORT (no trailing slash). */
  issuer: string
  /** The oidc-provider instance, for what the helpers here don't cover. */
  provider: Provider
  accounts: Map<string, UpstreamAccount>
  setAccount(sub: string, account: UpstreamAccount): void
  /** Registers (or replaces) the client; effective for the next request. */
  setClient(client: UpstreamClient): void
  /** 'down': every request answers 503; 'hang': no request is answered (close() ends them). */
  mode: 'ok' | 'down' | 'hang'
  /** Every request the upstream received, in order: to see what authd asked and how
   *  (e.g. how often it read discovery, whether it authenticated at /token with Basic). */
  requests: Array<{ method: string; path: string; query: URLSearchParams; basicAuth: boolean }>
  close(): Promise<void>
}

export async function startOidcUpstream(options: OidcUpstreamOptions = {}): Promise<OidcUpstream> {
  const accounts = new Map(Object.entries(options.accounts ?? {}))
  const clients = new Map<string, ClientMetadata>()
  const authMethods = options.clientAuthMethods ?? ['client_secret_basic', 'client_secret_post']
  const setClient = (client: UpstreamClient) =>
    clients.set(client.clientId, {
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uris: client.redirectUris,
      token_endpoint_auth_method: authMethods[0],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    })
  if (options.client) setClient(options.client)

  // The issuer names the port, so the socket is bound before the provider exists.
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end()
  const server = createServer((req, res) => handle(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const profile = ['name', 'given_name', 'family_name', 'preferred_username']
  const provider: Provider = new Provider(issuer, {
    adapter: memoryAdapter(clients),
    // (No cookies.keys, so the upstream's cookies are unsigned: signing loads tsscmp, whose
    // deprecated crypto.pseudoRandomBytes Bun warns about on every run.)

    // A signing key of this run's own (not oidc-provider's published development key).
    jwks: { keys: [{ ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'test-upstream', use: 'sig', alg: 'RS256' }] },
    clientAuthMethods: authMethods as ClientAuthMethod[],
    // amr rides with openid: in every ID token that has one (oidc-provider releases it only when
    // a scope or the claims parameter names it), as Entra ID and Okta send it.
    claims: {
      openid: ['sub', 'amr', ...(options.groups === 'always' ? ['groups'] : [])],
      email: ['email', 'email_verified'],
      profile,
      ...(options.groups === 'always' ? {} : { groups: ['groups'] }),
      acr: null,
      auth_time: null,
      sid: null,
      iss: null,
    },
    conformIdTokenClaims: options.claimsOnlyAtUserinfo ?? false,
    responseTypes: ['code'],
    features: { devInteractions: { enabled: false } },
    // An authorization request without code_challenge is refused, whatever the client.
    pkce: { required: () => true },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    // A plain page (the default one loads web fonts from the internet, which the tests don't reach).
    async renderError(ctx, out) {
      ctx.type = 'html'
      ctx.body = `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Test upstream: error</title></head>\n<body>\n<main>\n<h1>Test upstream: ${escapeHtml(String(out.error))}</h1>\n<p>${escapeHtml(String(out.error_description ?? ''))}</p>\n</main>\n</body>\n</html>`
    },
    async findAccount(_ctx, sub) {
      const account = accounts.get(sub)
      if (!account) return undefined
      return {
        accountId: sub,
        async claims() {
          const { amr: _amr, ...claims } = account
          return { ...claims, sub }
        },
      }
    },
    // The test client is first-party: whatever it asks is granted without a consent page.
    async loadExistingGrant(ctx: KoaContextWithOIDC): Promise<Grant | undefined> {
      const { oidc } = ctx
      if (!oidc.session?.accountId || !oidc.client) return undefined
      const grant = new provider.Grant({ accountId: oidc.session.accountId, clientId: oidc.client.clientId })
      grant.addOIDCScope([...oidc.requestParamOIDCScopes].join(' '))
      if (oidc.requestParamClaims.size) grant.addOIDCClaims([...oidc.requestParamClaims])
      await grant.save()
      return grant
    },
  })
  const callback = provider.callback()

  const upstream: OidcUpstream = {
    issuer,
    provider,
    accounts,
    setAccount: (sub, account) => void accounts.set(sub, account),
    setClient,
    mode: 'ok',
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }

  handle = (req, res) => {
    const url = new URL(req.url ?? '/', issuer)
    upstream.requests.push({ method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, basicAuth: /^basic /i.test(req.headers.authorization ?? '') })
    if (upstream.mode === 'hang') return
    if (upstream.mode === 'down') return void res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream down for the test')
    const interaction = /^\/interaction\/([\w-]+)$/.exec(url.pathname)
    if (!interaction) return void callback(req, res)
    interact(provider, accounts, req, res).catch((error) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`test upstream interaction failed: ${error}`)
    })
  }
  return upstream
}

/** The upstream's sign-in page: GET shows the form, POST signs in or cancels. */
async function interact(provider: Provider, accounts: Map<string, UpstreamAccount>, req: IncomingMessage, res: ServerResponse) {
  const details = await provider.interactionDetails(req, res)
  const clientId = String(details.params.client_id)
  // Only an explicit prompt=consent gets here with a session: granted at once (first-party).
  if (details.prompt.name === 'consent') {
    const grant = new provider.Grant({ accountId: details.session!.accountId, clientId })
    grant.addOIDCScope(String(details.params.scope ?? 'openid'))
    return provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true })
  }
  if (req.method === 'POST') {
    const form = new URLSearchParams(await readBody(req))
    if (form.get('action') === 'cancel') {
      return provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'End-User aborted interaction' }, { mergeWithLastSubmission: false })
    }
    const login = form.get('login') ?? ''
    const account = accounts.get(login)
    if (account) {
      return provider.interactionFinished(req, res, { login: { accountId: login, ...(account.amr ? { amr: account.amr } : {}) } }, { mergeWithLastSubmission: false })
    }
    return page(res, details.uid, clientId, String(details.params.scope ?? ''), `No account "${login}" at this upstream.`)
  }
  return page(res, details.uid, clientId, String(details.params.scope ?? ''))
}

function page(res: ServerResponse, uid: string, clientId: string, scope: string, error?: string) {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in at the test upstream</title></head>
<body>
<main>
<h1>Test upstream (oidc-provider)</h1>
<p>The application <code>${escapeHtml(clientId)}</code> asks you to sign in (scope: ${escapeHtml(scope)}).</p>
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/interaction/${escapeHtml(uid)}">
<label for="login">Account</label>
<input id="login" name="login" autocomplete="username" required autofocus>
<button type="submit" name="action" value="login">Sign in</button>
<button type="submit" name="action" value="cancel" formnovalidate>Cancel</button>
</form>
</main>
</body>
</html>`
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html)
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

function unescapeHtml(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"' }
  return text.replace(/&(#\d+|amp|lt|gt|quot);/g, (_, entity: string) => (entity.startsWith('#') ? String.fromCharCode(Number(entity.slice(1))) : named[entity]!))
}

/** A page's words, for an error message. */
function textOf(html: string): string {
  return unescapeHtml(html.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ').trim()
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

/** The models whose records are the tokens of a grant (as oidc-provider's own memory adapter has them). */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode'])

/**
 * oidc-provider's storage, in memory and per upstream (its bundled memory adapter is one store for
 * the whole process, and says so with a warning). Clients are read from `clients`, so the test can
 * register or change one while the upstream runs (oidc-provider re-reads an adapter's client
 * whenever its metadata changed).
 */
function memoryAdapter(clients: Map<string, ClientMetadata>) {
  const store = new Map<string, { payload: AdapterPayload; expiresAt: number }>()
  const live = (key: string) => {
    const entry = store.get(key)
    if (entry && entry.expiresAt <= Date.now()) store.delete(key)
    return store.get(key)?.payload
  }
  return class MemoryAdapter implements Adapter {
    constructor(private readonly model: string) {}
    private key(id: string) {
      return `${this.model}:${id}`
    }
    async upsert(id: string, payload: AdapterPayload, expiresIn?: number) {
      store.set(this.key(id), { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity })
    }
    async find(id: string) {
      if (this.model === 'Client') return clients.get(id) as AdapterPayload | undefined
      return live(this.key(id))
    }
    async findByUid(uid: string) {
      for (const key of store.keys()) {
        const payload = key.startsWith(`${this.model}:`) ? live(key) : undefined
        if (payload?.uid === uid) return payload
      }
      return undefined
    }
    async findByUserCode(userCode: string) {
      for (const key of store.keys()) {
        const payload = key.startsWith(`${this.model}:`) ? live(key) : undefined
        if (payload?.userCode === userCode) return payload
      }
      return undefined
    }
    async consume(id: string) {
      const payload = live(this.key(id))
      if (payload) payload.consumed = Math.floor(Date.now() / 1000)
    }
    async destroy(id: string) {
      store.delete(this.key(id))
    }
    /** Revokes the tokens of a grant; other records naming it (an interaction) stay. */
    async revokeByGrantId(grantId: string) {
      for (const [key, { payload }] of store) {
        if (payload.grantId === grantId && GRANTABLE.has(key.slice(0, key.indexOf(':')))) store.delete(key)
      }
    }
  }
}

/** Cookies of one user agent at one upstream (all of its cookies go to every path of it: their
 *  names differ, so that is harmless). */
export class CookieJar {
  private readonly cookies = new Map<string, string>()
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }
  store(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq).trim()
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=.*1970/i.test(a))
      if (expired) this.cookies.delete(name)
      else this.cookies.set(name, pair.slice(eq + 1).trim())
    }
  }
}

/**
 * Plays the person at the upstream: follows the redirects from `authorizationUrl` (the upstream's
 * authorization endpoint, with the query authd built), signs in as `accountId` on the form, and
 * returns the first redirect that leaves the upstream (authd's callback, with code, state and
 * iss, or error) without following it. With a `jar` that already holds a session at the upstream,
 * the upstream answers at once, as a real one does, and `accountId` is not asked.
 * Throws if the upstream answers anything else (an error page, the form again for an unknown
 * account), with what it said.
 */
export function signInAtUpstream(authorizationUrl: string | URL, accountId: string, jar = new CookieJar()): Promise<string> {
  return drive(authorizationUrl, new URLSearchParams({ login: accountId, action: 'login' }), jar)
}

/** As signInAtUpstream, but presses "Cancel": the redirect carries error=access_denied. */
export function cancelAtUpstream(authorizationUrl: string | URL, jar = new CookieJar()): Promise<string> {
  return drive(authorizationUrl, new URLSearchParams({ action: 'cancel' }), jar)
}

async function drive(authorizationUrl: string | URL, submission: URLSearchParams, jar: CookieJar): Promise<string> {
  let url = new URL(authorizationUrl)
  const origin = url.origin
  let body: URLSearchParams | undefined
  let submitted = false
  for (let step = 0; step < 10; step++) {
    const response = await fetch(url, {
      method: body ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body,
    })
    jar.store(response)
    body = undefined
    const at = url.pathname
    const location = response.headers.get('location')
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel()
      const next = new URL(location, url)
      if (next.origin !== origin) return next.href
      url = next
      continue
    }
    const text = await response.text()
    const action = /<form method="post" action="([^"]+)"/.exec(text)?.[1]
    if (response.status === 200 && action) {
      url = new URL(unescapeHtml(action), url)
      if (text.includes('name="login"')) {
        // Our sign-in form; shown again after a submission, it refused the account.
        if (!submitted) {
          body = submission
          submitted = true
          continue
        }
      } else {
        // One of oidc-provider's self-submitting forms (signing another account in ends the
        // session of the one before): a browser's script would post it as it is.
        body = new URLSearchParams([...text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map(([, name, value]): [string, string] => [name!, unescapeHtml(value!)]))
        continue
      }
    }
    throw new Error(`the upstream answered ${response.status} at ${at}: ${textOf(text).slice(0, 400)}`)
  }
  throw new Error('the upstream redirected more than 10 times')
}
