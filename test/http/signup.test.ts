// Sign-up and e-mail verification (product spec §15): off by default; a pending sign-up is not
// a user and blocks nobody; the verified code creates the account, with its sign-up's password,
// and answers exactly as a login does.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { setTenantSignup } from '../../src/core/signup/signup'
import { createUser } from '../../src/core/accounts/users'
import { createTestContext, PASSWORD, queryDatabase, type CallResult, type TestContext } from '../helpers'
import { otpIn, sentTo, startSmtp, type TestSmtp } from '../smtp'

const SIGNUP_ANSWER = (email: string) => ({ statusCode: 202, message: 'If the address can be registered, a verification code has been sent', data: email })
const invalidOtp = { statusCode: 400, message: 'Invalid or expired OTP', data: null }
const SIGNUP_PASSWORD = 'a sign-up passphrase of mine'

let ctx: TestContext
beforeEach(async () => {
  ctx = await createTestContext()
  await setTenantSignup(ctx.runtime, ctx.tenantId, 'open')
})
afterEach(() => ctx.close())

let peer = 0
const signup = (email: string, fields: Record<string, unknown> = {}, init: { peer?: string } = {}) =>
  ctx.call('POST', '/api/v1/auth/signup', { body: { email, password: SIGNUP_PASSWORD, firstName: 'Grace', lastName: 'Hopper', ...fields }, peer: init.peer ?? `198.51.100.${++peer}` })
const verify = (email: string, otp: string, init: { cookie?: string } = {}) => ctx.call('POST', '/api/v1/auth/verify-email', { body: { email, otp }, cookie: init.cookie })
const login = (email: string, password: string) => ctx.call('POST', '/api/v1/auth/login', { body: { email, password } })

/** The queued mails to an address, oldest first (what the outbox will deliver). */
const queued = (email: string) =>
  queryDatabase<{ kind: string; text_body: string }>(ctx, 'SELECT kind, text_body FROM mail_outbox WHERE recipient = $1 ORDER BY created_at, id', [email])

/** The code of the latest sign-up mail queued for the address. */
async function codeFor(email: string): Promise<string> {
  const mail = (await queued(email)).filter((m) => m.kind === 'signup-code').at(-1)
  if (!mail) throw new Error(`no sign-up code queued for ${email}`)
  return /\b(\d{6})\b/.exec(mail.text_body)![1]!
}

const userCount = async (email: string) => Number((await queryDatabase<{ n: number }>(ctx, 'SELECT count(*) AS n FROM users WHERE email = $1', [email]))[0]!.n)

describe('a closed tenant (the default)', () => {
  it('answers 403 "Sign-up is closed" to sign-up and verification, and queues nothing', async () => {
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'closed')
    const closed = { statusCode: 403, message: 'Sign-up is closed', data: null }
    expect((await signup('grace@example.com')).json).toEqual(closed)
    expect((await verify('grace@example.com', '123456')).json).toEqual(closed)
    expect(await queued('grace@example.com')).toEqual([])
  })

  it('is what a new tenant has', async () => {
    const other = await queryDatabase<{ signup: string }>(ctx, 'SELECT signup FROM tenants WHERE id = $1', [ctx.tenantId])
    expect(other).toEqual([{ signup: 'open' }])
    const tenant = await ctx.runtime.store.tenants.list()
    expect(tenant.map((t) => t.signup)).toEqual(['open'])
    const created = await import('../../src/core/tenants/tenants').then((m) => m.createTenant(ctx.runtime, { name: 'Fresh' }))
    expect(created.signup).toBe('closed')
  })
})

