// Forward authentication (product spec §24) with real proxies: Debian's nginx (auth_request)
// and Caddy (forward_auth), each a child process of this test with its own configuration in a
// temporary directory, in front of a small application that answers with the headers it
// received. The proxies' configurations are the snippets of docs/forward-auth.md, read from the
// page (the fenced block after its `<!-- forward-auth-proxies.test.ts: … -->` marker) with only
// the ports and the example domain replaced, so the documentation is what is tested. authd is a
// real server on a socket, at http://auth.example.test:<port> (a host inside the protected
// domain example.test); the browser (Chromium, test/browser.ts, which maps *.example.test to
// 127.0.0.1) and the cookie-keeping client below reach app.example.test through each proxy.
// On both proxies: the sign-in journey in Chromium, group denial, two_factor (the factor proved
// on authd's pages, or the user told to set one up), bypass paths, sign-out ending access, a
// client forging the Remote-* headers, bearer tokens; then a peer that is no trusted proxy, the
// check endpoints refused on authd's public host, and a return_to to another site. The store is
// createTestContext's: SQLite in the suite, PostgreSQL with AUTHD_TEST_ENGINE=postgres.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { setForwardAuthDomains } from '../../src/core/forward-auth/domains'
import { addAccessRule } from '../../src/core/forward-auth/rules'
import { addMembers, createGroup } from '../../src/core/groups/groups'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { updateTenantPages } from '../../src/core/tenants/tenant-pages'
import { silentLogger } from '../../src/log'
import { startServer, type RunningServer } from '../../src/server/serve'
import { loaded, runBrowserTests, seriousViolations, sharedBrowser } from '../browser'
import { createTestContext, loginFor, PASSWORD, tempDir, type TestContext } from '../helpers'
import { freePort } from '../oidc-journey'
import { formOn } from '../pages'

const NGINX = '/usr/sbin/nginx'
const CADDY = Bun.which('caddy') ?? '/usr/bin/caddy'
const proxiesAvailable = existsSync(NGINX) && existsSync(CADDY)
// (.ci/run installs them; in CI their absence fails the test instead of skipping it)
const runProxyTests = proxiesAvailable || process.env.CI === 'true'
if (!proxiesAvailable && process.env.CI !== 'true') console.warn('forward-auth proxy tests skipped: apt-get install nginx caddy')
const runJourneys = runProxyTests && runBrowserTests

const DOCS = join(import.meta.dir, '..', '..', 'docs', 'forward-auth.md')
const SLUG = 'acme'
const IDENTITY = ['remote-user', 'remote-email', 'remote-name', 'remote-groups', 'remote-user-id'] as const
const FORGED = { 'Remote-User': 'boss@example.com', 'Remote-Email': 'boss@example.com', 'Remote-Name': 'The Boss', 'Remote-Groups': 'admins', 'Remote-User-Id': 'forged-id' }

type ProxyName = 'nginx' | 'caddy'
const PROXIES: ProxyName[] = ['nginx', 'caddy']

interface Proxy {
  port: number
  /** http://app.example.test:<port>: the protected application through this proxy. */
  app: string
  log: () => string
  stop: () => Promise<void>
}

let ctx: TestContext
let server: RunningServer
let application: ReturnType<typeof Bun.serve>
let authd: string
let pages: string
const proxies = {} as Record<ProxyName, Proxy>
/** Each proxy's own users, so that what one scenario does to a session (a sign-out, a factor
 *  proved) is not what the other proxy's scenario starts from. */
const users = {} as Record<ProxyName, Record<'chris' | 'ada' | 'grace' | 'tom' | 'nora' | 'sam', string>>

// ── the documented configurations ─────────────────────────────────────────────────────────

/** The fenced block that follows `<!-- forward-auth-proxies.test.ts: {name} -->` in the docs. */
function documented(name: ProxyName): string {
  const text = readFileSync(DOCS, 'utf8')
  const marker = `<!-- forward-auth-proxies.test.ts: ${name} -->\n`
  const at = text.indexOf(marker)
  if (at === -1) throw new Error(`docs/forward-auth.md has no ${marker.trim()}`)
  const block = /^```[a-z]*\n([\s\S]*?)\n```\n/.exec(text.slice(at + marker.length))
  if (!block) throw new Error(`no fenced block after ${marker.trim()} in docs/forward-auth.md`)
  return block[1]!
}

