// The compiled executable, end to end: build dist/authd, set up through its CLI, serve on a
// free port, and use the API over a real socket as a client would.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { adminJourney } from '../admin-journey'
import { mfaJourney } from '../mfa-journey'
import { passkeyJourney } from '../passkey-journey'
import { signupJourney } from '../signup-journey'
import { BINARY, buildBinary, serveBinary, setUpAccount } from '../binary'
import { cliRunner } from '../cli-runner'
import { PASSWORD, tempDir, toResult } from '../helpers'
import { otpIn, sentTo, startSmtp, type TestSmtp } from '../smtp'

let dir: string
let authd: ReturnType<typeof cliRunner>

beforeAll(async () => {
  await buildBinary()
  dir = tempDir()
  // Run from an empty directory: the binary must need nothing beside it.
  authd = cliRunner([BINARY], dir, { AUTHD_REFRESH_GRACE: '1s' })
}, 180_000)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const serve = (env: Record<string, string>) => serveBinary(dir, env)

/** The binary serving with its mail going to a real SMTP server, for `journey`; then it must stop cleanly. */
async function withMailingServer(journey: (url: string, smtp: TestSmtp) => Promise<void>) {
  const smtp = await startSmtp()
  const { proc, url } = await serve({ AUTHD_SMTP_URL: smtp.url })
  try {
    await journey(url, smtp)
  } finally {
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
    await smtp.close()
  }
}

describe('dist/authd end to end', () => {
  it('CLI set-up, then login, refresh, reuse detection and logout over HTTP', async () => {
    expect((await authd(['--json', 'migrate'])).json.pending).toEqual([])
    const { tenantId } = (await authd(['--json', 'tenants', 'create', '--name', 'Acme'])).json
    const { key, keyId } = (await authd(['--json', 'api-keys', 'create', '--tenant', tenantId])).json
    const created = (await authd(['--json', 'users', 'create', '--tenant', tenantId, '--email', 'ada@example.com', '--first-name', 'Ada', '--last-name', 'Lovelace', '--password-stdin'], { stdin: PASSWORD })).json
    // The CLI shows whether the address is verified and the user's groups; the login answer is the interface's User.
    expect(created.emailVerifiedAt).toBeNull()
    expect(created.groups).toEqual([])
    const { emailVerifiedAt: _, groups: __, ...user } = created
    expect(user.email).toBe('ada@example.com')

    const { proc, url } = await serve({ AUTHD_REFRESH_GRACE: '1s' })
    try {
      const api = `${url}/api/v1/auth`
      const login = () =>
        fetch(`${api}/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD, rememberMe: true }),
        }).then(toResult)
      const refresh = (cookie: string) => fetch(`${api}/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } }).then(toResult)

      expect((await fetch(`${url}/readyz`)).status).toBe(200)
      const first = await login()
      expect(first.status).toBe(201)
      expect(first.json.data.response.user).toEqual(user)
      expect(first.setCookie).toContain('Max-Age=2592000')

      // Any service can verify the access token from the JWKS alone.
      const jwks = createRemoteJWKSet(new URL(`${api}/.well-known/jwks.json`))
      const { payload } = await jwtVerify(first.json.data.response.accessToken, jwks, { issuer: url, audience: `urn:authd:tenant:${tenantId}` })
      expect(payload).toMatchObject({ sub: user.userId, tid: tenantId, email: 'ada@example.com', type: 'user' })

      const rotated = await refresh(first.refreshCookie!)
      expect(rotated.status).toBe(201)
      await jwtVerify(rotated.json.data.response.accessToken, jwks, { issuer: url, audience: `urn:authd:tenant:${tenantId}` })

      // A spent token after the (1 s) grace period: 401, and the family is revoked.
      await Bun.sleep(1500)
      expect((await refresh(first.refreshCookie!)).status).toBe(401)
      expect((await refresh(rotated.refreshCookie!)).status).toBe(401)

      const second = await login()
      // The signed-in user: /me with the access token, until its session ends.
      const bearer = { authorization: `Bearer ${second.json.data.response.accessToken}` }
      const me = await fetch(`${api}/me`, { headers: bearer }).then(toResult)
      expect(me.json.data).toEqual(created)
      const loggedOut = await fetch(`${api}/logout`, { method: 'POST', headers: { cookie: `refreshToken=${second.refreshCookie}` } }).then(toResult)
      expect(loggedOut.json).toEqual({ statusCode: 200, message: 'Logged out', data: null })
      expect((await refresh(second.refreshCookie!)).status).toBe(401)
      expect((await fetch(`${api}/me`, { headers: bearer })).status).toBe(401)

      // The CLI writes while the server runs: a revoked key fails from the next request on.
      expect((await authd(['--json', 'api-keys', 'revoke', keyId])).code).toBe(0)
      expect((await login()).json).toEqual({ statusCode: 401, message: 'Unauthorized', data: null })
    } finally {
      proc.kill('SIGTERM')
      expect(await proc.exited).toBe(0)
    }
  }, 60_000)
})