describe('POST /signup then POST /verify-email', () => {
  it('mails a code over SMTP; the code creates the account and answers exactly as a login', async () => {
    const smtp: TestSmtp = await startSmtp()
    const mailing = await createTestContext({ AUTHD_SMTP_URL: smtp.url })
    try {
      await setTenantSignup(mailing.runtime, mailing.tenantId, 'open')
      const asked = await mailing.call('POST', '/api/v1/auth/signup', { body: { email: ' Grace@Example.com ', password: SIGNUP_PASSWORD, firstName: 'Grace', lastName: 'Hopper' } })
      expect({ status: asked.status, json: asked.json }).toEqual({ status: 202, json: SIGNUP_ANSWER('grace@example.com') })
      // Not a user yet: the address cannot log in.
      expect((await mailing.call('POST', '/api/v1/auth/login', { body: { email: 'grace@example.com', password: SIGNUP_PASSWORD } })).status).toBe(401)

      await mailing.deliverMail()
      const mail = await smtp.waitFor(sentTo('grace@example.com'))
      expect(mail.subject).toBe('Acme: your sign-up code')
      const verified = await mailing.call('POST', '/api/v1/auth/verify-email', { body: { email: 'grace@example.com', otp: otpIn(mail) } })
      expect(verified.status).toBe(201)
      expect(verified.json).toEqual({
        statusCode: 201,
        message: 'Login successful',
        data: {
          response: {
            accessToken: expect.any(String),
            user: { userId: expect.any(String), email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', type: 'user', tenant: { tenantId: mailing.tenantId, name: 'Acme' } },
          },
        },
      })
      expect(verified.setCookie).toMatch(/refreshToken=[^;]+;.*HttpOnly/i)
      expect(verified.setCookie).toContain('authdDevice=')
      // The session works like a login's: /me with the access token, refresh with the cookie.
      const me = await mailing.call('GET', '/api/v1/auth/me', { headers: { authorization: `Bearer ${verified.json.data.response.accessToken}` } })
      expect(me.json.data.email).toBe('grace@example.com')
      expect((await mailing.call('GET', '/api/v1/auth/refresh-token', { cookie: `refreshToken=${verified.refreshCookie}` })).status).toBe(201)
      // The password is the sign-up's.
      expect((await mailing.call('POST', '/api/v1/auth/login', { body: { email: 'grace@example.com', password: SIGNUP_PASSWORD } })).status).toBe(201)
      // And the code is spent.
      expect((await mailing.call('POST', '/api/v1/auth/verify-email', { body: { email: 'grace@example.com', otp: otpIn(mail) } })).json).toEqual(invalidOtp)
    } finally {
      await mailing.close()
      await smtp.close()
    }
  })

  it('records the sign-up and the new account in the audit log, with the address masked and no code', async () => {
    await signup('grace@example.com')
    const code = await codeFor('grace@example.com')
    await verify('grace@example.com', code)
    const rows = await queryDatabase<{ type: string; user_id: string | null; detail: string }>(
      ctx,
      "SELECT type, user_id, detail FROM audit_events WHERE type LIKE 'signup.%' ORDER BY id",
    )
    expect(rows.map((r) => [r.type, JSON.parse(r.detail)])).toEqual([
      ['signup.requested', { email: 'g***@example.com', outcome: 'new', underLimits: true }],
      ['signup.completed', { email: 'g***@example.com' }],
    ])
    expect(rows[1]!.user_id).toEqual(expect.any(String))
    expect(JSON.stringify(rows)).not.toContain(code)
  })

  it('applies the password policy first: 400 naming the rule, nothing queued', async () => {
    const short = await signup('grace@example.com', { password: 'short' })
    expect(short.json).toEqual({ statusCode: 400, message: 'Password must be at least 15 characters long', data: null })
    const named = await signup('grace@example.com', { password: 'grace-hopper-is-my-name' })
    expect(named.json.message).toBe('Password must not contain your name')
    expect(await queued('grace@example.com')).toEqual([])
  })

  it('answers 400 naming the field for a bad address, a missing name or a missing field', async () => {
    expect((await signup('not an address')).json).toEqual({ statusCode: 400, message: 'email must be a valid e-mail address', data: null })
    expect((await signup('grace@example.com', { firstName: '  ' })).json).toEqual({ statusCode: 400, message: 'firstName must be 1 to 100 characters', data: null })
    const missing = await ctx.call('POST', '/api/v1/auth/signup', { body: { email: 'grace@example.com', password: SIGNUP_PASSWORD } })
    expect(missing.status).toBe(400)
    expect(missing.json.message).toContain('firstName')
    expect((await ctx.call('POST', '/api/v1/auth/verify-email', { body: { email: 'grace@example.com' } })).status).toBe(400)
    expect((await ctx.call('POST', '/api/v1/auth/signup', { rawBody: '{"email":', headers: { 'content-type': 'application/json' } })).status).toBe(400)
  })

  it('refuses a wrong code, an expired one, and the right one after 5 wrong tries', async () => {
    await signup('grace@example.com')
    let code = await codeFor('grace@example.com')
    const wrong = code === '000000' ? '000001' : '000000'
    for (let i = 0; i < 4; i++) expect((await verify('grace@example.com', wrong)).json).toEqual(invalidOtp)
    expect((await verify('grace@example.com', 'abcdef')).json).toEqual(invalidOtp)
    expect((await verify('grace@example.com', code)).json).toEqual(invalidOtp)

    ctx.clock.advance(61)
    await signup('grace@example.com')
    code = await codeFor('grace@example.com')
    ctx.clock.advance(10 * 60 + 1)
    expect((await verify('grace@example.com', code)).json).toEqual(invalidOtp)
    expect(await userCount('grace@example.com')).toBe(0)
  })

  it('gives exactly one account for 20 concurrent verifications of one code', async () => {
    await signup('grace@example.com')
    const code = await codeFor('grace@example.com')
    const answers = await Promise.all(Array.from({ length: 20 }, () => verify('grace@example.com', code)))
    expect(answers.map((a) => a.status).sort()).toEqual([201, ...Array(19).fill(400)])
    expect(await userCount('grace@example.com')).toBe(1)
  })
})

describe('names in the mail', () => {
  it('are one line without control or formatting characters: anything else is a 400 naming the field, and no mail', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ firstName: 'Mallory\n\nYour account is suspended: call +1 555 0100' }, 'firstName'],
      [{ firstName: 'Mall\rory' }, 'firstName'],
      [{ lastName: 'Hopper\u2028Acme support' }, 'lastName'],
      [{ lastName: 'moc.elpmaxe\u202e' }, 'lastName'],
      [{ firstName: 'tab\there' }, 'firstName'],
      [{ firstName: 'invisible\u2063mark' }, 'firstName'],
      [{ firstName: 'Gr\ufffdce' }, 'firstName'],
      [{ lastName: 'Z\u0301\u0302\u0303\u0304\u0305algo' }, 'lastName'],
    ]
    for (const [fields, field] of cases) {
      expect((await signup('grace@example.com', fields)).json).toEqual({ statusCode: 400, message: `${field} must be a single line without control or formatting characters`, data: null })
    }
    // Invisible fillers (ignorable code points) and blanks: a name that shows as nothing.
    for (const blank of ['\u3164', '\u115f\u1160']) expect((await signup('grace@example.com', { firstName: blank })).status).toBe(400)
    expect((await signup('grace@example.com', { firstName: '\u2800 \u2800' })).json).toEqual({ statusCode: 400, message: 'firstName must have a visible character', data: null })
    expect(await queued('grace@example.com')).toEqual([])
    // Names in any script stay: the mail's text part greets them as given.
    expect((await signup('grace@example.com', { firstName: 'Zoë', lastName: 'می\u200cخواهم' })).status).toBe(202)
    const [mail] = await queued('grace@example.com')
    expect(mail!.text_body.split('\n')[0]).toBe('Hello Zoë,')
  })
})

