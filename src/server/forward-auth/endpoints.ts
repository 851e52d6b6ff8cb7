// Forward authentication's endpoints (product spec §24), one per proxy protocol, around the one
// decision of core/forward-auth/check.ts (any method is answered: nginx's subrequest keeps the
// original request's):
//   GET /t/{tenant}/authz/forward-auth   Caddy forward_auth, Traefik ForwardAuth: the original
//       request in X-Forwarded-Method/-Proto/-Host/-Uri; not signed in: 302 to the login page
//       for a browser's page (a GET or HEAD that accepts text/html), else 401
//   GET /t/{tenant}/authz/auth-request   nginx auth_request: the original request in
//       X-Original-URL and X-Original-Method; not signed in: 401 (nginx follows no redirect
//       there), with the login page's address in Location for nginx's error_page to use
// Allowed: 200 with the Remote-* headers, every one on every 200 so a proxy that copies them
// over the client's own always overwrites a forged one. Signed in but not allowed: 403. The
// original request's headers are believed only from AUTHD_TRUSTED_PROXIES: anyone else is
// refused (403), so nobody can ask about a URL of their choosing around the proxy.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { askedOf, checkAccess, type AccessAnswer } from '../../core/forward-auth/check'
import { tenantForChecks } from '../../core/forward-auth/rule-book'
import type { RequestAsked } from '../../core/forward-auth/rules'
import type { Tenant } from '../../core/types'
import { tenantPagesUrl } from '../../core/tenants/tenant-pages'
import { clientActor, fromTrustedProxy } from '../plugins/client-ip'
import type { CookieJar } from '../pages/cookies'
import { domainSessionToken } from '../pages/domain-cookie'
import type { Actor } from '../../core/audit/audit'

/** The checks' routes: a proxy asks one about every request it serves, so a passing answer is
 *  counted in the metrics, not logged (app.ts; the proxy logs the request itself). */
export const CHECK_ROUTES: ReadonlySet<string> = new Set(['/t/:tenant/authz/forward-auth', '/t/:tenant/authz/auth-request'])

const IDENTITY_HEADERS = ['remote-user', 'remote-email', 'remote-name', 'remote-groups', 'remote-user-id'] as const

interface CheckRequest {
  request: Request
  params: { tenant: string }
  cookie: CookieJar
  set: { status?: number | string; headers: Record<string, string | number> }
  actor: Actor
}

/** What a protocol reads of the original request: the URL it was for and its method. */
type Original = { url: URL; method: string } | { problem: string }

export const forwardAuthRoutes = (deps: Deps) => {
  const trusted = fromTrustedProxy(deps.config.trustedProxies)

  /** The shared part of both endpoints: trust, tenant, the request asked about, the decision. */
  async function check(ctx: CheckRequest, original: (headers: Headers) => Original): Promise<{ answer: AccessAnswer; url: URL; tenant: Tenant } | string> {
    if (!trusted(ctx.request)) return answer(ctx, 403, 'Forward authentication answers trusted proxies only (AUTHD_TRUSTED_PROXIES)')
    const tenant = await tenantForChecks(deps, ctx.params.tenant)
    if (!tenant) return answer(ctx, 404, 'No tenant here protects a domain with forward authentication')
    const read = original(ctx.request.headers)
    if ('problem' in read) return answer(ctx, 400, read.problem)
    const asked: RequestAsked | null = askedOf(read.url.host, read.url.pathname, read.method)
    if (!asked) return answer(ctx, 400, 'The original request has a path that does not decode')
    const credential = { sessionToken: domainSessionToken(deps, ctx.cookie, tenant), authorization: ctx.request.headers.get('authorization') }
    return { answer: await checkAccess(deps, tenant, asked, credential, ctx.actor), url: read.url, tenant }
  }

  return new Elysia({ prefix: '/t/:tenant/authz' })
    .use(clientActor(deps.config.trustedProxies))
    .all('/forward-auth', async (ctx: CheckRequest) => {
      const checked = await check(ctx, forwardedRequest)
      if (typeof checked === 'string') return checked
      const { answer: decided, url, tenant } = checked
      if (decided.outcome === 'allowed') return allowed(ctx, decided)
      if (decided.outcome === 'denied') return answer(ctx, 403, `You do not have access to ${url.host}`)
      const method = ctx.request.headers.get('x-forwarded-method')?.toUpperCase()
      const page = (method === 'GET' || method === 'HEAD') && (ctx.request.headers.get('accept') ?? '').includes('text/html')
      if (!page) return unauthenticated(ctx)
      ctx.set.status = 302
      ctx.set.headers.location = loginUrl(deps, tenant, url)
      return ''
    })
    .all('/auth-request', async (ctx: CheckRequest) => {
      const checked = await check(ctx, originalRequest)
      if (typeof checked === 'string') return checked
      const { answer: decided, url, tenant } = checked
      if (decided.outcome === 'allowed') return allowed(ctx, decided)
      if (decided.outcome === 'denied') return answer(ctx, 403, `You do not have access to ${url.host}`)
      // (nginx: `auth_request_set $login $upstream_http_location; error_page 401 =302 $login;`)
      ctx.set.headers.location = loginUrl(deps, tenant, url)
      return unauthenticated(ctx)
    })
}

