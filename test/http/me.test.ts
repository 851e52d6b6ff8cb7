// The signed-in user (product spec §16): /me, the session list, ending one or all sessions,
// each authorised by an access token whose session must still be live.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { decodeJwt } from 'jose'
import { revokeUserSessions } from '../../src/core/sessions/sessions'
import { setUserDisabled } from '../../src/core/accounts/users'
import { createTestContext, PASSWORD, queryDatabase, type TestContext } from '../helpers'

const API = '/api/v1/auth'
let ctx: TestContext
beforeEach(async () => (ctx = await createTestContext()))
afterEach(() => ctx.close())

/** Logs in from a given browser and IP; returns the access token, refresh cookie and session id. */
async function logIn(email: string, from: { ip?: string; userAgent?: string } = {}) {
  const res = await ctx.call('POST', `${API}/login`, { body: { email, password: PASSWORD }, peer: from.ip ?? '192.0.2.10', headers: { 'user-agent': from.userAgent ?? 'Firefox/140' } })
  expect(res.status).toBe(201)
  const accessToken = res.json.data.response.accessToken as string
  return { accessToken, cookie: res.refreshCookie!, sessionId: decodeJwt(accessToken).sid as string }
}

const as = (accessToken: string) => ({ apiKey: null, headers: { authorization: `Bearer ${accessToken}` } })

describe('GET /me', () => {
  it('answers the user of a live session, with sid naming that session in the token', async () => {
    const { email, userId } = await ctx.addUser()
    const { accessToken, sessionId } = await logIn(email)
    const [family] = await queryDatabase<{ id: string }>(ctx, 'SELECT id FROM refresh_families WHERE user_id = $1', [userId])
    expect(sessionId).toBe(family!.id)
    const res = await ctx.call('GET', `${API}/me`, as(accessToken))
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ statusCode: 200, message: 'Current user', data: { userId, email, firstName: 'Ada', lastName: 'Lovelace', type: 'user', tenant: { tenantId: ctx.tenantId, name: expect.any(String) }, emailVerifiedAt: null, groups: [] } })
  })

  it('refuses a missing, malformed, forged or foreign-issuer token with the same 401', async () => {
    const { email } = await ctx.addUser()
    const { accessToken } = await logIn(email)
    const [header, payload, signature] = accessToken.split('.')
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString())
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url')}.${signature}`
    for (const authorization of [undefined, 'Bearer', `Basic ${accessToken}`, 'Bearer not.a.jwt', `Bearer ${forged}`, `Bearer ${accessToken}x`]) {
      const res = await ctx.call('GET', `${API}/me`, { apiKey: null, headers: authorization ? { authorization } : {} })
      expect({ authorization, status: res.status, json: res.json }).toEqual({ authorization, status: 401, json: { statusCode: 401, message: 'Unauthorized', data: null } })
    }
  })

  it('refuses the token of a session ended by logout or by an admin at once, long before it expires', async () => {
    const { email, userId } = await ctx.addUser()
    const viaLogout = await logIn(email)
    await ctx.call('POST', `${API}/logout`, { apiKey: null, cookie: `refreshToken=${viaLogout.cookie}` })
    expect((await ctx.call('GET', `${API}/me`, as(viaLogout.accessToken))).status).toBe(401)

    const viaAdmin = await logIn(email)
    expect((await ctx.call('GET', `${API}/me`, as(viaAdmin.accessToken))).status).toBe(200)
    await revokeUserSessions(ctx.runtime, userId)
    expect((await ctx.call('GET', `${API}/me`, as(viaAdmin.accessToken))).status).toBe(401)
  })

  it('refuses the token of a user who was disabled, at once (disabling ends the sessions)', async () => {
    const { email, userId } = await ctx.addUser()
    const { accessToken } = await logIn(email)
    await setUserDisabled(ctx.runtime, userId, true)
    expect((await ctx.call('GET', `${API}/me`, as(accessToken))).status).toBe(401)
  })
})