describe('no pre-hijacking', () => {
  it('a second sign-up with the same password replaces the first (a form sent again): only the newer code works', async () => {
    await signup('grace@example.com', { firstName: 'Gracie' })
    const first = await codeFor('grace@example.com')
    await ctx.deliverMail()
    ctx.clock.advance(61)
    await signup('grace@example.com')
    const second = await codeFor('grace@example.com')
    if (first !== second) expect((await verify('grace@example.com', first)).json).toEqual(invalidOtp)
    const verified = await verify('grace@example.com', second)
    expect(verified.json.data.response.user.firstName).toBe('Grace')
    expect((await login('grace@example.com', SIGNUP_PASSWORD)).status).toBe(201)
  })

  it('a pending sign-up blocks nobody: an admin creates the address meanwhile, and the code then creates nothing', async () => {
    await signup('grace@example.com', { password: 'the squatter passphrase' })
    const code = await codeFor('grace@example.com')
    const { user } = await createUser(ctx.runtime, { tenantId: ctx.tenantId, email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', password: PASSWORD })
    expect((await verify('grace@example.com', code)).json).toEqual(invalidOtp)
    expect(await userCount('grace@example.com')).toBe(1)
    expect((await login('grace@example.com', PASSWORD)).json.data.response.user.userId).toBe(user.id)
    expect((await login('grace@example.com', 'the squatter passphrase')).status).toBe(401)
    // The pending sign-up is gone with the attempt: no row holds its password hash any more.
    expect(await queryDatabase(ctx, 'SELECT tenant_id FROM pending_signups')).toEqual([])
  })

  it('a registered address gets the same answer, and its owner a "someone tried" notice instead of a code', async () => {
    const { email } = await ctx.addUser({ email: 'ada@example.com' })
    const res = await signup(email, { password: 'the squatter passphrase' })
    expect(res.json).toEqual(SIGNUP_ANSWER(email))
    expect((await queued(email)).map((m) => m.kind)).toEqual(['signup-attempt'])
    expect((await queued(email))[0]!.text_body).toContain('someone tried to create a Acme account with your address')
    expect((await login(email, PASSWORD)).status).toBe(201)
    expect((await login(email, 'the squatter passphrase')).status).toBe(401)
  })
})

describe('a tenant open to some domains', () => {
  it('mails a code to a listed domain only; others get the same answer and no mail', async () => {
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'domains:Example.org, example.net')
    expect((await ctx.runtime.store.tenants.get(ctx.tenantId))!.signup).toBe('domains:example.net,example.org')
    const allowed = await signup('grace@example.org')
    const refused = await signup('grace@example.com')
    expect(allowed.json).toEqual(SIGNUP_ANSWER('grace@example.org'))
    expect(refused.json).toEqual(SIGNUP_ANSWER('grace@example.com'))
    expect((await queued('grace@example.org')).map((m) => m.kind)).toEqual(['signup-code'])
    expect(await queued('grace@example.com')).toEqual([])
    // A sub-domain is another domain.
    await signup('grace@mail.example.org')
    expect(await queued('grace@mail.example.org')).toEqual([])
  })

  it('refuses the code (403) once the domain is no longer listed', async () => {
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'domains:example.org')
    await signup('grace@example.org')
    const code = await codeFor('grace@example.org')
    await setTenantSignup(ctx.runtime, ctx.tenantId, 'domains:example.net')
    expect((await verify('grace@example.org', code)).json).toEqual({ statusCode: 403, message: 'Sign-up is closed', data: null })
    expect(await userCount('grace@example.org')).toBe(0)
  })

  it('refuses a policy that is not closed, open or domains:…, naming the form', async () => {
    for (const bad of ['sometimes', 'domains:', 'domains:not a domain', 'domains:localhost']) {
      await expect(setTenantSignup(ctx.runtime, ctx.tenantId, bad)).rejects.toThrow(/signup/)
    }
    expect((await ctx.runtime.store.tenants.get(ctx.tenantId))!.signup).toBe('open')
  })
})