/** Caddy's and Traefik's headers: X-Forwarded-Proto, -Host, -Uri and -Method. */
function forwardedRequest(headers: Headers): Original {
  const host = headers.get('x-forwarded-host')
  const uri = headers.get('x-forwarded-uri')
  const method = headers.get('x-forwarded-method')
  if (!host || !uri || !method) return { problem: 'A forward-auth check needs X-Forwarded-Host, X-Forwarded-Uri and X-Forwarded-Method from the proxy' }
  const proto = headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() || 'https'
  const authority = host.split(',')[0]!.trim()
  if (!AUTHORITY.test(authority)) return { problem: NO_HOST }
  return urlOf(`${proto}://${authority}${uri.startsWith('/') ? uri : `/${uri}`}`, method)
}

/** nginx's headers, as authd's snippet sets them: X-Original-URL and X-Original-Method. */
function originalRequest(headers: Headers): Original {
  const raw = headers.get('x-original-url')
  const method = headers.get('x-original-method')
  if (!raw || !method) return { problem: 'An auth-request check needs X-Original-URL and X-Original-Method from the proxy' }
  return urlOf(raw, method)
}

/**
 * The original URL, whose authority must be a host name or address with at most a port: a
 * URL parser reads `app.example.com:1@other.example.com` as the host other.example.com, where
 * the proxy may have routed by app.example.com (a client's Host header, copied into the URL by
 * a proxy, must not choose which host authd judges).
 */
const AUTHORITY = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

const NO_HOST = 'The original request names no host: a host name or address, with at most a port'

function urlOf(raw: string, method: string): Original {
  const parts = /^(https?):\/\/([^/?#\\]*)(.*)$/i.exec(raw)
  if (!parts) return { problem: 'The original request names no http(s) URL' }
  if (!AUTHORITY.test(parts[2]!)) return { problem: NO_HOST }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { problem: 'The original request names no URL' }
  }
  if (!/^[A-Za-z]{1,20}$/.test(method)) return { problem: 'The original request names no HTTP method' }
  return { url, method }
}

/** The login page, returning to the original URL once signed in. */
const loginUrl = (deps: Pick<Deps, 'config'>, tenant: Tenant, original: URL) => `${tenantPagesUrl(deps.config, tenant)}/login?return_to=${encodeURIComponent(original.href)}`

function allowed(ctx: CheckRequest, decided: Extract<AccessAnswer, { outcome: 'allowed' }>): string {
  const identity = decided.identity
  const user = identity?.user
  const values = {
    'remote-user': user?.email ?? '',
    'remote-email': user?.email ?? '',
    'remote-name': user ? `${user.firstName} ${user.lastName}`.trim() : '',
    'remote-groups': identity?.groups.join(',') ?? '',
    'remote-user-id': user?.id ?? '',
  } satisfies Record<(typeof IDENTITY_HEADERS)[number], string>
  // Header values travel as bytes: a name's UTF-8, each byte one character of the string.
  for (const [name, value] of Object.entries(values)) ctx.set.headers[name] = Buffer.from(value.replace(/[\u0000-\u001f\u007f]/g, ''), 'utf8').toString('latin1')
  ctx.set.status = 200
  return ''
}

function unauthenticated(ctx: CheckRequest): string {
  ctx.set.headers['www-authenticate'] = 'Bearer realm="authd"'
  return answer(ctx, 401, 'Sign in first')
}

function answer(ctx: CheckRequest, status: number, text: string): string {
  ctx.set.status = status
  ctx.set.headers['content-type'] = 'text/plain; charset=utf-8'
  return text
}
