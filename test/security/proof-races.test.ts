// A login whose proof was checked just before the user changed it starts no session after the
// change (product spec §18): a new password, a second factor turned on or a disable moves the
// user's session epoch, and a session is started only at the epoch its proof was checked at.
// Otherwise whoever keeps logging in with the old password while its owner changes it keeps
// a session that outlives the change. The password check is held open here until the change
// has committed, so the race is run the same way every time. (Guesses at one account take
// turns, so the change comes from the owner's trusted browser, which queues apart.)
import { afterEach, describe, expect, it } from 'bun:test'
import { totpCode, totpStep } from '../../src/core/mfa/totp'
import { setUserDisabled } from '../../src/core/accounts/users'
import { SQL } from 'bun'
import { createTestContext, PASSWORD, TEST_ENGINE, type TestContext } from '../helpers'

let ctx: TestContext
afterEach(() => ctx?.close())

/** Holds the next session's start (every check of the login made, nothing written) until
 *  `release()`: the widest window there is between a login's checks and its session. */
function holdSessionStarts(context: TestContext) {
  const sessions = context.runtime.store.sessions
  const createFamily = sessions.createFamily.bind(sessions)
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  let checked!: () => void
  const checkedOnce = new Promise<void>((resolve) => (checked = resolve))
  sessions.createFamily = async (...args: Parameters<typeof createFamily>) => {
    checked()
    await gate
    return createFamily(...args)
  }
  return { checked: checkedOnce, release: () => ((sessions.createFamily = createFamily), release()) }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

describe('a login whose password was checked before a change', () => {
  it('starts no session after a new password from a session (POST /me/password)', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    const token = (await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).json.data.response.accessToken
    const held = holdSessionStarts(ctx)
    const late = ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })
    await held.checked
    expect((await ctx.call('POST', '/api/v1/auth/me/password', { headers: bearer(token), body: { newPassword: 'the owner changed it now' } })).status).toBe(200)
    held.release()
    expect((await late).json).toEqual({ statusCode: 401, message: 'Unauthorized', data: null })
    const sessions = (await ctx.call('GET', '/api/v1/auth/sessions', { headers: bearer(token) })).json.data
    expect(sessions).toHaveLength(1)
  })

  it('starts no password-only session after the second factor is turned on', async () => {
    ctx = await createTestContext()
    const { email } = await ctx.addUser()
    const owner = await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })
    const token = owner.json.data.response.accessToken
    // The owner's browser, with its device cookie, takes its turns apart from the other login's.
    const device = `authdDevice=${/authdDevice=([^;]*)/.exec(owner.setCookie ?? '')![1]}`
    const { secret } = (await ctx.call('POST', '/api/v1/auth/mfa/totp', { headers: bearer(token) })).json.data
    const held = holdSessionStarts(ctx)
    const late = ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD }, peer: '203.0.113.80' })
    await held.checked
    expect((await ctx.call('POST', '/api/v1/auth/mfa/totp/confirm', { headers: bearer(token), cookie: device, body: { code: totpCode(secret, totpStep(ctx.clock.now())) } })).status).toBe(200)
    held.release()
    expect((await late).status).toBe(401)
    // The next login meets the challenge.
    expect((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).json.data.response.mfaRequired).toBe(true)
  })

  it('starts no session after the user is disabled', async () => {
    ctx = await createTestContext()
    const { email, userId } = await ctx.addUser()
    const held = holdSessionStarts(ctx)
    const late = ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })
    await held.checked
    await setUserDisabled(ctx.runtime, userId, true)
    await setUserDisabled(ctx.runtime, userId, false)
    held.release()
    expect((await late).status).toBe(401)
    expect((await ctx.call('POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } })).status).toBe(201)
  })
})

describe('a session written while a change of the user is committing elsewhere', () => {
  // SQLite has one writer: a session's transaction reads the epoch under the write lock, after
  // any change. PostgreSQL reads committed rows without waiting, unless told to.
  it.skipIf(TEST_ENGINE !== 'postgres')('waits for the change and then writes nothing (PostgreSQL: the user row read FOR SHARE)', async () => {
    ctx = await createTestContext()
    const { userId } = await ctx.addUser()
    const user = (await ctx.runtime.store.users.get(userId))!
    // Another connection moves the epoch (as a new password does) and has not committed yet.
    const sql = new SQL(ctx.runtime.config.postgresUrl!, { max: 1 })
    const change = await sql.reserve()
    await change`BEGIN`
    await change`UPDATE users SET session_epoch = session_epoch + 1 WHERE id = ${userId}`
    const now = Date.now()
    const familyId = Bun.randomUUIDv7()
    const family = { id: familyId, userId, tenantId: user.tenantId, rememberMe: false, createdAt: now, expiresAt: now + 86_400_000, revokedAt: null, revokedReason: null, amr: 'pwd', authAt: now }
    const token = { id: Bun.randomUUIDv7(), familyId, tokenHash: Bun.randomUUIDv7(), createdAt: now, expiresAt: now + 3_600_000, spentAt: null, accessKid: 'k', ip: null, userAgent: null }
    const started = ctx.runtime.store.sessions.createFamily(family, token, user.sessionEpoch)
    await Bun.sleep(300)
    await change`COMMIT`
    change.release()
    await sql.close()
    expect(await started).toBe(false)
    expect(await ctx.runtime.store.sessions.findSession(familyId)).toBeNull()
  })
})
