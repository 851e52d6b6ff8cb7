// The protocol with an upstream provider (product spec §25), through openid-client: discovery,
// the authorization URL (PKCE S256, state, nonce), and the callback's checks (state, RFC 9207
// `iss`, the code exchanged, the ID token's signature from the upstream's JWKS, iss, aud, azp,
// nonce, exp). Nothing here reads a JWT by hand. GitHub speaks OAuth 2.0 without an ID token:
// its answer is the user and e-mail API, read with the access token the exchange gave.
import * as oidc from 'openid-client'
import type { Clock } from '../clock'
import type { Deps } from '../deps'
import type { IdentityProvider, UpstreamProfile } from './types'
import { UpstreamFailure } from './upstream-failure'
import { upstreamFetch } from './upstream-fetch'
import type { FederationSettings } from '../../config'

/** An upstream's discovery document is re-read at most this often (§25). */
export const DISCOVERY_TTL_MS = 10 * 60_000
/**
 * Every OpenID sign-in asks max_age (30 days), which obliges the upstream to say when the person
 * last signed in there (auth_time): a session the upstream starts silently from an old sign-in
 * of its own is no fresh proof of who they are (step-up, §18), and the session's auth time says so.
 */
const UPSTREAM_MAX_AGE_SEC = 30 * 86_400
/** How long authd waits for any answer of an upstream before it says it is unreachable. */
const UPSTREAM_TIMEOUT_SEC = 10

export interface UpstreamChecks {
  state: string
  nonce: string
  codeVerifier: string
  /** A fresh sign-in at the upstream is asked for (prompt=login, max_age=0) and its auth_time checked. */
  fresh?: boolean
}

/** GitHub's web and API hosts: github.com's, or those of a GitHub Enterprise Server at `issuer`. */
function githubHosts(provider: Pick<IdentityProvider, 'issuer'>) {
  return provider.issuer === null ? { web: 'https://github.com', api: 'https://api.github.com' } : { web: provider.issuer, api: `${provider.issuer}/api/v3` }
}

const isOpenIdConnect = (provider: Pick<IdentityProvider, 'type'>) => provider.type !== 'github'
const insecure = (url: string) => url.startsWith('http:')

/** A provider whose discovery failed is not asked again for this long: a start that fails costs the upstream (and authd) one request, not one per visitor. */
const FAILED_DISCOVERY_HOLD_MS = 30_000

export class Upstreams {
  readonly #configurations = new Map<string, { configuration: oidc.Configuration; authorizationEndpoint: string | undefined; readAt: number; version: number }>()
  readonly #failures = new Map<string, { failure: UpstreamFailure; at: number; version: number }>()
  readonly #fetch: ReturnType<typeof upstreamFetch>

  constructor(
    private readonly clock: Clock,
    settings: FederationSettings,
  ) {
    this.#fetch = upstreamFetch(settings)
  }

