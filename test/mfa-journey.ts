// Two-factor authentication through the compiled binary, on whichever engine the caller set
// up: a signed-in user turns TOTP on over HTTP, logs in through the challenge with a code and
// then with a recovery code, the mails arrive by real SMTP, and the CLI's `users mfa-reset`
// and the admin API's DELETE …/mfa (the lost phone) bring login back to the password alone, as
// the user's own DELETE /mfa/totp with a code does. Turning it on ends the older sessions;
// POST /reauthenticate proves a session again for the changes that need step-up.
import { expect } from 'bun:test'
import type { cliRunner } from './cli-runner'
import { apiCaller, toResult } from './helpers'
import { sentTo, type TestSmtp } from './smtp'
import { totpCode, totpStep } from '../src/core/mfa/totp'

export async function mfaJourney(authd: ReturnType<typeof cliRunner>, url: string, tenantId: string, apiKey: string, smtp: TestSmtp, email: string, password: string) {
  const call = apiCaller(url, apiKey)
  const login = () => call('POST', '/login', { email, password })
  const amrOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).amr
  const subjects = () => smtp.messages.filter(sentTo(email)).map((m) => m.subject)

  const signedIn = await login()
  expect(signedIn.status).toBe(201)
  const { accessToken, user } = signedIn.json.data.response
  const bearer = { authorization: `Bearer ${accessToken}` }
  const { secret } = (await call('POST', '/mfa/totp', undefined, bearer)).json.data
  // The server's clock is the real one here: the confirmation spends this step's code, and the
  // login below uses the next step's (one step of drift is accepted).
  const step = totpStep(Date.now())
  const confirmed = await call('POST', '/mfa/totp/confirm', { code: totpCode(secret, step) }, bearer)
  expect({ status: confirmed.status, message: confirmed.json.message }).toEqual({ status: 200, message: 'Two-factor authentication is on' })
  const recoveryCodes: string[] = confirmed.json.data.recoveryCodes
  expect(recoveryCodes).toHaveLength(10)
  await smtp.waitFor((m) => sentTo(email)(m) && m.subject === 'Acme: two-factor authentication was turned on')

  const challenged = await login()
  expect({ status: challenged.status, data: challenged.json.data, cookie: challenged.refreshCookie }).toEqual({
    status: 201,
    data: { response: { mfaRequired: true, challengeToken: expect.any(String), methods: ['totp', 'recovery'] } },
    cookie: undefined,
  })
  const replayed = await call('POST', '/mfa/verify', { challengeToken: challenged.json.data.response.challengeToken, code: totpCode(secret, step) })
  expect(replayed.json).toEqual({ statusCode: 400, message: 'Invalid or expired code', data: null })
  const passed = await call('POST', '/mfa/verify', { challengeToken: challenged.json.data.response.challengeToken, code: totpCode(secret, step + 1) })
  expect(passed.status).toBe(201)
  expect(passed.refreshCookie).toBeTruthy()
  expect(amrOf(passed.json.data.response.accessToken)).toEqual(['pwd', 'otp'])

  const byRecovery = await call('POST', '/mfa/verify', { challengeToken: (await login()).json.data.response.challengeToken, code: recoveryCodes[0] })
  expect(byRecovery.status).toBe(201)
  await smtp.waitFor((m) => sentTo(email)(m) && m.subject === 'Acme: a recovery code was used to log in')

  // The lost phone: the operator removes the factor; the password alone logs in again.
  const reset = await authd(['--json', 'users', 'mfa-reset', user.userId])
  expect(reset.json).toEqual({ userId: user.userId, removed: true })
  const plain = await login()
  expect(plain.status).toBe(201)
  expect(amrOf(plain.json.data.response.accessToken)).toEqual(['pwd'])
  await smtp.waitFor((m) => sentTo(email)(m) && m.subject === 'Acme: an administrator removed your two-factor authentication')
  expect((await authd(['--json', 'users', 'mfa-reset', user.userId])).json).toEqual({ userId: user.userId, removed: false })

  // On again, then removed by the application's backend with an admin key.
  const again = { authorization: `Bearer ${plain.json.data.response.accessToken}` }
  const second = (await call('POST', '/mfa/totp', undefined, again)).json.data.secret
  expect((await call('POST', '/mfa/totp/confirm', { code: totpCode(second, totpStep(Date.now())) }, again)).status).toBe(200)
  // Turning it on ended the sessions opened before (the one with the recovery code among them).
  expect((await call('GET', '/refresh-token', undefined, { cookie: `refreshToken=${byRecovery.refreshCookie}` })).status).toBe(401)
  expect((await login()).json.data.response.mfaRequired).toBe(true)
  const adminKey = (await authd(['--json', 'api-keys', 'create', '--tenant', tenantId, '--name', 'backend-mfa', '--scope', 'admin'])).json.key
  const removed = await fetch(`${url}/api/v1/admin/users/${user.userId}/mfa`, { method: 'DELETE', headers: { 'x-api-key': adminKey } }).then(toResult)
  expect({ status: removed.status, data: removed.json.data }).toEqual({ status: 200, data: { userId: user.userId, removed: true } })
  expect((await login()).json.data.response.mfaRequired).toBeUndefined()
  await smtp.waitFor((m) => sentTo(email)(m) && subjects().filter((s) => s === 'Acme: an administrator removed your two-factor authentication').length === 2)

  // On once more, then off by the user, proved with a code, in a session that proved its
  // user again (step-up) with the password.
  const reauthenticated = await call('POST', '/reauthenticate', { password }, again)
  expect({ status: reauthenticated.status, message: reauthenticated.json.message }).toEqual({ status: 200, message: 'Reauthenticated' })
  const third = (await call('POST', '/mfa/totp', undefined, again)).json.data.secret
  const thirdStep = totpStep(Date.now())
  expect((await call('POST', '/mfa/totp/confirm', { code: totpCode(third, thirdStep) }, again)).status).toBe(200)
  expect((await call('DELETE', '/mfa/totp', { code: totpCode(third, thirdStep) }, again)).json).toEqual({ statusCode: 400, message: 'Invalid or expired code', data: null })
  const off = await call('DELETE', '/mfa/totp', { code: totpCode(third, thirdStep + 1) }, again)
  expect({ status: off.status, message: off.json.message }).toEqual({ status: 200, message: 'Two-factor authentication is off' })
  expect((await login()).json.data.response.mfaRequired).toBeUndefined()
  await smtp.waitFor((m) => sentTo(email)(m) && m.subject === 'Acme: two-factor authentication was turned off')
  expect(subjects().filter((s) => s?.includes('two-factor') || s?.includes('recovery'))).toHaveLength(7) // on ×3, a recovery code, reset ×2, off
}
