// What every page handler starts with: the tenant its URL names, the reader's language, the
// browser's page session (if signed in), the nonce and the anti-forgery token of this answer;
// and, for a form sent, the checks that it came from authd's own page. Then one of render()
// or redirect() answers. Handlers stay as thin as the API's routes: read the form, call the
// domain function, draw the answer.
import type { Context } from 'elysia'
import type { Actor } from '../../core/audit/audit'
import type { Deps } from '../../core/deps'
import { AppError, notFound } from '../../core/errors'
import { randomToken } from '../../core/secrets'
import { authenticateSessionToken, type Caller } from '../../core/sessions/signed-in-user'
import { findTenantForPages, isPlainHost, returnToOriginsOf } from '../../core/tenants/tenant-pages'
import { forwardAuthDomainsOf } from '../../core/forward-auth/domains'
import type { Tenant } from '../../core/types'
import type { IdentityProvider } from '../../core/federation/types'
import { upstreamOrigins } from '../../core/federation/upstream'
import { oidcFormTargets } from '../oidc/form-targets'
import { formValue } from './forms'
import { pageCookieNames, readCookie, setCookie, type CookieJar, type PageCookieNames } from './cookies'
import type { SafeHtml } from './html'
import { layout, logoSource } from './layout'
import { pageSessionToken } from './page-session'
import { contentSecurityPolicy, formToken, newNonce, requireFormToken, requireSameOrigin, securityHeaders } from './security'
import { chooseLanguage, translator, type Translate } from './strings'

/** Every page of a tenant is under it; `:tenant` is its slug or its id. */
export const PAGE_PREFIX = '/t/:tenant'

/** The parts of Elysia's context a page reads. */
export interface PageRequest {
  request: Request
  params: { tenant: string }
  cookie: CookieJar
  set: Context['set']
  actor: Actor
  body?: unknown
  query?: Record<string, string | undefined>
}

export interface Page {
  tenant: Tenant
  /** `/t/{tenant}` as the URL wrote it: links to the tenant's other pages. */
  base: string
  t: Translate
  actor: Actor
  /** The signed-in user of this browser, if any. */
  caller: Caller | null
  cookies: PageCookieNames
  jar: CookieJar
  /** This answer's anti-forgery token, for its forms. */
  token: string
  /** This answer's CSP nonce, for a script of its own. */
  nonce: string
  render(title: string, main: SafeHtml, options?: { status?: number; retryAfter?: number; referrerPolicy?: 'no-referrer'; wide?: boolean; nav?: SafeHtml }): string
  redirect(location: string): string
  /** Where a sign-in's return_to may send the browser: authd's own origin and those the
   *  operator registered for the tenant (never one a tenant admin key sets). */
  returnToOrigins: string[]
  /** The pages' CSP form-action: returnToOrigins, and where an OpenID answer goes next (a
   *  client's redirect URIs: targets of the redirects after a form, never of return_to). */
  returnOrigins: string[]
  /** The tenant's forward-auth domains: return_to may lead to any URL on them (core/forward-auth/domains.ts). */
  protectedDomains: string[]
  /** AUTHD_PUBLIC_URL's origin. */
  origin: string
  /** AUTHD_PUBLIC_URL. */
  publicUrl: string
  /** The tenant's upstream providers, for "Continue with {name}" (core/federation). */
  providers: ProviderButton[]
  /** The sign-in flow of an upstream identity that waits for this sign-in to link it (`link_flow`,
   *  carried by the login page's forms from the page that asked for it; '' for none). */
  linkFlow: string
}

export type ProviderButton = Pick<IdentityProvider, 'id' | 'name' | 'type'>

/**
 * @param form true for a POST: refused (403) unless it came from authd's own page with this
 *   browser's token
 */
