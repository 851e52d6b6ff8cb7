// The upstream fixtures checked on their own, before authd relies on them: openid-client v6 (the
// library authd's relying party uses) signs in through the oidc-provider upstream, and an OAuth
// round trip goes through the GitHub fake, by hand and through openid-client. What these tests
// pin down is also what authd's code has to do with these upstreams (http issuers allowed
// explicitly, the client authentication method, the iss parameter, GitHub's errors with 200).
import { afterEach, describe, expect, it } from 'bun:test'
import * as oidc from 'openid-client'
import { authorizeAtGitHubFake, startGitHubFake, type GitHubFake } from './github-fake'
import { cancelAtUpstream, CookieJar, signInAtUpstream, startOidcUpstream, type OidcUpstream, type OidcUpstreamOptions } from './oidc-provider'

// authd's callback as the upstream knows it; nothing listens there: the tests stop at the redirect.
const CALLBACK = 'http://localhost/t/tenant-1/login/provider-1/callback'
const CLIENT = { clientId: 'authd-test', clientSecret: 'a secret with spaces & symbols', redirectUris: [CALLBACK] }

const ALICE = { email: 'alice@example.com', email_verified: false, given_name: 'Alice', family_name: 'Liddell', amr: ['pwd', 'mfa'], groups: ['staff'] }

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

async function upstream(options: OidcUpstreamOptions = {}): Promise<OidcUpstream> {
  const started = await startOidcUpstream({ client: CLIENT, accounts: { alice: ALICE }, ...options })
  closers.push(started.close)
  return started
}

/** openid-client as authd's relying party will use it: discovery of an http issuer (allowed
 *  explicitly), a client secret sent with HTTP Basic unless told otherwise. */
function discover(up: OidcUpstream, auth = oidc.ClientSecretBasic(CLIENT.clientSecret)) {
  return oidc.discovery(new URL(up.issuer), CLIENT.clientId, undefined, auth, { execute: [oidc.allowInsecureRequests] })
}

/** An authorization request with PKCE S256, state and nonce, and what the callback needs. */
async function authorization(config: oidc.Configuration, scope = 'openid email profile groups') {
  const verifier = oidc.randomPKCECodeVerifier()
  const checks = { pkceCodeVerifier: verifier, expectedState: oidc.randomState(), expectedNonce: oidc.randomNonce() }
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: checks.expectedState,
    nonce: checks.expectedNonce,
  })
  return { url, checks }
}

