// Erasure is real: after delivery, the setup token and the OTP a mail carried, and after a
// user is deleted, their address, names, user agent, sealed TOTP secret and passkeys cannot be found
// anywhere in the raw database files (main file and WAL), as someone who copies the data
// directory of a running server would read them.
import { afterEach, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { inviteUser } from '../../src/core/accounts/setup-password'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { createUser, deleteUser } from '../../src/core/accounts/users'
import { createTestContext, PASSWORD, queryDatabase, requestOtp, type TestContext } from '../helpers'
import { SoftwareAuthenticator } from '../software-authenticator'

let ctx: TestContext
afterEach(() => ctx?.close())

/** The database files as bytes on disk, while the server still has them open. */
const rawFiles = () =>
  ['', '-wal']
    .map((suffix) => {
      try {
        return readFileSync(ctx.runtime.config.databasePath + suffix).toString('latin1')
      } catch {
        return ''
      }
    })
    .join('\n')

describe('delivered mail', () => {
  it('leaves no trace of the setup token or OTP it carried in the raw database files', async () => {
    ctx = await createTestContext()
    const { user } = await createUser(ctx.runtime, { tenantId: ctx.tenantId, email: 'new@example.com', firstName: 'Newt', lastName: 'S' })
    const { setupToken } = await inviteUser(ctx.runtime, user.id)
    const { email } = await ctx.addUser()
    const otp = await requestOtp(ctx, email)
    // The OTP is six digits: look for it as the mail carried it, not as digits anywhere.
    const otpInMail = `    ${otp}\n`
    // Before delivery the secrets are in the files (the outbox must survive a crash)...
    expect(rawFiles()).toContain(setupToken)
    expect(rawFiles()).toContain(otpInMail)
    expect(await ctx.deliverMail()).toBe(2)
    // ...and after it, nowhere: not in a freed cell, an old page or a WAL frame.
    const raw = rawFiles()
    expect({ setupToken: raw.includes(setupToken), otp: raw.includes(otpInMail) }).toEqual({ setupToken: false, otp: false })
  })
})

describe('a deleted user', () => {
  it('leaves no trace of their address, names, sessions, second factor or passkeys in the raw database files; audit rows keep the id', async () => {
    ctx = await createTestContext()
    const email = 'erase.me@example.com'
    const { userId } = await ctx.addUser({ email, firstName: 'Erasmus', lastName: 'Vanishing' })
    const browser = 'Mozilla/5.0 (Erasure-Test-Browser)'
    const login = await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, headers: { 'user-agent': browser } })
    expect(login.status).toBe(201)
    await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: 'a wrong password' }, headers: { 'user-agent': browser } })
    // A second factor, its recovery codes and a live login challenge.
    const bearer = { authorization: `Bearer ${login.json.data.response.accessToken}` }
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer })).json.data
    expect((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer, body: { code: totpCode(secret, totpStep(ctx.clock.now())) } })).status).toBe(200)
    expect((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).json.data.response.mfaRequired).toBe(true)
    const mfaRows = async () =>
      Promise.all(['mfa_totp', 'mfa_recovery_codes', 'mfa_challenges'].map(async (table) => (await queryDatabase(ctx, `SELECT * FROM ${table} WHERE user_id = $1`, [userId])).length))
    expect(await mfaRows()).toEqual([1, 10, 1])
    const [{ sealed_secret: sealedSecret }] = (await queryDatabase<{ sealed_secret: string }>(ctx, 'SELECT sealed_secret FROM mfa_totp')) as [{ sealed_secret: string }]
    // A passkey, and a passkey ceremony of theirs in flight.
    const registering = (await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer })).json.data
    const authenticator = new SoftwareAuthenticator(registering.options.rp.id, new URL(ctx.runtime.config.publicUrl).origin)
    expect((await ctx.call('POST', '/api/v1/auth/passkeys/register', { headers: bearer, body: { challengeId: registering.challengeId, response: authenticator.register(registering.options), name: 'Erasmus phone' } })).status).toBe(201)
    await ctx.call('POST', '/api/v1/auth/passkeys/register/options', { headers: bearer })
    const credentialId = authenticator.credentials[0]!.id.toString('base64url')
    const [{ public_key: publicKey }] = (await queryDatabase<{ public_key: string }>(ctx, 'SELECT public_key FROM passkeys')) as [{ public_key: string }]
    const otp = await requestOtp(ctx, email)
    expect(otp).toMatch(/^\d{6}$/)
    // Delivered mail keeps its recipient; a queued one its body too.
    await ctx.deliverMail()
    await requestOtp(ctx, email)
    for (const trace of [email, 'Erasmus', 'Vanishing', browser, sealedSecret, credentialId, publicKey]) expect({ trace, found: rawFiles().includes(trace) }).toEqual({ trace, found: true })

    await deleteUser(ctx.runtime, userId)

    const raw = rawFiles()
    for (const trace of [email, 'Erasmus', 'Vanishing', browser, sealedSecret, credentialId, publicKey]) expect({ trace, found: raw.includes(trace) }).toEqual({ trace, found: false })
    expect(await mfaRows()).toEqual([0, 0, 0])
    expect(await queryDatabase(ctx, 'SELECT * FROM passkeys')).toEqual([])
    expect(await queryDatabase(ctx, 'SELECT * FROM webauthn_challenges')).toEqual([])
    const events = await queryDatabase<{ type: string }>(ctx, 'SELECT type FROM audit_events WHERE user_id = $1 ORDER BY id', [userId])
    expect(events.map((e) => e.type)).toContain('login.succeeded')
    expect(events.at(-1)!.type).toBe('user.deleted')
  })
})