export async function openPage(deps: Deps, ctx: PageRequest, form = false): Promise<Page> {
  const tenant = await findTenantForPages(deps, ctx.params.tenant)
  if (!tenant) throw notFound()
  const cookies = pageCookieNames(deps.config)
  const jar = ctx.cookie
  const caller = await signedIn(deps, jar, cookies, tenant)
  let formCookie = readCookie(jar, cookies.form)
  if (form) {
    requireSameOrigin(deps.config, ctx.request)
    requireFormToken(deps.serverKeys.hmac, formCookie, caller?.sessionId ?? null, (ctx.body as Record<string, unknown> | undefined)?._form)
  }
  if (!formCookie) {
    formCookie = randomToken(32)
    setCookie(jar, cookies, cookies.form, formCookie)
  }
  const t = translator(chooseLanguage(ctx.request.headers.get('accept-language')))
  const base = `/t/${encodeURIComponent(ctx.params.tenant)}`
  const nonce = newNonce()
  const origin = new URL(deps.config.publicUrl).origin
  // The operator's list (`authd tenants update --return-to-origin`), not the passkey origins:
  // those are the tenant admin key's to set, and would make authd its redirector.
  const returnToOrigins = [...new Set([origin, ...returnToOriginsOf(tenant)])]
  // A sign-in on its way back to an OpenID client: the client's redirect URIs too (server/oidc).
  const protectedDomains = forwardAuthDomainsOf(tenant)
  const providers = await deps.store.providers.list(tenant.id)
  // (linking on the account page is a form whose answer sends the browser to the upstream)
  const returnOrigins = [
    ...returnToOrigins,
    ...protectedSources(protectedDomains, deps.config.publicUrl),
    ...(await oidcFormTargets(deps, tenant, origin, ctx.query?.return_to ?? formValue(ctx.body, 'return_to'))),
    ...upstreamOrigins(deps, providers),
  ]
  const page: Page = {
    tenant,
    base,
    t,
    actor: ctx.actor,
    caller,
    cookies,
    jar,
    token: formToken(deps.serverKeys.hmac, formCookie, caller?.sessionId ?? null),
    nonce,
    returnToOrigins,
    returnOrigins,
    protectedDomains,
    origin,
    publicUrl: deps.config.publicUrl,
    providers: providers.map(({ id, name, type }) => ({ id, name, type })),
    linkFlow: /^[0-9a-f-]{36}$/.test(formValue(ctx.body, 'link_flow')) ? formValue(ctx.body, 'link_flow') : '',
    render(title, main, options = {}) {
      const logo = logoSource(tenant, base)
      // (a URL stored before hosts were checked is drawn, but its host is no CSP source)
      const logoUrl = logo?.startsWith('https:') ? new URL(logo) : null
      const logoOrigin = logoUrl && isPlainHost(logoUrl) ? [logoUrl.origin] : []
      Object.assign(ctx.set.headers, securityHeaders(contentSecurityPolicy(nonce, logoOrigin, page.returnOrigins), options.referrerPolicy ?? 'same-origin'))
      if (options.retryAfter !== undefined) ctx.set.headers['retry-after'] = String(options.retryAfter)
      ctx.set.status = options.status ?? 200
      return layout({ tenant, base, t, nonce }, title, main, { wide: options.wide, nav: options.nav })
    },
    redirect(location) {
      ctx.set.status = 303
      ctx.set.headers.location = location
      return ''
    },
  }
  return page
}

/** CSP sources for every host of the tenant's forward-auth domains, on any port: a sign-in's
 *  redirect may lead back to any of their applications. */
function protectedSources(domains: string[], publicUrl: string): string[] {
  const schemes = publicUrl.startsWith('http:') ? ['https', 'http'] : ['https']
  return schemes.flatMap((scheme) => domains.flatMap((domain) => [`${scheme}://${domain}:*`, `${scheme}://*.${domain}:*`]))
}

/** The browser's page session, if it is live and this tenant's. (A cookie that is not is
 *  left alone: it may be another tenant's session, and signing in replaces it anyway.) */
async function signedIn(deps: Deps, jar: CookieJar, cookies: PageCookieNames, tenant: Tenant): Promise<Caller | null> {
  const token = pageSessionToken(deps, jar, cookies)
  if (!token) return null
  try {
    return await authenticateSessionToken(deps, token, tenant.id)
  } catch (error) {
    if (error instanceof AppError && error.code === 'unauthorized') return null
    throw error
  }
}