  /** The provider's client configuration: from the issuer's discovery document (cached), or GitHub's fixed endpoints. */
  async configurationOf(provider: IdentityProvider, clientSecret: string): Promise<oidc.Configuration> {
    const now = this.clock.now()
    const cached = this.#configurations.get(provider.id)
    if (cached && cached.version === provider.updatedAt && now - cached.readAt < DISCOVERY_TTL_MS) return cached.configuration
    const failed = this.#failures.get(provider.id)
    if (failed && failed.version === provider.updatedAt && now - failed.at < FAILED_DISCOVERY_HOLD_MS) throw failed.failure
    let configuration: oidc.Configuration
    try {
      configuration = await upstreamCall(() => (isOpenIdConnect(provider) ? discover(provider, clientSecret, this.#fetch) : githubConfiguration(provider, clientSecret, this.#fetch)))
    } catch (error) {
      if (error instanceof UpstreamFailure) this.#failures.set(provider.id, { failure: error, at: now, version: provider.updatedAt })
      throw error
    }
    this.#failures.delete(provider.id)
    configuration.timeout = UPSTREAM_TIMEOUT_SEC
    this.#configurations.set(provider.id, { configuration, authorizationEndpoint: configuration.serverMetadata().authorization_endpoint, readAt: now, version: provider.updatedAt })
    return configuration
  }

  /** The authorization endpoint of the configuration held for the provider, if one is. */
  authorizationEndpointOf(providerId: string): string | undefined {
    return this.#configurations.get(providerId)?.authorizationEndpoint
  }

  /** Where the browser goes to sign in at the upstream. */
  async authorizationUrl(provider: IdentityProvider, clientSecret: string, redirectUri: string, checks: UpstreamChecks): Promise<string> {
    const configuration = await this.configurationOf(provider, clientSecret)
    const parameters: Record<string, string> = {
      redirect_uri: redirectUri,
      scope: provider.scopes,
      state: checks.state,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    }
    if (isOpenIdConnect(provider)) Object.assign(parameters, { nonce: checks.nonce, max_age: checks.fresh ? '0' : String(UPSTREAM_MAX_AGE_SEC), ...(checks.fresh && { prompt: 'login' }) })
    return oidc.buildAuthorizationUrl(configuration, parameters).href
  }

  /**
   * The callback: checks the answer against the flow and exchanges the code, then reads who the
   * person is. `query` is the callback's query string as the browser sent it.
   */
  async complete(provider: IdentityProvider, clientSecret: string, redirectUri: string, query: URLSearchParams, checks: UpstreamChecks): Promise<UpstreamProfile> {
    const configuration = await this.configurationOf(provider, clientSecret)
    // (openid-client sends this URL without its query as the exchange's redirect_uri)
    const currentUrl = new URL(redirectUri)
    for (const [name, value] of query) currentUrl.searchParams.append(name, value)
    const tokens = await upstreamCall(() =>
      oidc.authorizationCodeGrant(
        configuration,
        currentUrl,
        isOpenIdConnect(provider)
          ? { expectedState: checks.state, expectedNonce: checks.nonce, pkceCodeVerifier: checks.codeVerifier, idTokenExpected: true, maxAge: checks.fresh ? 0 : UPSTREAM_MAX_AGE_SEC }
          : { expectedState: checks.state, pkceCodeVerifier: checks.codeVerifier },
      ),
    )
    if (!isOpenIdConnect(provider)) return upstreamCall(() => githubProfile(provider, tokens.access_token, this.#fetch))
    const claims = tokens.claims()!
    // An ID token may leave the address and the groups to userinfo (oidc-provider does unless told
    // otherwise): asked only then, for the ID token's own subject.
    const wanted = [provider.groupsClaim, 'email'].filter((name): name is string => name !== null)
    const userinfo =
      wanted.some((name) => claims[name] === undefined) && configuration.serverMetadata().userinfo_endpoint
        ? await upstreamCall(() => oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub))
        : {}
    return profileOf(provider, { ...userinfo, ...claims })
  }
}

const byStore = new WeakMap<Deps['store'], Upstreams>()

/** The upstreams' configurations this process holds for a store (a process may open several: the tests do). */
export function upstreamsOf(deps: Pick<Deps, 'store' | 'clock' | 'config'>): Upstreams {
  let upstreams = byStore.get(deps.store)
  if (!upstreams) byStore.set(deps.store, (upstreams = new Upstreams(deps.clock, deps.config.federation)))
  return upstreams
}

/**
 * The origins a browser is sent to when it signs in at these providers: the issuer's (the
 * authorization endpoint's, where the discovery this process holds says otherwise), for the
 * pages' CSP form-action.
 */
export function upstreamOrigins(deps: Pick<Deps, 'store' | 'clock' | 'config'>, providers: IdentityProvider[]): string[] {
  const held = upstreamsOf(deps)
  return [
    ...new Set(
      providers.flatMap((provider) => {
        const origins = [new URL(provider.type === 'github' ? githubHosts(provider).web : provider.issuer!).origin]
        const endpoint = held.authorizationEndpointOf(provider.id)
        if (endpoint) origins.push(new URL(endpoint).origin)
        return origins
      }),
    ),
  ]
}

type Fetch = ReturnType<typeof upstreamFetch>

async function discover(provider: IdentityProvider, clientSecret: string, guarded: Fetch): Promise<oidc.Configuration> {
  const issuer = new URL(provider.issuer!)
  const options = { ...(insecure(issuer.href) && { execute: [oidc.allowInsecureRequests] }), timeout: UPSTREAM_TIMEOUT_SEC, [oidc.customFetch]: guarded }
  // client_secret_basic is OpenID Connect's default; an upstream that lists methods without it gets the secret in the body.
  const probe = await oidc.discovery(issuer, provider.clientId, undefined, oidc.None(), options)
  const methods = probe.serverMetadata().token_endpoint_auth_methods_supported
  const authentication = !methods || methods.includes('client_secret_basic') ? oidc.ClientSecretBasic(clientSecret) : oidc.ClientSecretPost(clientSecret)
  const configuration = new oidc.Configuration(probe.serverMetadata(), provider.clientId, clientSecret, authentication)
  if (insecure(issuer.href)) oidc.allowInsecureRequests(configuration)
  configuration[oidc.customFetch] = guarded
  return configuration
}

async function githubConfiguration(provider: IdentityProvider, clientSecret: string, guarded: Fetch): Promise<oidc.Configuration> {
  const { web } = githubHosts(provider)
  const configuration = new oidc.Configuration(
    { issuer: web, authorization_endpoint: `${web}/login/oauth/authorize`, token_endpoint: `${web}/login/oauth/access_token` },
    provider.clientId,
    clientSecret,
    oidc.ClientSecretPost(clientSecret),
  )
  if (insecure(web)) oidc.allowInsecureRequests(configuration)
  // GitHub answers a refused exchange with 200 and an `error` (its documented behaviour), which
  // openid-client would take for a token response without a token: made the 400 it means.
  configuration[oidc.customFetch] = async (input, init) => {
    const response = await guarded(input, init as RequestInit)
    if (response.status !== 200 || !String(input).endsWith('/login/oauth/access_token')) return response
    const body = (await response.clone().json().catch(() => ({}))) as { error?: unknown }
    return typeof body.error === 'string' ? new Response(JSON.stringify(body), { status: 400, headers: response.headers }) : response
  }
  return configuration
}

/** GitHub's documented answers: the user (`id` is the stable subject) and the addresses with their verification. */
async function githubProfile(provider: IdentityProvider, accessToken: string, guarded: Fetch): Promise<UpstreamProfile> {
  const { api } = githubHosts(provider)
  const get = async (path: string) => {
    const response = await guarded(`${api}${path}`, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/vnd.github+json', 'user-agent': 'authd', 'x-github-api-version': '2022-11-28' },
      signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_SEC * 1000),
    })
    if (!response.ok) throw new UpstreamFailure('failed', `GitHub API ${path} answered ${response.status}`)
    return (await response.json()) as unknown
  }
  const user = (await get('/user')) as { id?: unknown; name?: unknown; login?: unknown }
  if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new UpstreamFailure('invalid', 'GitHub user without an id')
  const emails = (await get('/user/emails')) as Array<{ email?: unknown; primary?: unknown; verified?: unknown }>
  const primary = Array.isArray(emails) ? emails.find((e) => e.primary === true && typeof e.email === 'string') : undefined
  const [firstName, ...rest] = typeof user.name === 'string' && user.name.trim() !== '' ? user.name.trim().split(/\s+/) : [typeof user.login === 'string' ? user.login : null]
  return {
    subject: String(user.id),
    email: (primary?.email as string | undefined) ?? null,
    emailVerified: primary?.verified === true,
    firstName: firstName ?? null,
    lastName: rest.length > 0 ? rest.join(' ') : null,
    amr: [],
    groups: null,
    authTime: null,
  }
}

/** The person as the verified claims (and userinfo) say. */
export function profileOf(provider: Pick<IdentityProvider, 'groupsClaim'>, claims: Record<string, unknown>): UpstreamProfile {
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null)
  const strings = (value: unknown) => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : null)
  return {
    subject: String(claims.sub),
    email: text(claims.email),
    // Only a JSON true: "true" as a string, or a missing claim (Microsoft Entra's), is no vouching.
    emailVerified: claims.email_verified === true,
    firstName: text(claims.given_name) ?? text(claims.name),
    lastName: text(claims.family_name),
    amr: strings(claims.amr) ?? [],
    groups: provider.groupsClaim === null ? null : strings(claims[provider.groupsClaim]),
    authTime: typeof claims.auth_time === 'number' && Number.isFinite(claims.auth_time) ? claims.auth_time * 1000 : null,
  }
}

