// Two-factor authentication with TOTP (product spec §17), through the HTTP API. Codes are
// computed from the secret by core/totp.ts, itself checked against the RFC 6238 vectors
// (test/unit/totp.test.ts).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createApiKey } from '../../src/core/tenants/api-keys'
import { createTenant } from '../../src/core/tenants/tenants'
import { setUserDisabled, setUserPassword } from '../../src/core/accounts/users'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { createTestContext, PASSWORD, queryDatabase, type CallResult, type TestContext } from '../helpers'

const invalidCode = { statusCode: 400, message: 'Invalid or expired code', data: null }
let ctx: TestContext
let email: string
beforeEach(async () => {
  ctx = await createTestContext()
  email = (await ctx.addUser({ email: 'ada@example.com' })).email
})
afterEach(() => ctx.close())

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())
const login = (password = PASSWORD, init: { apiKey?: string } = {}) => ctx.call('POST', '/api/v1/auth/login', { body: { email, password }, apiKey: init.apiKey })
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
/** The code of the current step, or of `drift` steps away. */
const codeOf = (secret: string, drift = 0) => totpCode(secret, totpStep(ctx.clock.now()) + drift)
/** Moves to the next 30-second step, so that a new code is not a replay of the last one used. */
const nextStep = () => ctx.clock.advance(30)
const verify = (challengeToken: string, code: string, init: { apiKey?: string; peer?: string } = {}) =>
  ctx.call('POST', '/api/v1/auth/mfa/verify', { body: { challengeToken, code }, apiKey: init.apiKey, peer: init.peer })

/** Logs in, enrols, confirms: the secret and the recovery codes. */
async function enrol(): Promise<{ secret: string; recoveryCodes: string[] }> {
  const token = (await login()).json.data.response.accessToken
  const started = await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })
  expect(started.status).toBe(200)
  const { secret, otpauthUrl } = started.json.data
  expect(otpauthUrl).toBe(`otpauth://totp/Acme:ada%40example.com?secret=${secret}&issuer=Acme&algorithm=SHA1&digits=6&period=30`)
  const confirmed = await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), body: { code: codeOf(secret) } })
  expect(confirmed.status).toBe(200)
  return { secret, recoveryCodes: confirmed.json.data.recoveryCodes }
}

async function challenge(): Promise<string> {
  const res = await login()
  expect(res.json.data.response.mfaRequired).toBe(true)
  return res.json.data.response.challengeToken
}

describe('enrolment', () => {
  it('gives a secret, turns on with a code, and shows 10 recovery codes once; a mail tells the user', async () => {
    const { recoveryCodes } = await enrol()
    expect(recoveryCodes).toHaveLength(10)
    expect(new Set(recoveryCodes).size).toBe(10)
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/)
    const mails = await queryDatabase<{ kind: string; subject: string }>(ctx, "SELECT kind, subject FROM mail_outbox WHERE recipient = $1 AND kind LIKE 'mfa-%'", [email])
    expect(mails).toEqual([{ kind: 'mfa-enrolled', subject: 'Acme: two-factor authentication was turned on' }])
  })

  it('refuses a wrong code at confirmation and stays off; a second enrolment when on is 409', async () => {
    const token = (await login()).json.data.response.accessToken
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })).json.data
    const wrong = codeOf(secret) === '000000' ? '000001' : '000000'
    expect((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), body: { code: wrong } })).json).toEqual(invalidCode)
    expect((await login()).json.data.response.accessToken).toEqual(expect.any(String))
    await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), body: { code: codeOf(secret) } })
    expect((await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })).status).toBe(409)
  })

  it('needs a signed-in user', async () => {
    expect((await ctx.call('POST', '/api/v1/auth/mfa/totp')).status).toBe(401)
  })
})