describe('limits', () => {
  // Someone signs up with another's address first: the owner is kept out no longer than the
  // per-address interval. Their own sign-up a minute later replaces the other one: the older
  // code is dead, theirs arrives by mail saying so, and it creates the account with their password.
  it('a sign-up made with the address first is replaced by the owner\'s a minute later: the old code dies, the new one arrives and works', async () => {
    const smtp: TestSmtp = await startSmtp()
    const mailing = await createTestContext({ AUTHD_SMTP_URL: smtp.url })
    try {
      mailing.clock.freeze()
      await setTenantSignup(mailing.runtime, mailing.tenantId, 'open')
      const ask = (password: string, peer: string) =>
        mailing.call('POST', '/api/v1/auth/signup', { body: { email: 'victim@example.com', password, firstName: 'Grace', lastName: 'Hopper' }, peer })
      const attackers = 'the attacker chose this one'
      expect((await ask(attackers, '203.0.113.7')).json).toEqual(SIGNUP_ANSWER('victim@example.com'))
      expect(await mailing.deliverMail()).toBe(1)
      const first = await smtp.waitFor(sentTo('victim@example.com'))
      expect(first.text).not.toContain('replaced')

      mailing.clock.advance(60)
      expect((await ask(SIGNUP_PASSWORD, '198.51.100.20')).json).toEqual(SIGNUP_ANSWER('victim@example.com'))
      expect(await mailing.deliverMail()).toBe(1)
      const second = await smtp.waitFor((m) => sentTo('victim@example.com')(m) && m !== first)
      expect(second.subject).toBe('Acme: your sign-up code')
      expect(second.text).toContain('replaced an earlier one for this address: the code sent for that one no longer works, only this newest code does')
      expect(second.text).toContain('If you did not ask for it, do not enter the code')
      expect(otpIn(second)).not.toBe(otpIn(first))

      const verifyWith = (otp: string) => mailing.call('POST', '/api/v1/auth/verify-email', { body: { email: 'victim@example.com', otp } })
      expect((await verifyWith(otpIn(first))).json).toEqual(invalidOtp)
      expect((await verifyWith(otpIn(second))).status).toBe(201)
      const loginWith = (password: string) => mailing.call('POST', '/api/v1/auth/login', { body: { email: 'victim@example.com', password } })
      expect((await loginWith(SIGNUP_PASSWORD)).status).toBe(201)
      expect((await loginWith(attackers)).status).toBe(401)
    } finally {
      mailing.close()
      await smtp.close()
    }
  })

  it('replaces a pending sign-up even within the minute: the older code dies at once, the newer one is mailed when the minute is over', async () => {
    ctx.clock.freeze()
    await signup('grace@example.com', { password: 'the attacker chose this one' })
    const firstCode = await codeFor('grace@example.com')
    await ctx.deliverMail()
    ctx.clock.advance(20)
    expect((await signup('grace@example.com')).json).toEqual(SIGNUP_ANSWER('grace@example.com'))
    expect((await verify('grace@example.com', firstCode)).json).toEqual(invalidOtp)
    const mails = await queryDatabase<{ kind: string; status: string; next_attempt_at: number }>(
      ctx,
      'SELECT kind, status, next_attempt_at FROM mail_outbox WHERE recipient = $1 ORDER BY created_at',
      ['grace@example.com'],
    )
    expect(mails.map((m) => [m.kind, m.status])).toEqual([['signup-code', 'sent'], ['signup-code', 'pending']])
    expect(mails[1]!.next_attempt_at - ctx.clock.now()).toBe(40_000)
    const newCode = await codeFor('grace@example.com')
    ctx.clock.advance(40)
    expect(await ctx.deliverMail()).toBe(1)
    expect((await verify('grace@example.com', newCode)).status).toBe(201)
    expect((await login('grace@example.com', SIGNUP_PASSWORD)).status).toBe(201)
  })

  it('says so in German too, where the sign-up asked in German', async () => {
    await signup('grace@example.com')
    await ctx.deliverMail()
    ctx.clock.advance(61)
    await ctx.call('POST', '/api/v1/auth/signup', {
      body: { email: 'grace@example.com', password: SIGNUP_PASSWORD, firstName: 'Grace', lastName: 'Hopper' },
      headers: { 'accept-language': 'de' },
    })
    const [, replacing] = await queued('grace@example.com')
    expect(replacing!.text_body).toContain('hat eine frühere für diese Adresse ersetzt: Der dafür gesendete Code gilt nicht mehr, nur noch dieser neueste.')
  })

  it('per address: at most 5 mails an hour, registered or not; past them the last code stays live', async () => {
    const { email } = await ctx.addUser({ email: 'ada@example.com' })
    let last = ''
    for (let i = 0; i < 7; i++) {
      expect((await signup(email)).json).toEqual(SIGNUP_ANSWER(email))
      expect((await signup('grace@example.com')).json).toEqual(SIGNUP_ANSWER('grace@example.com'))
      if (i === 4) last = await codeFor('grace@example.com')
      await ctx.deliverMail()
      ctx.clock.advance(61)
    }
    expect((await queued(email)).length).toBe(5)
    expect((await queued('grace@example.com')).length).toBe(5)
    // The sixth and seventh sign-ups, past the budget, left the fifth's code alone: it still works.
    expect((await verify('grace@example.com', last)).status).toBe(201)
  })

  // Six sign-ups with the owner's address in one second: each replaced the one before before its
  // mail left, so they spent one mail of the hour's five, not all of them, and the owner's own
  // sign-up a minute later is mailed (spec §28: locked out no longer than the interval).
  it('a burst of sign-ups spends one mail of the address\'s budget, not one each: the owner\'s sign-up a minute later is mailed and works', async () => {
    const smtp: TestSmtp = await startSmtp()
    const mailing = await createTestContext({ AUTHD_SMTP_URL: smtp.url })
    try {
      mailing.clock.freeze()
      await setTenantSignup(mailing.runtime, mailing.tenantId, 'open')
      const ask = (password: string, peer: string) =>
        mailing.call('POST', '/api/v1/auth/signup', { body: { email: 'victim@example.com', password, firstName: 'Grace', lastName: 'Hopper' }, peer })
      for (let i = 1; i <= 6; i++) expect((await ask('the attacker chose this one', `203.0.113.${i}`)).json).toEqual(SIGNUP_ANSWER('victim@example.com'))
      expect(await mailing.deliverMail()).toBe(1)
      const attackers = await smtp.waitFor(sentTo('victim@example.com'))

      mailing.clock.advance(60)
      expect((await ask(SIGNUP_PASSWORD, '198.51.100.20')).json).toEqual(SIGNUP_ANSWER('victim@example.com'))
      expect(await mailing.deliverMail()).toBe(1)
      const owners = await smtp.waitFor((m) => sentTo('victim@example.com')(m) && m !== attackers)
      expect((await mailing.call('POST', '/api/v1/auth/verify-email', { body: { email: 'victim@example.com', otp: otpIn(owners) } })).status).toBe(201)
      expect((await mailing.call('POST', '/api/v1/auth/login', { body: { email: 'victim@example.com', password: SIGNUP_PASSWORD } })).status).toBe(201)
    } finally {
      mailing.close()
      await smtp.close()
    }
  })

  it('per client IP: 20 sign-ups an hour, then 429 with Retry-After', async () => {
    const answers: CallResult[] = []
    for (let i = 0; i < 21; i++) answers.push(await signup(`person${i}@example.com`, {}, { peer: '203.0.113.9' }))
    expect(answers.slice(0, 20).every((a) => a.status === 202)).toBe(true)
    expect(answers[20]!.json).toEqual({ statusCode: 429, message: 'Too many requests', data: null })
    expect(Number(answers[20]!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await signup('late@example.com', {}, { peer: '203.0.113.10' })).status).toBe(202)
  })

  it('per client IP: 30 verifications in 10 minutes, then 429, whatever the addresses', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 31; i++) statuses.push((await ctx.call('POST', '/api/v1/auth/verify-email', { body: { email: `person${i}@example.com`, otp: '000000' }, peer: '203.0.113.7' })).status)
    expect(statuses).toEqual([...Array(30).fill(400), 429])
    ctx.clock.advance(10 * 60 + 1)
    expect((await ctx.call('POST', '/api/v1/auth/verify-email', { body: { email: 'person0@example.com', otp: '000000' }, peer: '203.0.113.7' })).status).toBe(400)
  })
})