/** Runs an exchange with the upstream, turning its failures into what the person is told. */
async function upstreamCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw failureOf(error)
  }
}

function failureOf(error: unknown): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error
  // (thrown by upstream-fetch.ts inside openid-client, which may wrap it)
  const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined
  if (cause instanceof UpstreamFailure) return cause
  if (error instanceof oidc.AuthorizationResponseError) return new UpstreamFailure('refused', error.error)
  if (error instanceof oidc.ResponseBodyError) return new UpstreamFailure('failed', error.error)
  if (error instanceof oidc.ClientError) {
    const cause = (error as { cause?: unknown }).cause
    if (cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError' || cause instanceof TypeError)) return new UpstreamFailure('unreachable')
    // openid-client's own checks say what failed in the cause: the authorization response's
    // state or iss (RFC 9207) of another flow or issuer, or an ID token's claims and signature.
    const reason = cause instanceof Error ? cause.message : error.message
    if (/response parameter/.test(reason) && /"(iss|state)"/.test(reason)) return new UpstreamFailure('mismatch', reason)
    if (/JWT|JWS|ID Token|signature|claim/i.test(reason)) return new UpstreamFailure('invalid', reason)
    return new UpstreamFailure('failed', reason)
  }
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError' || error instanceof TypeError)) return new UpstreamFailure('unreachable')
  return new UpstreamFailure('failed', error instanceof Error ? error.message : String(error))
}
