// The OpenID Provider as a relying party meets it: openid-client (panva's certified RP library)
// over a real socket, and a cookie-keeping user agent that signs in through authd's pages as a
// browser without JavaScript would (the Chromium test drives a real one).
import * as oidc from 'openid-client'
import type { Config } from '../src/config'
import { createClient } from '../src/core/oidc/clients'
import { startServer, type RunningServer } from '../src/server/serve'
import { silentLogger } from '../src/log'
import { createTestContext, PASSWORD, type TestContext } from './helpers'
import { formOn } from './pages'

export const CALLBACK = 'http://127.0.0.1:9/callback'

export interface OidcWorld {
  ctx: TestContext
  server: RunningServer
  issuer: string
  close(): Promise<void>
}

/** A free port, so that AUTHD_PUBLIC_URL (the issuer's base) is the address the server listens on. */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

/** @param env more of the environment (a limit set low, say) */
export async function startOidcWorld(configOverrides: Partial<Config> = {}, env: Record<string, string> = {}): Promise<OidcWorld> {
  const port = freePort()
  const ctx = await createTestContext({ ...env, AUTHD_PORT: String(port), AUTHD_HOST: '127.0.0.1', AUTHD_PUBLIC_URL: `http://127.0.0.1:${port}` }, configOverrides)
  const server = await startServer(ctx.runtime, silentLogger)
  return {
    ctx,
    server,
    issuer: `http://127.0.0.1:${port}/t/${ctx.tenantId}`,
    async close() {
      await server.stop()
      await ctx.close()
    },
  }
}

/** A registered client and openid-client's Configuration for it (discovery over HTTP). */
export async function relyingParty(world: OidcWorld, options: { public?: boolean; firstParty?: boolean; auth?: 'basic' | 'post'; tenantId?: string; issuer?: string; idTokenAlg?: 'RS256' | 'ES256'; metadata?: Partial<oidc.ClientMetadata> } = {}) {
  const { client, clientSecret } = await createClient(world.ctx.runtime, options.tenantId ?? world.ctx.tenantId, {
    name: 'Wiki',
    redirectUris: [CALLBACK],
    postLogoutRedirectUris: ['http://127.0.0.1:9/signed-out'],
    public: options.public ?? false,
    firstParty: options.firstParty ?? true,
    idTokenAlg: options.idTokenAlg,
  })
  const auth = clientSecret === null ? oidc.None() : options.auth === 'post' ? oidc.ClientSecretPost(clientSecret) : oidc.ClientSecretBasic(clientSecret)
  const config = await oidc.discovery(new URL(options.issuer ?? world.issuer), client.id, options.metadata, auth, { execute: [oidc.allowInsecureRequests] })
  return { client, clientSecret, config }
}

/** A browser without JavaScript over the real socket: keeps cookies, follows nothing by itself. */
export class UserAgent {
  readonly cookies = new Map<string, string>()
  /**
   * @param origin where requests go (relative locations resolve against it)
   * @param publicOrigin the Origin its forms carry: AUTHD_PUBLIC_URL's, as a browser behind a
   *   load balancer would send (default: `origin`)
   */
  constructor(
    readonly origin: string,
    readonly publicOrigin = origin,
    /** How requests go out: over the socket, or into an app's handler (test/query-plans.test.ts). */
    private readonly fetcher: (request: Request) => Promise<Response> = fetch,
  ) {}

  /** @param init.headers more request headers (an X-Forwarded-For, where a trusted proxy is configured) */
  async send(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...init.headers }
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ')
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      headers.origin = this.publicOrigin
    }
    const response = await this.fetcher(new Request(new URL(url, this.origin).href, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body: init.form && new URLSearchParams(init.form).toString(), redirect: 'manual' }))
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';')
      const [name = '', value = ''] = pair.split('=')
      if (value === '' || /max-age=0\b/i.test(cookie)) this.cookies.delete(name.trim())
      else this.cookies.set(name.trim(), value)
    }
    return { status: response.status, location: response.headers.get('location'), html: await response.text(), headers: response.headers }
  }

  /** Follows redirects on authd's own origin (or its public one); stops at the first answer that is a page, or leaves authd. */
  async follow(url: string, init: { form?: Record<string, string> } = {}) {
    let answer = await this.send(url, init)
    for (;;) {
      const next = answer.location === null ? null : new URL(answer.location, this.origin)
      if (!next || (next.origin !== this.origin && next.origin !== new URL(this.publicOrigin).origin)) return answer
      answer = await this.send(next.pathname + next.search)
    }
  }

  /** Signs in on the login page the flow stopped at; returns where authd sends the browser next. */
  async signIn(loginPage: { html: string }, email: string, password = PASSWORD) {
    const form = formOn(loginPage.html, '/login')
    return this.follow(form.action, { form: { ...form.hidden, email, password } })
  }
}

/** A fresh authorization request: its URL and the checks openid-client needs for the answer. */
export async function authorizationRequest(config: oidc.Configuration, extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const nonce = oidc.randomNonce()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope: 'openid profile email offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  })
  return { url, verifier, state, nonce }
}

/** A relying party of authd in a Bun server of its own, for the browser journeys: /start sends
 *  the browser to authd's authorize endpoint, /callback redeems the code with openid-client and
 *  greets the user with the ID token's name, address and amr. */
export async function startBrowserRelyingParty(world: OidcWorld, client: { name: string; firstParty: boolean; allowedGroups?: string[] }): Promise<{ base: string; stop(): void }> {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => handle(request) })
  const base = `http://127.0.0.1:${server.port}`
  const { client: registered, clientSecret } = await createClient(world.ctx.runtime, world.ctx.tenantId, { ...client, redirectUris: [`${base}/callback`] })
  const config = await oidc.discovery(new URL(world.issuer), registered.id, undefined, oidc.ClientSecretBasic(clientSecret!), { execute: [oidc.allowInsecureRequests] })
  const pending = new Map<string, { verifier: string; nonce: string }>()
  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url)
    if (url.pathname === '/start') {
      const verifier = oidc.randomPKCECodeVerifier()
      const state = oidc.randomState()
      const nonce = oidc.randomNonce()
      pending.set(state, { verifier, nonce })
      const target = oidc.buildAuthorizationUrl(config, { redirect_uri: `${base}/callback`, scope: 'openid profile email', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce })
      return Response.redirect(target.href, 302)
    }
    const state = url.searchParams.get('state') ?? ''
    const checks = pending.get(state)
    if (!checks) return new Response('unknown state', { status: 400 })
    pending.delete(state)
    const tokens = await oidc.authorizationCodeGrant(config, url, { pkceCodeVerifier: checks.verifier, expectedState: state, expectedNonce: checks.nonce, idTokenExpected: true })
    const claims = tokens.claims()!
    return new Response(`<!doctype html><html lang="en"><title>App</title><h1>Hello ${claims.name} (${claims.email})</h1><p id="amr">${(claims.amr as string[]).join(' ')}</p></html>`, { headers: { 'content-type': 'text/html' } })
  }
  return { base, stop: () => server.stop(true) }
}