/** Replaces each `from` (every occurrence), and fails when one is missing: the docs changed. */
function substitute(text: string, replacements: Array<[string | RegExp, string]>): string {
  for (const [from, to] of replacements) {
    const found = typeof from === 'string' ? text.includes(from) : new RegExp(from.source, from.flags.replace('g', '')).test(text)
    if (!found) throw new Error(`the documented configuration no longer has ${from}: update the test's substitutions`)
    text = typeof from === 'string' ? text.replaceAll(from, to) : text.replace(from, to)
  }
  return text
}

/** The docs' addresses (authd on 127.0.0.1:3000, the application on 127.0.0.1:8080, example.com) made this test's. */
const ADDRESSES = (): Array<[string | RegExp, string]> => [
  ['127.0.0.1:3000', `127.0.0.1:${new URL(server.url).port}`],
  ['127.0.0.1:8080', `127.0.0.1:${application.port}`],
]

async function waitUntilUp(port: number, exited: () => boolean, failure: () => Promise<string>) {
  const deadline = Date.now() + 15_000
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: `app.example.test:${port}` }, redirect: 'manual' }).then(() => true, () => false)
    if (up) return
    if (exited() || Date.now() > deadline) throw new Error(await failure())
    await Bun.sleep(50)
  }
}

async function stopProcess(child: ReturnType<typeof Bun.spawn>) {
  child.kill('SIGTERM')
  const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(5_000).then(() => false)])
  if (!exited) child.kill('SIGKILL')
}

/** nginx in the foreground (`daemon off`), prefix, pid, logs and temporary files in a directory of its own. */
async function startNginx(): Promise<Proxy> {
  const dir = tempDir()
  // (started as root, nginx's workers run as nobody, which must reach its temporary files)
  chmodSync(dir, 0o755)
  const port = freePort()
  const site = substitute(documented('nginx'), [['listen 80;', `listen 127.0.0.1:${port};`], ...ADDRESSES(), ['example.com', 'example.test']])
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `    ${kind}_temp_path ${dir}/${kind};`).join('\n')
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events {
    worker_connections 256;
}
http {
    access_log off;
${temp}
${site}
}
`,
  )
  const child = Bun.spawn([NGINX, '-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', 'daemon off;'], { stdout: 'ignore', stderr: 'pipe' })
  const log = () => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '')
  await waitUntilUp(port, () => child.exitCode !== null, async () => `nginx did not start: ${await new Response(child.stderr).text()} ${log()}`)
  return { port, app: `http://app.example.test:${port}`, log, stop: () => stopProcess(child) }
}