describe('dist/authd end to end: sign-up', () => {
  it('the CLI opens the tenant to a domain; a sign-up code arrives by SMTP and creates the account, logged in', async () => {
    const { tenantId, key } = await setUpAccount(authd, 'ada.signup@example.com', PASSWORD)
    await withMailingServer((url, smtp) => signupJourney(authd, url, tenantId, key, smtp))
  }, 60_000)
})

describe('dist/authd end to end: two-factor authentication', () => {
  it('a user turns TOTP on, logs in through the challenge with a code and a recovery code; the CLI and the admin API reset it, and the user turns it off', async () => {
    const { tenantId, key } = await setUpAccount(authd, 'ada.mfa@example.com', PASSWORD)
    await withMailingServer((url, smtp) => mfaJourney(authd, url, tenantId, key, smtp, 'ada.mfa@example.com', PASSWORD))
  }, 60_000)
})

describe('dist/authd end to end: passkeys', () => {
  it('the CLI sets the relying party; a passkey is added and signs in alone (WebAuthn inside the binary); the CLI lists and deletes it', async () => {
    const { tenantId, key } = await setUpAccount(authd, 'ada.passkey@example.com', PASSWORD)
    await withMailingServer((url, smtp) => passkeyJourney(authd, url, tenantId, key, smtp, 'ada.passkey@example.com', PASSWORD))
  }, 60_000)
})

describe('dist/authd end to end: the admin API', () => {
  it('an admin key from the CLI manages users over HTTP; the CLI reads them back in the same shapes', async () => {
    const { tenantId } = await setUpAccount(authd, 'ada.admin@example.com', PASSWORD)
    const { proc, url } = await serve({})
    try {
      await adminJourney(authd, url, tenantId)
    } finally {
      proc.kill('SIGTERM')
      expect(await proc.exited).toBe(0)
    }
  }, 60_000)
})

const setUpAccountFor = async (email: string) => (await setUpAccount(authd, email, PASSWORD)).key

function client(url: string, key: string) {
  const api = `${url}/api/v1/auth`
  const json = (method: string, path: string, body: unknown) =>
    fetch(`${api}${path}`, { method, headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) }).then(toResult)
  return {
    login: (email: string, password: string) => json('POST', '/login', { email, password }),
    forgot: (email: string) => fetch(`${api}/forgot-password/${email}`, { headers: { 'x-api-key': key } }).then(toResult),
    change: (email: string, otp: string, newPassword: string) => json('POST', '/change-password', { email, otp, newPassword }),
    refresh: (cookie: string) => fetch(`${api}/refresh-token`, { headers: { cookie: `refreshToken=${cookie}` } }).then(toResult),
  }
}

describe('dist/authd end to end: the password reset journey', () => {
  it('forgot-password, the OTP read from the mail, change-password, the old cookie refused, login with the new password', async () => {
    const email = 'grace@example.com'
    const key = await setUpAccountFor(email)
    await withMailingServer(async (url, smtp) => {
      const api = client(url, key)
      const session = await api.login(email, PASSWORD)
      expect(session.status).toBe(201)
      expect((await api.forgot(email)).json).toEqual({ statusCode: 200, message: 'If the e-mail is registered, a password-reset OTP has been sent', data: email })
      const otp = otpIn(await smtp.waitFor(sentTo(email)))
      const changed = await api.change(email, otp, 'the compiler is my friend')
      expect(changed.status).toBe(200)
      expect(changed.json.data.email).toBe(email)
      expect((await api.refresh(session.refreshCookie!)).status).toBe(401)
      expect((await api.login(email, PASSWORD)).status).toBe(401)
      expect((await api.login(email, 'the compiler is my friend')).status).toBe(201)
      expect((await smtp.waitFor((m) => m.subject === 'Acme: your password was changed')).text).toContain('signed out')
    })
  }, 60_000)

  it('an SMTP outage and a crash delay the OTP mail, but do not lose it', async () => {
    const smtp = await startSmtp()
    smtp.refusing = true
    const email = 'outage@example.com'
    const key = await setUpAccountFor(email)
    let { proc, url } = await serve({ AUTHD_SMTP_URL: smtp.url })
    try {
      expect((await client(url, key).forgot(email)).status).toBe(200)
      // Wait until the worker has tried and failed at least once, then crash the server.
      for (let i = 0; i < 100; i++) {
        const [message] = (await authd(['--json', 'mail', 'list', '--pending'])).json
        if (message?.attempts >= 1 && message.status === 'pending') break
        await Bun.sleep(100)
      }
      expect((await authd(['--json', 'mail', 'list', '--pending'])).json[0]).toMatchObject({ recipient: email, kind: 'password-reset-otp', lastError: expect.stringContaining('450') })
      proc.kill('SIGKILL')
      await proc.exited
      expect(smtp.messages).toHaveLength(0)

      smtp.refusing = false
      ;({ proc, url } = await serve({ AUTHD_SMTP_URL: smtp.url }))
      const otp = otpIn(await smtp.waitFor(sentTo(email), 30_000))
      expect((await client(url, key).change(email, otp, 'delayed but never lost')).status).toBe(200)
      expect(smtp.messages.filter(sentTo(email)).filter((m) => m.subject?.includes('reset code'))).toHaveLength(1)
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
      await smtp.close()
    }
  }, 90_000)
})