describe('the oidc-provider upstream', () => {
  it('signs alice in for openid-client: PKCE, state, nonce, the iss answer of RFC 9207, her claims in the ID token', async () => {
    const up = await upstream()
    const config = await discover(up)
    expect(config.serverMetadata()).toMatchObject({
      issuer: up.issuer,
      authorization_response_iss_parameter_supported: true,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    })
    const { url, checks } = await authorization(config)

    const callback = new URL(await signInAtUpstream(url, 'alice'))
    expect(callback.href.startsWith(`${CALLBACK}?`)).toBe(true)
    expect(callback.searchParams.get('iss')).toBe(up.issuer)
    expect(callback.searchParams.get('state')).toBe(checks.expectedState)

    const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
    expect(tokens.claims()).toMatchObject({ iss: up.issuer, aud: CLIENT.clientId, sub: 'alice', nonce: checks.expectedNonce, ...ALICE })
    const { amr: _amr, ...profile } = ALICE // amr belongs to the sign-in: ID token only
    const userinfo: object = await oidc.fetchUserInfo(config, tokens.access_token, 'alice')
    expect(userinfo).toEqual({ sub: 'alice', ...profile })
    // The code went to /token with HTTP Basic (ClientSecretBasic), PKCE's verifier with it.
    expect(up.requests.filter((r) => r.path === '/token').map((r) => r.basicAuth)).toEqual([true])
    const asked = up.requests.find((r) => r.path === '/auth')!.query
    expect(asked.get('code_challenge_method')).toBe('S256')
    expect(asked.get('nonce')).toBe(checks.expectedNonce)
  })

  it('takes client_secret_post as well, unless told to accept client_secret_basic alone', async () => {
    const both = await upstream()
    const post = await discover(both, oidc.ClientSecretPost(CLIENT.clientSecret))
    const first = await authorization(post)
    const tokens = await oidc.authorizationCodeGrant(post, new URL(await signInAtUpstream(first.url, 'alice')), first.checks)
    expect(tokens.claims()?.sub).toBe('alice')

    const basicOnly = await upstream({ clientAuthMethods: ['client_secret_basic'] })
    const refused = await discover(basicOnly, oidc.ClientSecretPost(CLIENT.clientSecret))
    expect(refused.serverMetadata().token_endpoint_auth_methods_supported).toEqual(['client_secret_basic'])
    const second = await authorization(refused)
    const error = await oidc.authorizationCodeGrant(refused, new URL(await signInAtUpstream(second.url, 'alice')), second.checks).catch((e) => e)
    expect(error).toBeInstanceOf(oidc.ResponseBodyError)
    expect(error.error).toBe('invalid_client')
  })

  it('answers access_denied (with iss and state) when the person presses Cancel', async () => {
    const up = await upstream()
    const config = await discover(up)
    const { url, checks } = await authorization(config)
    const callback = new URL(await cancelAtUpstream(url))
    expect(Object.fromEntries(callback.searchParams)).toMatchObject({ error: 'access_denied', state: checks.expectedState, iss: up.issuer })
    const error = await oidc.authorizationCodeGrant(config, callback, checks).catch((e) => e)
    expect(error).toBeInstanceOf(oidc.AuthorizationResponseError)
    expect(error.error).toBe('access_denied')
  })

  it('refuses an authorization request without PKCE, at once and at the callback', async () => {
    const up = await upstream()
    const { url } = await authorization(await discover(up))
    url.searchParams.delete('code_challenge')
    url.searchParams.delete('code_challenge_method')
    const callback = new URL(await signInAtUpstream(url, 'alice'))
    expect(callback.searchParams.get('error')).toBe('invalid_request')
    expect(up.requests.some((r) => r.path.startsWith('/interaction/'))).toBe(false)
  })

  it('with claimsOnlyAtUserinfo, puts only sub and amr in the ID token and the rest in userinfo', async () => {
    const up = await upstream({ claimsOnlyAtUserinfo: true })
    const config = await discover(up)
    const { url, checks } = await authorization(config)
    const tokens = await oidc.authorizationCodeGrant(config, new URL(await signInAtUpstream(url, 'alice')), checks)
    const claims = tokens.claims()!
    expect(claims.sub).toBe('alice')
    expect(claims.amr).toEqual(['pwd', 'mfa'])
    expect(claims.email).toBeUndefined()
    expect(await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)).toMatchObject({ email: 'alice@example.com', groups: ['staff'] })
  })

  it('releases groups only for the scope groups, unless told to always', async () => {
    const scoped = await upstream()
    const a = await discover(scoped)
    const first = await authorization(a, 'openid email')
    expect((await oidc.authorizationCodeGrant(a, new URL(await signInAtUpstream(first.url, 'alice')), first.checks)).claims()?.groups).toBeUndefined()

    const always = await upstream({ groups: 'always' })
    const b = await discover(always)
    const second = await authorization(b, 'openid')
    expect((await oidc.authorizationCodeGrant(b, new URL(await signInAtUpstream(second.url, 'alice')), second.checks)).claims()?.groups).toEqual(['staff'])
  })

  it('remembers the session in a cookie jar: a second sign-in shows no form, unless prompt=login asks again', async () => {
    const up = await upstream({ accounts: { alice: ALICE, bob: { email: 'bob@example.com' } } })
    const config = await discover(up)
    const jar = new CookieJar()
    const forms = () => up.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/interaction/')).length
    const first = await authorization(config)
    await signInAtUpstream(first.url, 'alice', jar)
    expect(forms()).toBe(1)
    const second = await authorization(config)
    const tokens = await oidc.authorizationCodeGrant(config, new URL(await signInAtUpstream(second.url, 'nobody', jar)), second.checks)
    expect(tokens.claims()?.sub).toBe('alice')
    expect(forms()).toBe(1)

    const third = await authorization(config)
    third.url.searchParams.set('prompt', 'login')
    const bob = await oidc.authorizationCodeGrant(config, new URL(await signInAtUpstream(third.url, 'bob', jar)), third.checks)
    expect(bob.claims()?.sub).toBe('bob')
    expect(forms()).toBe(2)
  })

  it('refuses an unknown account at the form, and a redirect URI not registered (until setClient registers it)', async () => {
    const up = await upstream()
    const config = await discover(up)
    const { url } = await authorization(config)
    await expect(signInAtUpstream(url, 'mallory')).rejects.toThrow('No account "mallory"')

    const elsewhere = 'http://127.0.0.1:9/t/tenant-1/login/provider-2/callback'
    url.searchParams.set('redirect_uri', elsewhere)
    await expect(signInAtUpstream(url, 'alice')).rejects.toThrow('redirect_uri did not match')
    up.setClient({ ...CLIENT, redirectUris: [CALLBACK, elsewhere] })
    expect(await signInAtUpstream(url, 'alice')).toStartWith(`${elsewhere}?code=`)
  })

  it('is an http issuer, which openid-client refuses unless allowInsecureRequests is given', async () => {
    const up = await upstream()
    const error = await oidc.discovery(new URL(up.issuer), CLIENT.clientId, CLIENT.clientSecret).catch((e) => e)
    expect(error.code).toBe('OAUTH_HTTP_REQUEST_FORBIDDEN')
  })

  it('can be down (503), hang, or be gone after close()', async () => {
    const up = await upstream()
    up.mode = 'down'
    expect((await fetch(`${up.issuer}/.well-known/openid-configuration`)).status).toBe(503)
    up.mode = 'hang'
    const hung = await fetch(`${up.issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(200) }).catch((e) => e)
    expect(hung.name).toBe('TimeoutError')
    await up.close()
    await expect(fetch(`${up.issuer}/.well-known/openid-configuration`)).rejects.toThrow()
  })
})

describe('the GitHub fake', () => {
  const GH_CALLBACK = 'http://localhost/t/tenant-1/login/github-1/callback'
  const APP = { clientId: 'Ov23liTestApp', clientSecret: 'gh-secret', callbackUrl: GH_CALLBACK }
  const OCTO = { id: 583231, login: 'octocat', name: 'The Octocat', email: null, emails: [{ email: 'octocat@example.com', primary: true, verified: true, visibility: 'private' as const }, { email: 'old@example.com', primary: false, verified: false, visibility: null }] }

  async function github(): Promise<GitHubFake> {
    const started = await startGitHubFake({ app: APP, users: [OCTO] })
    closers.push(started.close)
    return started
  }

  async function authorizeUrl(gh: GitHubFake, scope = 'read:user user:email') {
    const verifier = oidc.randomPKCECodeVerifier()
    const state = oidc.randomState()
    const url = new URL(`${gh.url}/login/oauth/authorize`)
    url.search = new URLSearchParams({ client_id: APP.clientId, redirect_uri: GH_CALLBACK, scope, state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }).toString()
    return { url, verifier, state }
  }

  const exchange = (gh: GitHubFake, fields: Record<string, string>, accept = 'application/json') =>
    fetch(`${gh.url}/login/oauth/access_token`, { method: 'POST', headers: { accept }, body: new URLSearchParams({ client_id: APP.clientId, client_secret: APP.clientSecret, redirect_uri: GH_CALLBACK, ...fields }) })

  it('goes through the web application flow by hand: code, token, the user and their e-mail addresses', async () => {
    const gh = await github()
    const { url, verifier, state } = await authorizeUrl(gh)
    const callback = new URL(await authorizeAtGitHubFake(url, 'octocat'))
    expect(callback.href.startsWith(`${GH_CALLBACK}?`)).toBe(true)
    expect(callback.searchParams.get('state')).toBe(state)
    expect(callback.searchParams.has('iss')).toBe(false)

    const answer = await exchange(gh, { code: callback.searchParams.get('code')!, code_verifier: verifier })
    expect(answer.status).toBe(200)
    const token = (await answer.json()) as any
    expect(token).toEqual({ access_token: expect.stringMatching(/^gho_/), token_type: 'bearer', scope: 'read:user,user:email' })

    const headers = { authorization: `Bearer ${token.access_token}`, accept: 'application/vnd.github+json' }
    const user = await fetch(`${gh.apiUrl}/user`, { headers })
    expect(user.headers.get('x-oauth-scopes')).toBe('read:user, user:email')
    expect(await user.json()).toMatchObject({ id: 583231, login: 'octocat', name: 'The Octocat', email: null })
    const emails = await fetch(`${gh.apiUrl}/user/emails`, { headers: { ...headers, authorization: `token ${token.access_token}` } })
    expect(await emails.json()).toEqual(OCTO.emails)
  })

  it('answers errors as GitHub documents them: 200 at the token endpoint, 401/404 at the API, redirects at authorize', async () => {
    const gh = await github()
    const { url, verifier, state } = await authorizeUrl(gh, 'read:user')
    const code = new URL(await authorizeAtGitHubFake(url, 'octocat')).searchParams.get('code')!

    const wrongVerifier = await exchange(gh, { code, code_verifier: oidc.randomPKCECodeVerifier() })
    expect(wrongVerifier.status).toBe(200)
    expect(await wrongVerifier.json()).toMatchObject({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' })
    // The code was spent by the failed try.
    expect(await (await exchange(gh, { code, code_verifier: verifier })).json()).toMatchObject({ error: 'bad_verification_code' })
    expect(await (await exchange(gh, { code: 'nope', client_secret: 'wrong' })).json()).toMatchObject({ error: 'incorrect_client_credentials' })
    // Without Accept: application/json, GitHub's default: a form-encoded body.
    const form = await exchange(gh, { code: 'nope' }, '*/*')
    expect(new URLSearchParams(await form.text()).get('error')).toBe('bad_verification_code')

    const again = await authorizeUrl(gh, 'read:user')
    const token = ((await (await exchange(gh, { code: new URL(await authorizeAtGitHubFake(again.url, 'octocat')).searchParams.get('code')!, code_verifier: again.verifier })).json()) as any).access_token
    const emails = await fetch(`${gh.apiUrl}/user/emails`, { headers: { authorization: `Bearer ${token}` } })
    expect(emails.status).toBe(404) // no user:email scope: GitHub says Not Found
    expect((await fetch(`${gh.apiUrl}/user`, { headers: { authorization: 'Bearer gho_unknown' } })).status).toBe(401)

    const cancelled = new URL(await authorizeAtGitHubFake(url, 'octocat', { cancel: true }))
    expect(Object.fromEntries(cancelled.searchParams)).toMatchObject({ error: 'access_denied', state })
    url.searchParams.set('redirect_uri', 'http://localhost/elsewhere')
    const mismatch = new URL(await authorizeAtGitHubFake(url, 'octocat'))
    expect(mismatch.origin + mismatch.pathname).toBe(GH_CALLBACK) // sent to the registered callback
    expect(mismatch.searchParams.get('error')).toBe('redirect_uri_mismatch')
  })

  it('works with openid-client given its endpoints by hand; a customFetch turns GitHub\'s 200 errors into ones it reports', async () => {
    const gh = await github()
    const metadata = { issuer: gh.url, authorization_endpoint: `${gh.url}/login/oauth/authorize`, token_endpoint: `${gh.url}/login/oauth/access_token` }
    const config = new oidc.Configuration(metadata, APP.clientId, APP.clientSecret)
    oidc.allowInsecureRequests(config)
    const { url, verifier, state } = await authorizeUrl(gh)
    const callback = new URL(await authorizeAtGitHubFake(url, 'octocat'))
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state })
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'read:user,user:email' })
    const user = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${gh.apiUrl}/user`), 'GET')
    expect(await user.json()).toMatchObject({ id: OCTO.id })

    // The same code again: GitHub's error comes with 200, which openid-client takes for a token
    // response without access_token and reports without GitHub's words.
    const plain = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }).catch((e) => e)
    expect(plain.code).toBe('OAUTH_INVALID_RESPONSE')
    config[oidc.customFetch] = async (input, init) => {
      const response = await fetch(input, init as RequestInit)
      if (response.status !== 200 || !String(input).endsWith('/login/oauth/access_token')) return response
      const body = (await response.clone().json().catch(() => ({}))) as { error?: string }
      return body.error ? new Response(JSON.stringify(body), { status: 400, headers: response.headers }) : response
    }
    const reported = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }).catch((e) => e)
    expect(reported).toBeInstanceOf(oidc.ResponseBodyError)
    expect(reported.error).toBe('bad_verification_code')
  })

  it('can fail with 500, answer slowly, hang, or be gone after close()', async () => {
    const gh = await github()
    gh.mode = 'error'
    expect((await fetch(`${gh.apiUrl}/user`)).status).toBe(500)
    gh.mode = 'slow'
    gh.slowMs = 300
    const started = Date.now()
    expect((await fetch(`${gh.apiUrl}/user`)).status).toBe(401)
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
    gh.mode = 'hang'
    expect((await fetch(`${gh.apiUrl}/user`, { signal: AbortSignal.timeout(200) }).catch((e) => e)).name).toBe('TimeoutError')
    await gh.close()
    await expect(fetch(`${gh.apiUrl}/user`)).rejects.toThrow()
  })
})