/** Caddy in the foreground, no admin endpoint, no automatic HTTPS, its storage and HOME in a directory of its own. */
async function startCaddy(): Promise<Proxy> {
  const dir = tempDir()
  const port = freePort()
  const sites = substitute(documented('caddy'), [[/^([a-z]+)\.example\.com \{$/gm, `http://$1.example.test:${port} {`], ...ADDRESSES()])
  writeFileSync(
    join(dir, 'Caddyfile'),
    `{
	admin off
	auto_https off
	default_bind 127.0.0.1
	storage file_system ${dir}/storage
}

${sites}
`,
  )
  const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data') }
  let output = ''
  const child = Bun.spawn([CADDY, 'run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], { env, stdout: 'ignore', stderr: 'pipe' })
  // (Caddy logs to stderr: kept, for a failing expectation to show)
  void (async () => {
    for await (const chunk of child.stderr as ReadableStream<Uint8Array>) output += new TextDecoder().decode(chunk)
  })()
  await waitUntilUp(port, () => child.exitCode !== null, async () => `Caddy did not start: ${output}`)
  return { port, app: `http://app.example.test:${port}`, log: () => output, stop: () => stopProcess(child) }
}

// ── a browser without JavaScript, with a cookie jar that knows domains ────────────────────

interface Cookie {
  name: string
  value: string
  domain: string
  hostOnly: boolean
}

interface Answer {
  status: number
  location: string | null
  text: string
  headers: Headers
}

/** Every *.example.test host is this machine: requests go to 127.0.0.1 on the URL's port, with the URL's Host. */
class Client {
  cookies: Cookie[] = []

  cookieHeader(hostname: string): string {
    return this.cookies
      .filter((c) => (c.hostOnly ? c.domain === hostname : hostname === c.domain || hostname.endsWith(`.${c.domain}`)))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ')
  }

  async send(url: string, init: { method?: string; form?: Record<string, string>; body?: string; headers?: Record<string, string>; cookie?: string } = {}): Promise<Answer> {
    const target = new URL(url)
    const headers: Record<string, string> = { accept: 'text/html,application/xhtml+xml', ...init.headers, host: target.host }
    const cookie = init.cookie ?? this.cookieHeader(target.hostname)
    if (cookie) headers.cookie = cookie
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      headers.origin = authd
    }
    const response = await fetch(`http://127.0.0.1:${target.port}${target.pathname}${target.search}`, {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      headers,
      body: init.form ? new URLSearchParams(init.form).toString() : init.body,
      redirect: 'manual',
    })
    for (const line of response.headers.getSetCookie()) this.store(target.hostname, line)
    return { status: response.status, location: response.headers.get('location'), text: await response.text(), headers: response.headers }
  }

  private store(hostname: string, line: string) {
    const [pair = '', ...attributes] = line.split(';').map((part) => part.trim())
    const [name = '', value = ''] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]
    const domainAttribute = attributes.find((a) => /^domain=/i.test(a))?.slice(7).replace(/^\./, '').toLowerCase()
    const cookie = { name, value, domain: domainAttribute ?? hostname, hostOnly: domainAttribute === undefined }
    this.cookies = this.cookies.filter((c) => !(c.name === name && c.domain === cookie.domain))
    if (value !== '' && !attributes.some((a) => /^max-age=0$/i.test(a))) this.cookies.push(cookie)
  }

  /** Sends a form found on `page` (by the end of its action) with `fields`. */
  submit(page: Answer, action: string, fields: Record<string, string> = {}): Promise<Answer> {
    const form = formOn(page.text, action)
    return this.send(new URL(form.action, authd).href, { form: { ...form.hidden, ...fields } })
  }

  /** Signs in on authd's login page (returning to `returnTo`, if given); the answer is the 303 onwards. */
  async signIn(email: string, returnTo?: string): Promise<Answer> {
    const login = await this.send(`${pages}/login${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`)
    expect(login.status).toBe(200)
    const signedIn = await this.submit(login, '/login', { email, password: PASSWORD })
    expect({ status: signedIn.status, location: signedIn.location }).toEqual({ status: 303, location: returnTo ?? `/t/${SLUG}/account` })
    return signedIn
  }
}

/** The status of a GET of `target` exactly as written (fetch would resolve its dot segments first). */
async function rawStatus(port: number, host: string, target: string, headers: Record<string, string> = {}): Promise<number> {
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  const answer = await new Promise<string>((resolve, reject) => {
    let received = ''
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\n${extra}Connection: close\r\n\r\n`))
    socket.on('data', (chunk) => (received += chunk.toString('latin1')))
    socket.on('end', () => resolve(received))
    socket.on('error', reject)
  })
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)
}

/** What the application received, from its answer (JSON; HTML with the JSON in <pre id="seen"> for a browser). */
interface Seen {
  method: string
  path: string
  headers: Record<string, string>
}
function seenOf(answer: Answer): Seen {
  const page = /<pre id="seen">([^<]*)<\/pre>/.exec(answer.text)
  if (answer.status !== 200 || (!page && !answer.text.startsWith('{'))) throw new Error(`not the application's answer: ${answer.status} ${answer.text.slice(0, 200)}`)
  return JSON.parse(page ? page[1]!.replace(/&lt;/g, '<').replace(/&amp;/g, '&') : answer.text)
}
/** The identity headers as the application received them ('' for one it did not receive). */
const identityOf = (seen: Seen) => Object.fromEntries(IDENTITY.map((name) => [name, seen.headers[name] ?? '']))
const identity = (email: string, userId: string, groups = '') => ({ 'remote-user': email, 'remote-email': email, 'remote-name': 'Ada Lovelace', 'remote-groups': groups, 'remote-user-id': userId })
const NOBODY = Object.fromEntries(IDENTITY.map((name) => [name, '']))
/** Every header the application received whose value a forger wrote (any name, any case). */
const forgedIn = (seen: Seen) => Object.entries(seen.headers).filter(([, value]) => Object.values(FORGED).some((forged) => value.includes(forged)))

const userIds = new Map<string, string>()
const currentCode = (secret: string) => totpCode(secret, totpStep(ctx.clock.now()))

beforeAll(async () => {
  if (!runProxyTests) return
  application = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const url = new URL(request.url)
      const seen: Seen = { method: request.method, path: `${url.pathname}${url.search}`, headers: Object.fromEntries(request.headers) }
      if (!(request.headers.get('accept') ?? '').includes('text/html')) return Response.json(seen)
      const escaped = JSON.stringify(seen).replace(/&/g, '&amp;').replace(/</g, '&lt;')
      return new Response(`<!doctype html><title>The application</title><pre id="seen">${escaped}</pre>`, { headers: { 'content-type': 'text/html; charset=utf-8' } })
    },
  })
  const port = freePort()
  authd = `http://auth.example.test:${port}`
  ctx = await createTestContext({ AUTHD_PORT: String(port), AUTHD_HOST: '127.0.0.1', AUTHD_PUBLIC_URL: authd, AUTHD_TRUSTED_PROXIES: '127.0.0.1' })
  server = await startServer(ctx.runtime, silentLogger)
  await updateTenantPages(ctx.runtime, ctx.tenantId, { slug: SLUG })
  pages = `${authd}/t/${SLUG}`
  await setForwardAuthDomains(ctx.runtime, ctx.tenantId, ['example.test'])

  const admins = await createGroup(ctx.runtime, { tenantId: ctx.tenantId, name: 'admins' })
  for (const proxy of PROXIES) {
    const names = ['chris', 'ada', 'grace', 'tom', 'nora', 'sam'] as const
    users[proxy] = Object.fromEntries(names.map((name) => [name, `${name}.${proxy}@example.com`])) as (typeof users)[ProxyName]
    for (const name of names) {
      const { userId } = await ctx.addUser({ email: users[proxy][name] })
      userIds.set(users[proxy][name], userId)
    }
    await addMembers(ctx.runtime, admins.id, [userIds.get(users[proxy].chris)!, userIds.get(users[proxy].ada)!])
  }
  const rule = (input: Record<string, unknown>) => addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'app.example.test', ...input })
  await rule({ paths: ['/health'], policy: 'bypass' })
  await rule({ paths: ['/feed'], methods: ['GET', 'HEAD'], policy: 'bypass' })
  await rule({ paths: ['/admin/'], policy: 'two_factor' })
  await rule({ paths: ['/admins-only/'], policy: 'one_factor', groups: ['admins'] })
  await rule({ policy: 'one_factor' })
  // A host open to all, which a client must not be able to name in place of the one the proxy serves.
  await addAccessRule(ctx.runtime, ctx.tenantId, { domain: 'public.example.test', policy: 'bypass' })
  // (nothing for other hosts: refused by default)

  proxies.nginx = await startNginx()
  proxies.caddy = await startCaddy()
}, 60_000)