describe('login with a second factor', () => {
  it('answers the right password with a challenge (no token, no cookie), then the code with the login answer and amr pwd+otp', async () => {
    const { secret } = await enrol()
    nextStep()
    const outcomes: string[] = []
    ctx.runtime.events.listen((e) => e.kind === 'login' && outcomes.push(e.outcome))
    const first = await login()
    expect({ status: first.status, json: first.json }).toEqual({
      status: 201,
      json: { statusCode: 201, message: 'Second factor required', data: { response: { mfaRequired: true, challengeToken: expect.any(String), methods: ['totp', 'recovery'] } } },
    })
    expect(first.setCookie).toBeNull()
    const passed = await verify(first.json.data.response.challengeToken, codeOf(secret))
    expect(passed.status).toBe(201)
    expect(passed.json.data.response.user.email).toBe(email)
    expect(passed.setCookie).toContain('refreshToken=')
    expect(claims(passed.json.data.response.accessToken).amr).toEqual(['pwd', 'otp'])
    // The metrics count the challenge, then the login once it is passed.
    expect(outcomes).toEqual(['challenged', 'succeeded'])
    // The session keeps its amr across refreshes.
    const refreshed = await ctx.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${passed.refreshCookie}` })
    expect(claims(refreshed.json.data.response.accessToken).amr).toEqual(['pwd', 'otp'])
  })

  it('answers a wrong password exactly as for a user without a second factor', async () => {
    await enrol()
    const enrolled = await login('a wrong password here')
    email = (await ctx.addUser({ email: 'bob@example.com' })).email
    const plain = await login('a wrong password here')
    expect({ status: enrolled.status, body: enrolled.text }).toEqual({ status: plain.status, body: plain.text })
  })

  it('accepts a code once: the same code is refused on the next challenge', async () => {
    const { secret } = await enrol()
    nextStep()
    const code = codeOf(secret)
    expect((await verify(await challenge(), code)).status).toBe(201)
    expect((await verify(await challenge(), code)).json).toEqual(invalidCode)
  })

  it('accepts a code typed in the groups authenticator apps show ("123 456"), at enrolment and at login', async () => {
    const token = (await login()).json.data.response.accessToken
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })).json.data
    const grouped = (code: string) => `${code.slice(0, 3)} ${code.slice(3)}`
    expect((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), body: { code: grouped(codeOf(secret)) } })).status).toBe(200)
    nextStep()
    const passed = await verify(await challenge(), ` ${grouped(codeOf(secret))} `)
    expect(passed.status).toBe(201)
    nextStep()
    expect((await verify(await challenge(), `${codeOf(secret).slice(0, 3)}-${codeOf(secret).slice(3)}x`)).json).toEqual(invalidCode)
  })

  it('accepts one step of clock drift either way, not two', async () => {
    const { secret } = await enrol()
    for (const drift of [-1, 1]) {
      ctx.clock.advance(90)
      expect((await verify(await challenge(), codeOf(secret, drift))).status).toBe(201)
    }
    for (const drift of [-2, 2]) {
      ctx.clock.advance(150)
      expect((await verify(await challenge(), codeOf(secret, drift))).json).toEqual(invalidCode)
    }
  })

  it('ends a challenge after 5 wrong codes, and after 5 minutes; a challenge is single use', async () => {
    const { secret } = await enrol()
    nextStep()
    let token = await challenge()
    const wrong = (c: string) => (c === '000000' ? '000001' : '000000')
    for (let i = 0; i < 5; i++) expect((await verify(token, wrong(codeOf(secret)))).json).toEqual(invalidCode)
    expect((await verify(token, codeOf(secret))).json).toEqual(invalidCode)
    // (those 5 wrong codes started the account's back-off: 1 s)
    ctx.clock.advance(2)

    token = await challenge()
    ctx.clock.advance(5 * 60 + 1)
    expect((await verify(token, codeOf(secret))).json).toEqual(invalidCode)

    token = await challenge()
    nextStep()
    expect((await verify(token, codeOf(secret))).status).toBe(201)
    nextStep()
    expect((await verify(token, codeOf(secret))).json).toEqual(invalidCode)
  })

  it("binds a challenge to its tenant: another tenant's API key finds none", async () => {
    const { secret } = await enrol()
    nextStep()
    const other = await createTenant(ctx.runtime, { name: 'Other' })
    const { key } = await createApiKey(ctx.runtime, { tenantId: other.id })
    const token = await challenge()
    expect((await verify(token, codeOf(secret), { apiKey: key })).json).toEqual(invalidCode)
    expect((await verify(token, codeOf(secret))).status).toBe(201)
  })

  it('gives one session for 20 concurrent verifications of one challenge', async () => {
    const { secret } = await enrol()
    nextStep()
    const token = await challenge()
    const answers = await Promise.all(Array.from({ length: 20 }, () => verify(token, codeOf(secret))))
    expect(answers.map((a) => a.status).sort()).toEqual([201, ...Array(19).fill(400)])
    const sessions = await queryDatabase<{ n: number }>(ctx, "SELECT count(*) AS n FROM refresh_families WHERE amr = 'pwd,otp'")
    expect(Number(sessions[0]!.n)).toBe(1)
  })

  it('refuses a challenge whose user was disabled after it was issued, and does not revive it on re-enabling', async () => {
    const { secret } = await enrol()
    nextStep()
    const token = await challenge()
    const userId = (await queryDatabase<{ id: string }>(ctx, 'SELECT id FROM users WHERE email = $1', [email]))[0]!.id
    await setUserDisabled(ctx.runtime, userId, true)
    expect((await verify(token, codeOf(secret))).json).toEqual({ statusCode: 403, message: 'User is disabled', data: null })
    // Enabled again, the user needs a new login: the old challenge stays spent.
    await setUserDisabled(ctx.runtime, userId, false)
    expect((await verify(token, codeOf(secret))).json).toEqual(invalidCode)
  })

  it('ends a live challenge when the password changes: it proved the old one', async () => {
    const { secret } = await enrol()
    nextStep()
    const token = await challenge()
    const userId = (await queryDatabase<{ id: string }>(ctx, 'SELECT id FROM users WHERE email = $1', [email]))[0]!.id
    await setUserPassword(ctx.runtime, userId, 'a brand new passphrase, set by an admin')
    expect((await verify(token, codeOf(secret))).json).toEqual(invalidCode)
    // The factor itself is untouched: the new password's challenge passes with the same code.
    expect((await verify((await login('a brand new passphrase, set by an admin')).json.data.response.challengeToken, codeOf(secret))).status).toBe(201)
  })

  it("counts wrong codes toward the account's login back-off, which the right password alone does not end", async () => {
    const { secret } = await enrol()
    nextStep()
    const wrong = codeOf(secret) === '000000' ? '000001' : '000000'
    const answers: CallResult[] = []
    // 5 wrong codes (the back-off's threshold), each on a fresh challenge from the same IP:
    // every login in between has the right password, and yet the run goes on.
    const challengeFrom = async () => (await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, peer: '198.51.100.1' })).json.data.response.challengeToken
    for (let i = 0; i < 5; i++) answers.push(await verify(await challengeFrom(), wrong, { peer: '198.51.100.1' }))
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400, 400])
    const token = (await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, peer: '198.51.100.1' })).status
    expect(token).toBe(429)
  })

  it('ends the back-off run with a passed challenge: the wrong codes before it no longer count', async () => {
    const { secret } = await enrol()
    nextStep()
    const wrong = () => (codeOf(secret) === '000000' ? '000001' : '000000')
    const challengeFrom = async () => (await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, peer: '198.51.100.1' })).json.data.response.challengeToken
    const answers: number[] = []
    for (let i = 0; i < 4; i++) answers.push((await verify(await challengeFrom(), wrong(), { peer: '198.51.100.1' })).status)
    answers.push((await verify(await challengeFrom(), codeOf(secret), { peer: '198.51.100.1' })).status)
    nextStep()
    // Four more: under the threshold again only if the pass ended the run (else the 5th in a
    // row holds the next login back).
    for (let i = 0; i < 4; i++) answers.push((await verify(await challengeFrom(), wrong(), { peer: '198.51.100.1' })).status)
    expect(answers).toEqual([400, 400, 400, 400, 201, 400, 400, 400, 400])
    expect((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, peer: '198.51.100.1' })).status).toBe(201)
  })
})

describe('recovery codes', () => {
  it('pass a challenge once each, and each use mails the user with the codes left', async () => {
    const { recoveryCodes } = await enrol()
    const passed = await verify(await challenge(), recoveryCodes[0]!.toUpperCase())
    expect(passed.status).toBe(201)
    expect(claims(passed.json.data.response.accessToken).amr).toEqual(['pwd', 'otp'])
    expect((await verify(await challenge(), recoveryCodes[0]!)).json).toEqual(invalidCode)
    const [mail] = await queryDatabase<{ text_body: string }>(ctx, "SELECT text_body FROM mail_outbox WHERE kind = 'mfa-recovery-used'")
    expect(mail!.text_body).toContain('You have 9 recovery codes left.')
  })

  it('are stored only as keyed hashes, and the TOTP secret only sealed', async () => {
    const { secret, recoveryCodes } = await enrol()
    const tables = JSON.stringify(await queryDatabase(ctx, 'SELECT * FROM mfa_totp')) + JSON.stringify(await queryDatabase(ctx, 'SELECT * FROM mfa_recovery_codes'))
    expect(tables).not.toContain(secret)
    for (const code of recoveryCodes) expect(tables).not.toContain(code.replace('-', ''))
    for (const code of recoveryCodes) expect(tables).not.toContain(code)
  })
})

describe('turning it off', () => {
  it('with a code: login asks for the password only again, and a mail tells the user', async () => {
    const { secret } = await enrol()
    nextStep()
    const token = (await verify(await challenge(), codeOf(secret))).json.data.response.accessToken
    nextStep()
    expect((await ctx.call('DELETE', '/api/v1/auth/mfa/totp', { headers: bearer(token), body: { code: '000000' === codeOf(secret) ? '000001' : '000000' } })).json).toEqual(invalidCode)
    const off = await ctx.call('DELETE', '/api/v1/auth/mfa/totp', { headers: bearer(token), body: { code: codeOf(secret) } })
    expect(off.json).toEqual({ statusCode: 200, message: 'Two-factor authentication is off', data: null })
    expect((await login()).json.data.response.accessToken).toEqual(expect.any(String))
    const kinds = await queryDatabase<{ kind: string }>(ctx, "SELECT kind FROM mail_outbox WHERE kind LIKE 'mfa-%' ORDER BY created_at, id")
    expect(kinds.map((k) => k.kind)).toEqual(['mfa-enrolled', 'mfa-disabled'])
    expect(await queryDatabase(ctx, 'SELECT * FROM mfa_recovery_codes')).toEqual([])
  })

  it('with a recovery code: one mail, that it was turned off (no "used to log in" notice)', async () => {
    const { recoveryCodes } = await enrol()
    const token = (await verify(await challenge(), recoveryCodes[0]!)).json.data.response.accessToken
    const off = await ctx.call('DELETE', '/api/v1/auth/mfa/totp', { headers: bearer(token), body: { code: recoveryCodes[1] } })
    expect(off.json).toEqual({ statusCode: 200, message: 'Two-factor authentication is off', data: null })
    const kinds = await queryDatabase<{ kind: string }>(ctx, "SELECT kind FROM mail_outbox WHERE kind LIKE 'mfa-%' ORDER BY created_at, id")
    expect(kinds.map((k) => k.kind)).toEqual(['mfa-enrolled', 'mfa-recovery-used', 'mfa-disabled'])
  })
})

/** A fresh context whose 429s leave at once, and ada signed in through the challenge with TOTP on. */
async function signedInWithTotpRefusingAtOnce(): Promise<{ secret: string; token: string }> {
  await ctx.close()
  ctx = await createTestContext({ AUTHD_REFUSAL_HOLD_MS: '0' })
  email = (await ctx.addUser({ email: 'ada@example.com' })).email
  const { secret } = await enrol()
  nextStep()
  return { secret, token: (await verify(await challenge(), codeOf(secret))).json.data.response.accessToken }
}

describe('step-up: a stolen token cannot change how the account is protected (§18)', () => {
  const stepUpRequired = {
    statusCode: 403,
    message: 'Step-up required: confirm your password or code with POST /api/v1/auth/reauthenticate',
    data: null,
  }
  const reauthenticate = (token: string, body: Record<string, unknown>, peer?: string) => ctx.call('POST', '/api/v1/auth/reauthenticate', { headers: bearer(token), body, peer })

  it('refuses to start enrolment in a session whose proof is over 5 minutes old, until the password proves it again', async () => {
    const token = (await login()).json.data.response.accessToken
    ctx.clock.advance(5 * 60 + 1)
    const refused = await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })
    expect(refused.json).toEqual(stepUpRequired)
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="insufficient_user_authentication", max_age=300')
    expect((await reauthenticate(token, { password: 'not my password at all' })).json).toEqual({ statusCode: 400, message: 'Invalid password or code', data: null })
    const proved = await reauthenticate(token, { password: PASSWORD })
    expect(proved.status).toBe(200)
    expect(ctx.clock.now() - Date.parse(proved.json.data.authTime)).toBeLessThan(5000)
    expect((await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })).status).toBe(200)
    // Neither both proofs nor none.
    expect((await reauthenticate(token, {})).json).toEqual({ statusCode: 400, message: 'Give exactly one of password, code, or a passkey response with its challengeId', data: null })
    expect((await reauthenticate(token, { password: PASSWORD, code: '123456' })).json).toEqual({ statusCode: 400, message: 'Give exactly one of password, code, or a passkey response with its challengeId', data: null })
  })

  it('refuses to turn the factor off in an old session, and a current code (once) proves the session again', async () => {
    const { secret } = await enrol()
    nextStep()
    const token = (await verify(await challenge(), codeOf(secret))).json.data.response.accessToken
    ctx.clock.advance(5 * 60 + 1)
    expect((await ctx.call('DELETE', '/api/v1/auth/mfa/totp', { headers: bearer(token), body: { code: codeOf(secret) } })).json).toEqual(stepUpRequired)
    const code = codeOf(secret)
    expect((await reauthenticate(token, { code })).status).toBe(200)
    // The code is spent: a replay proves nothing.
    expect((await reauthenticate(token, { code })).status).toBe(400)
    nextStep()
    expect((await ctx.call('DELETE', '/api/v1/auth/mfa/totp', { headers: bearer(token), body: { code: codeOf(secret) } })).status).toBe(200)
  })

  it("counts every wrong code at turning it off against the account's login back-off: a stolen token gets 5 guesses, not 300", async () => {
    const { secret, token } = await signedInWithTotpRefusingAtOnce()
    const wrong = String((Number(codeOf(secret)) + 500_000) % 1_000_000).padStart(6, '0')
    const statuses: number[] = []
    for (let i = 0; i < 30; i++) statuses.push((await ctx.call('DELETE', '/api/v1/auth/mfa/totp', { headers: bearer(token), body: { code: wrong }, peer: '203.0.113.66' })).status)
    expect(statuses).toEqual([...Array(5).fill(400), ...Array(25).fill(429)])
    // The same budget as at login and at reauthenticate: the right code waits its turn too.
    expect((await ctx.call('DELETE', '/api/v1/auth/mfa/totp', { headers: bearer(token), body: { code: codeOf(secret) }, peer: '203.0.113.66' })).status).toBe(429)
    expect((await reauthenticate(token, { password: PASSWORD }, '203.0.113.66')).status).toBe(429)
    expect((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, peer: '203.0.113.66' })).status).toBe(429)
  })

  it('does not count a code sent twice (a double click) as a guess: the account is not put in back-off', async () => {
    const { secret, token } = await signedInWithTotpRefusingAtOnce()
    nextStep()
    const code = codeOf(secret)
    const answers = await Promise.all(Array.from({ length: 10 }, () => reauthenticate(token, { code }, '203.0.113.70')))
    expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(9).fill(400)])
    // The same code at turning the factor off: a replay, refused, and still no back-off.
    for (let i = 0; i < 6; i++) expect((await ctx.call('DELETE', '/api/v1/auth/mfa/totp', { headers: bearer(token), body: { code }, peer: '203.0.113.70' })).status).toBe(400)
    expect((await reauthenticate(token, { password: PASSWORD }, '203.0.113.70')).status).toBe(200)
  })

  it('changes the password from a session only with a recent proof; the other sessions end, this one goes on', async () => {
    const other = await login()
    const token = (await login()).json.data.response.accessToken
    const change = (newPassword: string) => ctx.call('POST', '/api/v1/auth/me/password', { headers: bearer(token), body: { newPassword } })
    ctx.clock.advance(5 * 60 + 1)
    expect((await change('a brand new passphrase of mine')).json).toEqual(stepUpRequired)
    expect((await login('a brand new passphrase of mine')).status).toBe(401)
    expect((await reauthenticate(token, { password: PASSWORD })).status).toBe(200)
    expect((await change('short')).json).toEqual({ statusCode: 400, message: 'Password must be at least 15 characters long', data: null })
    const changed = await change('a brand new passphrase of mine')
    expect(changed.json).toMatchObject({ statusCode: 200, message: 'Password changed', data: { email } })
    expect((await login('a brand new passphrase of mine')).status).toBe(201)
    expect((await login()).status).toBe(401)
    expect((await ctx.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${other.refreshCookie}` })).status).toBe(401)
    expect((await ctx.call('GET', '/api/v1/auth/me', { headers: bearer(token) })).status).toBe(200)
    const [notice] = await queryDatabase<{ kind: string }>(ctx, "SELECT kind FROM mail_outbox WHERE kind = 'password-changed' AND recipient = $1", [email])
    expect(notice).toEqual({ kind: 'password-changed' })
  })

  it("counts wrong codes at confirming an enrolment against the account's login back-off too", async () => {
    await ctx.close()
    ctx = await createTestContext({ AUTHD_REFUSAL_HOLD_MS: '0' })
    email = (await ctx.addUser({ email: 'ada@example.com' })).email
    const token = (await login()).json.data.response.accessToken
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })).json.data
    const wrong = String((Number(codeOf(secret)) + 500_000) % 1_000_000).padStart(6, '0')
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) statuses.push((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), body: { code: wrong }, peer: '203.0.113.67' })).status)
    expect(statuses).toEqual([...Array(5).fill(400), ...Array(5).fill(429)])
  })

  it('ends every other session when the factor is turned on: those opened with the password alone do not keep the account', async () => {
    const other = await login()
    const token = (await login()).json.data.response.accessToken
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })).json.data
    expect((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), body: { code: codeOf(secret) } })).status).toBe(200)
    expect((await ctx.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${other.refreshCookie}` })).status).toBe(401)
    expect((await ctx.call('GET', '/api/v1/auth/me', { headers: bearer(other.json.data.response.accessToken) })).status).toBe(401)
    // The session that turned it on goes on.
    expect((await ctx.call('GET', '/api/v1/auth/me', { headers: bearer(token) })).status).toBe(200)
  })
})

describe('the audit log', () => {
  it('records every step: enrolment, a refused code, the challenge, a wrong code, the login, a recovery code, turning off', async () => {
    const token = (await login()).json.data.response.accessToken
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })).json.data
    const wrong = (c: string) => (c === '000000' ? '000001' : '000000')
    await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), body: { code: wrong(codeOf(secret)) } })
    const { recoveryCodes } = (await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), body: { code: codeOf(secret) } })).json.data
    nextStep()
    const first = await challenge()
    await verify(first, wrong(codeOf(secret)))
    await verify(first, codeOf(secret))
    await verify(await challenge(), recoveryCodes[0])
    nextStep()
    await ctx.call('DELETE', '/api/v1/auth/mfa/totp', { headers: bearer(token), body: { code: codeOf(secret) } })
    const userId = (await queryDatabase<{ id: string }>(ctx, 'SELECT id FROM users WHERE email = $1', [email]))[0]!.id
    const events = (await ctx.runtime.store.audit.query({ userId, limit: 100 })).sort((a, b) => a.id - b.id)
    expect(events.map((e) => [e.type, e.detail?.stage ?? e.detail?.secondFactor ?? e.detail?.with ?? null])).toEqual([
      ['user.created', null],
      ['login.succeeded', null],
      ['mfa.enrolment_started', null],
      ['mfa.failed', 'enrolment'],
      ['mfa.enrolled', null],
      ['mfa.challenged', null],
      ['mfa.failed', 'login'],
      ['login.succeeded', 'totp'],
      ['mfa.challenged', null],
      ['mfa.recovery_code_used', null],
      ['login.succeeded', 'recovery'],
      ['mfa.disabled', 'totp'],
    ])
    expect(new Set(events.map((e) => e.tenantId))).toEqual(new Set([ctx.tenantId]))
  })
})

describe('removal by an administrator (a lost authenticator)', () => {
  it('DELETE /api/v1/admin/users/{id}/mfa removes the factor, mails the user, and is audited with the key', async () => {
    await enrol()
    const userId = (await queryDatabase<{ id: string }>(ctx, 'SELECT id FROM users WHERE email = $1', [email]))[0]!.id
    const admin = await createApiKey(ctx.runtime, { tenantId: ctx.tenantId, scope: 'admin' })
    const removed = await ctx.call('DELETE', `/api/v1/admin/users/${userId}/mfa`, { apiKey: admin.key })
    expect(removed.json).toEqual({ statusCode: 200, message: 'Second factor removed', data: { userId, removed: true } })
    expect((await login()).json.data.response.accessToken).toEqual(expect.any(String))
    expect((await ctx.call('DELETE', `/api/v1/admin/users/${userId}/mfa`, { apiKey: admin.key })).json.data).toEqual({ userId, removed: false })
    const kinds = await queryDatabase<{ kind: string }>(ctx, "SELECT kind FROM mail_outbox WHERE kind LIKE 'mfa-%' ORDER BY created_at, id")
    expect(kinds.map((k) => k.kind)).toEqual(['mfa-enrolled', 'mfa-disabled'])
    const events = await ctx.runtime.store.audit.query({ type: 'mfa.reset' })
    expect(events.map((e) => e.apiKeyId)).toEqual([admin.apiKey.id, admin.apiKey.id])
  })
})