describe('GET /sessions', () => {
  it("lists the user's live sessions, newest first, with the user agent and IP of the login and then of the latest refresh, and never a token", async () => {
    const { email } = await ctx.addUser()
    const other = await ctx.addUser({ email: 'grace@example.com' })
    await logIn(other.email)
    const laptop = await logIn(email, { ip: '192.0.2.10', userAgent: 'Firefox/140' })
    ctx.clock.advance(60)
    const phone = await logIn(email, { ip: '198.51.100.7', userAgent: 'Safari/19' })
    const ended = await logIn(email)
    await ctx.call('POST', `${API}/logout`, { apiKey: null, cookie: `refreshToken=${ended.cookie}` })
    ctx.clock.advance(60)
    const refreshed = await ctx.call('GET', `${API}/refresh-token`, { apiKey: null, cookie: `refreshToken=${laptop.cookie}`, peer: '203.0.113.5', headers: { 'user-agent': 'Firefox/141' } })
    expect(refreshed.status).toBe(201)

    const res = await ctx.call('GET', `${API}/sessions`, as(phone.accessToken))
    expect(res.status).toBe(200)
    const sessions = res.json.data as Array<Record<string, unknown>>
    expect(sessions.map((s) => [s.sessionId, s.userAgent, s.ip, s.current])).toEqual([
      [phone.sessionId, 'Safari/19', '198.51.100.7', true],
      [laptop.sessionId, 'Firefox/141', '203.0.113.5', false],
    ])
    // The laptop's session: logged in, used again two minutes later, good for a day from then.
    const at = (field: string) => Date.parse(sessions[1]![field] as string)
    expect(Math.round((at('lastUsedAt') - at('createdAt')) / 1000)).toBe(120)
    expect(at('expiresAt') - at('lastUsedAt')).toBe(86_400_000)
    for (const secret of [phone.accessToken, phone.cookie, laptop.cookie, refreshed.refreshCookie!]) expect(res.text).not.toContain(secret)
  })
})

describe('DELETE /sessions/{sessionId}', () => {
  it('ends one session: its cookie and its access token stop working, the others go on', async () => {
    const { email } = await ctx.addUser()
    const kept = await logIn(email)
    const lost = await logIn(email)
    const res = await ctx.call('DELETE', `${API}/sessions/${lost.sessionId}`, as(kept.accessToken))
    expect(res.json).toEqual({ statusCode: 200, message: 'Session ended', data: null })
    expect((await ctx.call('GET', `${API}/refresh-token`, { apiKey: null, cookie: `refreshToken=${lost.cookie}` })).status).toBe(401)
    expect((await ctx.call('GET', `${API}/me`, as(lost.accessToken))).status).toBe(401)
    expect((await ctx.call('GET', `${API}/me`, as(kept.accessToken))).status).toBe(200)
    // Ending it again, or one that does not exist: 404.
    expect((await ctx.call('DELETE', `${API}/sessions/${lost.sessionId}`, as(kept.accessToken))).status).toBe(404)
    expect((await ctx.call('DELETE', `${API}/sessions/no-such-session`, as(kept.accessToken))).status).toBe(404)
    const [event] = await ctx.runtime.store.audit.query({ type: 'session.ended' })
    expect(event).toMatchObject({ detail: { familyId: lost.sessionId } })
  })

  it("answers 404 for another user's session and leaves it alone", async () => {
    const ada = await ctx.addUser()
    const grace = await ctx.addUser({ email: 'grace@example.com' })
    const mine = await logIn(ada.email)
    const theirs = await logIn(grace.email)
    const res = await ctx.call('DELETE', `${API}/sessions/${theirs.sessionId}`, as(mine.accessToken))
    expect(res.json).toEqual({ statusCode: 404, message: 'Session not found', data: null })
    expect((await ctx.call('GET', `${API}/me`, as(theirs.accessToken))).status).toBe(200)
  })
})

describe('POST /logout-all', () => {
  it('ends every session of the user, this one included, and clears the cookie; other users keep theirs', async () => {
    const { email } = await ctx.addUser()
    const other = await ctx.addUser({ email: 'grace@example.com' })
    const theirs = await logIn(other.email)
    const sessions = [await logIn(email), await logIn(email), await logIn(email)]
    const res = await ctx.call('POST', `${API}/logout-all`, as(sessions[0]!.accessToken))
    expect(res.json).toEqual({ statusCode: 200, message: 'Logged out everywhere', data: { ended: 3 } })
    expect(res.setCookie).toMatch(/refreshToken=;.*Max-Age=0/i)
    for (const session of sessions) {
      expect((await ctx.call('GET', `${API}/refresh-token`, { apiKey: null, cookie: `refreshToken=${session.cookie}` })).status).toBe(401)
      expect((await ctx.call('GET', `${API}/me`, as(session.accessToken))).status).toBe(401)
    }
    expect((await ctx.call('GET', `${API}/me`, as(theirs.accessToken))).status).toBe(200)
    expect((await ctx.call('POST', `${API}/logout-all`, as(sessions[1]!.accessToken))).status).toBe(401)
  })
})

describe('DELETE /sessions/{sessionId} with odd ids', () => {
  it('answers 404 for an overlong id and 400 for a malformed escape, never a 500', async () => {
    const { email } = await ctx.addUser()
    const { accessToken } = await logIn(email)
    expect((await ctx.call('DELETE', `${API}/sessions/${'x'.repeat(300)}`, as(accessToken))).json).toEqual({ statusCode: 404, message: 'Session not found', data: null })
    const malformed = await ctx.call('DELETE', `${API}/sessions/%ZZ`, as(accessToken))
    // (Elysia cannot decode the escape, so the parameter is no string)
    expect(malformed.json).toEqual({ statusCode: 400, message: 'sessionId must be a string', data: null })
  })
})