afterAll(async () => {
  if (!runProxyTests) return
  for (const proxy of Object.values(proxies)) await proxy.stop()
  await server?.stop()
  await ctx?.close()
  application?.stop(true)
})

for (const name of PROXIES) {
  describe(`${name} in front of an application`, () => {
    const proxy = () => proxies[name]
    const app = (path: string) => `${proxy().app}${path}`
    const person = (who: keyof (typeof users)[ProxyName]) => ({ email: users[name][who], userId: userIds.get(users[name][who])! })

    it.skipIf(!runJourneys)('Chromium: a protected page sends the browser to authd, which signs it in and brings it back, signed in', async () => {
      const browser: Browser = await sharedBrowser()
      const context = await browser.newContext()
      try {
        const page = await context.newPage()
        const answers: Array<{ url: string; status: number; location: string | null }> = []
        page.on('response', (response) => {
          if (response.request().isNavigationRequest()) answers.push({ url: response.url(), status: response.status(), location: response.headers().location ?? null })
        })
        const wanted = app('/dashboard?tab=1')
        await page.goto(wanted)
        // The proxy answered with the redirect (nginx: its error_page 401 with authd's Location).
        expect(answers[0], proxy().log()).toEqual({ url: wanted, status: 302, location: `${pages}/login?return_to=${encodeURIComponent(wanted)}` })
        expect(page.url()).toBe(`${pages}/login?return_to=${encodeURIComponent(wanted)}`)
        expect(await page.locator('main').textContent()).toContain(`After signing in you go on to app.example.test:${proxy().port}.`)
        const { email, userId } = person('chris')
        await page.getByLabel('E-mail address').fill(email)
        await page.getByLabel('Password').fill(PASSWORD)
        await loaded(page, () => page.getByRole('button', { name: 'Sign in', exact: true }).click())
        await page.waitForURL(wanted)
        const seen: Seen = JSON.parse((await page.locator('#seen').textContent())!)
        expect({ path: seen.path, identity: identityOf(seen) }).toEqual({ path: '/dashboard?tab=1', identity: identity(email, userId, 'admins') })
        const cookie = (await context.cookies()).find((c) => c.name === `authd_session_${SLUG}`)
        expect({ domain: cookie?.domain, httpOnly: cookie?.httpOnly, sameSite: cookie?.sameSite }).toEqual({ domain: '.example.test', httpOnly: true, sameSite: 'Lax' })
        // Another page of the application: straight in, with the same cookie.
        await page.goto(app('/settings'))
        expect(identityOf(JSON.parse((await page.locator('#seen').textContent())!))['remote-user']).toBe(email)
      } finally {
        await context.close()
      }
    })

    it.skipIf(!runProxyTests)('not signed in: a page is sent to the login page with the URL to return to; an API call gets 401 where the protocol can tell (Caddy)', async () => {
      const client = new Client()
      const wanted = app('/reports/2024?q=a%20b')
      const page = await client.send(wanted)
      expect({ status: page.status, location: page.location }, proxy().log()).toEqual({ status: 302, location: `${pages}/login?return_to=${encodeURIComponent(wanted)}` })
      const api = await client.send(app('/api/items'), { headers: { accept: 'application/json' } })
      // (nginx: authd's auth-request endpoint answers 401 to both, and the documented error_page turns every 401 into the redirect)
      expect(api.status).toBe(name === 'caddy' ? 401 : 302)
      const posted = await client.send(app('/api/items'), { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/json' } })
      expect(posted.status).toBe(name === 'caddy' ? 401 : 302)
    })

    it.skipIf(!runProxyTests)('group denial: a signed-in user outside the rule\'s groups gets 403; a member is admitted with the groups named', async () => {
      const grace = new Client()
      await grace.signIn(person('grace').email, app('/'))
      const refused = await grace.send(app('/admins-only/reports'))
      expect(refused.status, proxy().log()).toBe(403)
      const elsewhere = await grace.send(app('/'))
      expect(identityOf(seenOf(elsewhere))).toEqual(identity(person('grace').email, person('grace').userId))
      const ada = new Client()
      await ada.signIn(person('ada').email)
      const admitted = await ada.send(app('/admins-only/reports'))
      expect({ status: admitted.status, path: seenOf(admitted).path, identity: identityOf(seenOf(admitted)) }).toEqual({
        status: 200,
        path: '/admins-only/reports',
        identity: identity(person('ada').email, person('ada').userId, 'admins'),
      })
    })

    it.skipIf(!runProxyTests)('two_factor: a password-only session is sent to authd, which asks for the code of the user\'s authenticator app, then back to the page', async () => {
      const tom = new Client()
      const { email, userId } = person('tom')
      await tom.signIn(email)
      // TOTP turned on in this very session (on the account page): the session stays, signed in with the password alone.
      const setup = await tom.submit(await tom.send(`${pages}/account`), '/account/totp')
      const secret = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(setup.text)![1]!.replaceAll(' ', '')
      const on = await tom.submit(setup, '/account/totp/confirm', { code: currentCode(secret) })
      expect(on.text).toContain('<h1>Your recovery codes</h1>')
      expect((await tom.send(app('/'))).status).toBe(200)

      const wanted = app('/admin/users')
      const sent = await tom.send(wanted)
      expect({ status: sent.status, location: sent.location }, proxy().log()).toEqual({ status: 302, location: `${pages}/login?return_to=${encodeURIComponent(wanted)}` })
      const asked = await tom.send(sent.location!)
      expect(asked.status).toBe(200)
      expect(asked.text).toContain(`app.example.test:${proxy().port} asks for two-step verification. Enter the 6-digit code from your authenticator app.`)
      ctx.clock.advance(30)
      const proved = await tom.submit(asked, '/login/session-factor', { code: currentCode(secret) })
      expect({ status: proved.status, location: proved.location }).toEqual({ status: 303, location: wanted })
      const admitted = await tom.send(wanted)
      expect({ status: admitted.status, path: seenOf(admitted).path, identity: identityOf(seenOf(admitted)) }).toEqual({ status: 200, path: '/admin/users', identity: identity(email, userId) })
    })

    it.skipIf(!runProxyTests)('two_factor: a user with no second factor is told to set one up, and the proxy keeps refusing', async () => {
      const nora = new Client()
      await nora.signIn(person('nora').email)
      const wanted = app('/admin/')
      const sent = await nora.send(wanted)
      expect(sent.status).toBe(302)
      const told = await nora.send(sent.location!)
      expect(told.status).toBe(200)
      expect(told.text).toContain(`app.example.test:${proxy().port} asks for two-step verification, and your account has none yet. Set it up on your account page, then go back to app.example.test:${proxy().port}.`)
      expect(told.text).toContain('Set up two-step verification')
      expect((await nora.send(wanted)).status).toBe(302)
    })

    it.skipIf(!runProxyTests)('bypass: /health reaches the application without a cookie, with no identity even when the client forged one or is signed in', async () => {
      const anonymous = await new Client().send(app('/health'), { headers: { ...FORGED, accept: 'application/json' } })
      expect({ status: anonymous.status, identity: identityOf(seenOf(anonymous)), forged: forgedIn(seenOf(anonymous)) }, proxy().log()).toEqual({ status: 200, identity: NOBODY, forged: [] })
      const ada = new Client()
      await ada.signIn(person('ada').email)
      const signedIn = await ada.send(app('/health'), { headers: FORGED })
      expect({ status: signedIn.status, identity: identityOf(seenOf(signedIn)), forged: forgedIn(seenOf(signedIn)) }).toEqual({ status: 200, identity: NOBODY, forged: [] })
    })

    it.skipIf(!runProxyTests)('a path that climbs out of a bypass prefix is judged where it lands, as the proxy passes it on unresolved', async () => {
      for (const path of ['/health/../secret', '/health/%2e%2e/secret', '/health/..%2fsecret', '/health/.%2e/secret', '/health%2f..%2fsecret']) {
        const status = await rawStatus(proxy().port, `app.example.test:${proxy().port}`, path)
        expect({ path, refused: status !== 200 }, proxy().log()).toEqual({ path, refused: true })
      }
      expect(await rawStatus(proxy().port, `app.example.test:${proxy().port}`, '/health/./status')).toBe(200)
    })

    it.skipIf(!runProxyTests)('methods: the proxy reports the original method, so a bypass of GET on /feed leaves a POST there to the next rule', async () => {
      const json = { accept: 'application/json' }
      expect((await new Client().send(app('/feed'), { headers: json })).status).toBe(200)
      expect((await new Client().send(app('/feed'), { method: 'HEAD', headers: json })).status).toBe(200)
      const posted = await new Client().send(app('/feed'), { method: 'POST', headers: { ...json, 'content-type': 'application/json' } })
      expect(posted.status, proxy().log()).toBe(name === 'caddy' ? 401 : 302)
      const ada = new Client()
      await ada.signIn(person('ada').email)
      const signedIn = await ada.send(app('/feed'), { method: 'POST', headers: { ...json, 'content-type': 'application/json' }, body: '{"item":1}' })
      expect({ status: signedIn.status, method: seenOf(signedIn).method, user: identityOf(seenOf(signedIn))['remote-user'] }).toEqual({ status: 200, method: 'POST', user: person('ada').email })
    })

    it.skipIf(!runProxyTests)('a client forging Remote-User, -Email, -Name, -Groups and -User-Id: none of them reaches the application, however it spells them', async () => {
      const grace = new Client()
      const { email, userId } = person('grace')
      await grace.signIn(email)
      const spellings = [FORGED, Object.fromEntries(Object.entries(FORGED).map(([h, v]) => [h.toLowerCase(), v])), Object.fromEntries(Object.entries(FORGED).map(([h, v]) => [h.replaceAll('-', '_'), v]))]
      for (const headers of spellings) {
        const answer = await grace.send(app('/profile'), { headers })
        // (grace is in no group: authd's Remote-Groups is empty, and the forged "admins" must not survive it)
        expect({ status: answer.status, identity: identityOf(seenOf(answer)), forged: forgedIn(seenOf(answer)) }, proxy().log()).toEqual({ status: 200, identity: identity(email, userId), forged: [] })
      }
      // Not signed in, forging: the login page, the application never asked.
      const stranger = await new Client().send(app('/profile'), { headers: FORGED })
      expect(stranger.status).toBe(302)
    })

    it.skipIf(!runProxyTests)('a name beyond ASCII reaches the application as its UTF-8 bytes', async () => {
      const email = `zoe.${name}@example.com`
      await ctx.addUser({ email, firstName: 'Zoë', lastName: 'Ünal-李' })
      const zoe = new Client()
      await zoe.signIn(email)
      const answer = await zoe.send(app('/'), { headers: { accept: 'application/json' } })
      // (the application, a Bun server, reads each byte of a header as one character)
      expect(Buffer.from(seenOf(answer).headers['remote-name']!, 'latin1').toString('utf8')).toBe('Zoë Ünal-李')
    })

    it.skipIf(!runProxyTests)('a bearer access token of the tenant is a session too', async () => {
      const { email, userId } = person('ada')
      const token = (await loginFor(ctx, email)).json.data.response.accessToken as string
      const answer = await new Client().send(app('/api/me'), { headers: { accept: 'application/json', authorization: `Bearer ${token}` } })
      expect({ status: answer.status, identity: identityOf(seenOf(answer)) }).toEqual({ status: 200, identity: identity(email, userId, 'admins') })
      const wrong = await new Client().send(app('/api/me'), { headers: { accept: 'application/json', authorization: `Bearer ${token.slice(0, -4)}AAAA` } })
      expect(wrong.status).toBe(name === 'caddy' ? 401 : 302)
    })

    it.skipIf(!runProxyTests)('sign-out on authd\'s pages ends access: the same cookie is sent to sign in again', async () => {
      const sam = new Client()
      await sam.signIn(person('sam').email)
      const cookie = sam.cookieHeader('app.example.test')
      expect(cookie).toContain(`authd_session_${SLUG}=`)
      expect((await sam.send(app('/'), { cookie })).status).toBe(200)
      const out = await sam.submit(await sam.send(`${pages}/logout`), '/logout')
      expect(out.status).toBe(303)
      // (the sign-out took the cookie back from the browser; a copy kept of it is refused all the same)
      expect(sam.cookieHeader('app.example.test')).not.toContain(`authd_session_${SLUG}=`)
      const page = await sam.send(app('/'), { cookie })
      expect({ status: page.status, location: page.location }).toEqual({ status: 302, location: `${pages}/login?return_to=${encodeURIComponent(app('/'))}` })
      const api = await sam.send(app('/'), { cookie, headers: { accept: 'application/json' } })
      expect(api.status).toBe(name === 'caddy' ? 401 : 302)
    })

    it.skipIf(!runProxyTests)('authd\'s public host through the proxy serves the pages and refuses the check endpoints from outside', async () => {
      const base = `http://auth.example.test:${proxy().port}/t/${SLUG}`
      expect((await new Client().send(`${base}/login`)).status).toBe(200)
      const asked = { 'x-original-url': 'http://app.example.test/', 'x-original-method': 'GET', 'x-forwarded-method': 'GET', 'x-forwarded-proto': 'http', 'x-forwarded-host': 'app.example.test', 'x-forwarded-uri': '/' }
      for (const path of ['/authz/auth-request', '/authz/forward-auth', '//authz/forward-auth', '/AUTHZ/forward-auth', '/%61uthz/forward-auth', '/./authz/forward-auth']) {
        const answer = await new Client().send(`${base}${path}`, { headers: asked })
        expect({ path, status: answer.status }).toEqual({ path, status: 404 })
      }
      // authd reads a \\ in a path as /: written as it is (fetch would change it), it meets the same refusal, or a check
      // without its original request (400): never an answer.
      for (const path of ['/authz\\auth-request', '/authz\\forward-auth', '\\authz/auth-request', '/%2e%2e/acme/authz\\auth-request']) {
        const status = await rawStatus(proxy().port, `auth.example.test:${proxy().port}`, `/t/${SLUG}${path}`, asked)
        expect({ path, answered: status === 200 || status === 401 || status === 403 }, proxy().log()).toEqual({ path, answered: false })
      }
    })

    it.skipIf(!runProxyTests)('a client cannot choose the host authd judges: a Host with userinfo, or a request line naming another host', async () => {
      const target = `app.example.test:${proxy().port}`
      for (const host of [`app.example.test:1@public.example.test`, `${target}@public.example.test`]) {
        const status = await rawStatus(proxy().port, host, '/admin/secret')
        expect({ host, refused: status !== 200 }, proxy().log()).toEqual({ host, refused: true })
      }
      const status = await rawStatus(proxy().port, 'public.example.test', `http://${target}/admin/secret`)
      expect({ absolute: true, refused: status !== 200 }, proxy().log()).toEqual({ absolute: true, refused: true })
    })
  })
}

describe('who may ask, and where a sign-in may return', () => {
  it.skipIf(!runProxyTests)('refuses the checks from a peer that is not a trusted proxy (403), whatever headers it sends', async () => {
    const port = freePort()
    const other = await createTestContext({ AUTHD_PORT: String(port), AUTHD_HOST: '127.0.0.1', AUTHD_PUBLIC_URL: `http://auth.example.test:${port}`, AUTHD_TRUSTED_PROXIES: '192.0.2.1' })
    const otherServer = await startServer(other.runtime, silentLogger)
    try {
      await setForwardAuthDomains(other.runtime, other.tenantId, ['example.test'])
      await addAccessRule(other.runtime, other.tenantId, { domain: 'app.example.test', policy: 'bypass' })
      const base = `http://127.0.0.1:${port}/t/${other.tenantId}/authz`
      const forwardAuth = await fetch(`${base}/forward-auth`, { headers: { 'x-forwarded-method': 'GET', 'x-forwarded-proto': 'http', 'x-forwarded-host': 'app.example.test', 'x-forwarded-uri': '/', 'x-forwarded-for': '192.0.2.1' } })
      const authRequest = await fetch(`${base}/auth-request`, { headers: { 'x-original-url': 'http://app.example.test/', 'x-original-method': 'GET' } })
      expect([forwardAuth.status, authRequest.status]).toEqual([403, 403])
      expect(await forwardAuth.text()).toBe('Forward authentication answers trusted proxies only (AUTHD_TRUSTED_PROXIES)')
      expect(forwardAuth.headers.get('remote-user')).toBeNull()
    } finally {
      await otherServer.stop()
      await other.close()
    }
  })

  it.skipIf(!runProxyTests)('the login page refuses a return_to on another site (400, saying why), and takes one on the protected domain', async () => {
    const client = new Client()
    for (const foreign of ['http://evil.test/', 'http://example.test.evil.test/x', 'http://app.example.test@evil.test/', '//evil.test/']) {
      const page = await client.send(`${pages}/login?return_to=${encodeURIComponent(foreign)}`)
      expect({ foreign, status: page.status }).toEqual({ foreign, status: 400 })
      expect(page.text).toContain('This sign-in link leads to a site that is not registered for Acme. Sign in here instead.')
    }
    const own = await client.send(`${pages}/login?return_to=${encodeURIComponent(`${proxies.nginx.app}/x`)}`)
    expect(own.status).toBe(200)
    expect(own.text).toContain(`After signing in you go on to app.example.test:${proxies.nginx.port}.`)
  })
})

describe('the pages on the way back to an application', () => {
  it.skipIf(!runJourneys)('Chromium, without JavaScript: the login page, the set-up, code and no-access steps work by keyboard and pass axe (no serious or critical finding)', async () => {
    const browser: Browser = await sharedBrowser()
    const context = await browser.newContext({ javaScriptEnabled: false })
    const checker = await browser.newContext({ bypassCSP: true })
    const accessible = async (state: string) => expect({ state, violations: await seriousViolations(checker, page) }).toEqual({ state, violations: [] })
    const heading = async () => (await page.locator('h1').textContent())?.trim()
    const page = await context.newPage()
    try {
      const { email } = await ctx.addUser({ email: 'ally@example.com' })
      const wanted = `${proxies.nginx.app}/admin/settings`
      await page.goto(wanted)
      expect(await page.locator('main').textContent()).toContain(`After signing in you go on to app.example.test:${proxies.nginx.port}.`)
      await accessible('login, going on to an application')
      await page.getByLabel('E-mail address').fill(email)
      await page.getByLabel('Password').fill(PASSWORD)
      await loaded(page, () => page.keyboard.press('Enter'))
      // Signed in with a password only: /admin/ asks for a second factor, and Ally has none.
      expect(await heading()).toBe('Two-step verification needed')
      expect(await page.locator('main').textContent()).toContain('and your account has none yet')
      await accessible('second factor to set up')
      await loaded(page, () => page.getByRole('link', { name: 'Set up two-step verification' }).click())
      await loaded(page, () => page.getByRole('button', { name: 'Turn on two-step verification' }).click())
      const secret = (await page.locator('p code').textContent())!.replaceAll(' ', '')
      await page.getByLabel('Code', { exact: true }).fill(currentCode(secret))
      await loaded(page, () => page.getByRole('button', { name: 'Turn on' }).click())
      ctx.clock.advance(30)
      await page.goto(wanted)
      expect(await heading()).toBe('Two-step verification needed')
      await accessible('second factor asked')
      await page.getByLabel('Code', { exact: true }).fill(currentCode(secret) === '000000' ? '111111' : '000000')
      await loaded(page, () => page.keyboard.press('Enter'))
      expect(await page.locator('.problem').textContent()).toContain('The code is wrong or was used already.')
      await accessible('second factor refused')
      await page.getByLabel('Code', { exact: true }).fill(currentCode(secret))
      await loaded(page, () => page.keyboard.press('Enter'))
      expect(page.url()).toBe(wanted)
      expect(JSON.parse((await page.locator('#seen').textContent())!).headers['remote-user']).toBe(email)
      // Not in admins: the application's admins-only pages are refused at authd with a way out.
      await page.goto(`${pages}/login?return_to=${encodeURIComponent(`${proxies.nginx.app}/admins-only/x`)}`)
      expect(await heading()).toBe(`You do not have access to app.example.test:${proxies.nginx.port}`)
      await accessible('no access')
    } finally {
      await context.close()
      await checker.close()
    }
  }, 60_000)
})
