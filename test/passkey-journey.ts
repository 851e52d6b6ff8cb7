// Passkeys through the compiled binary, on whichever engine the caller set up: the CLI sets the
// tenant's relying party, a software authenticator adds a passkey over HTTP and signs in with it
// alone (@simplewebauthn/server verifying inside the compiled binary), the "passkey added" mail
// arrives by real SMTP, and the CLI lists and deletes it (a lost device), after which it signs
// in no more.
import { expect } from 'bun:test'
import type { cliRunner } from './cli-runner'
import { apiCaller } from './helpers'
import { sentTo, type TestSmtp } from './smtp'
import { SoftwareAuthenticator } from './software-authenticator'

export async function passkeyJourney(authd: ReturnType<typeof cliRunner>, url: string, tenantId: string, apiKey: string, smtp: TestSmtp, email: string, password: string) {
  const call = apiCaller(url, apiKey)
  const rp = await authd(['--json', 'tenants', 'update', tenantId, '--passkey-rp-id', 'example.com', '--passkey-origins', 'https://app.example.com'])
  expect(rp.json).toMatchObject({ passkeyRpId: 'example.com', passkeyOrigins: ['https://app.example.com'] })
  const misfit = await authd(['tenants', 'update', tenantId, '--passkey-origins', 'https://elsewhere.example'])
  expect({ code: misfit.code, stderr: misfit.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('is not the host of https://elsewhere.example') })

  const authenticator = new SoftwareAuthenticator('example.com', 'https://app.example.com', { synced: true })
  const signedIn = await call('POST', '/login', { email, password })
  const bearer = { authorization: `Bearer ${signedIn.json.data.response.accessToken}` }
  const user = signedIn.json.data.response.user
  const started = await call('POST', '/passkeys/register/options', undefined, bearer)
  expect(started.json.data.options.rp).toEqual({ id: 'example.com', name: 'Acme' })
  const added = await call('POST', '/passkeys/register', { challengeId: started.json.data.challengeId, response: authenticator.register(started.json.data.options), name: 'Phone' }, bearer)
  expect({ status: added.status, name: added.json.data.name, deviceType: added.json.data.deviceType }).toEqual({ status: 201, name: 'Phone', deviceType: 'multiDevice' })
  await smtp.waitFor((m) => sentTo(email)(m) && m.subject === 'Acme: a passkey was added to your account')

  const options = await call('POST', '/passkeys/login/options', {})
  const alone = await call('POST', '/passkeys/login', { challengeId: options.json.data.challengeId, response: authenticator.assert(options.json.data.options) })
  expect(alone.status).toBe(201)
  expect(alone.refreshCookie).toBeTruthy()
  expect(JSON.parse(Buffer.from(alone.json.data.response.accessToken.split('.')[1], 'base64url').toString()).amr).toEqual(['swk', 'user', 'mfa'])

  const listed = await authd(['--json', 'users', 'passkeys', 'list', user.userId])
  expect(listed.json.map((p: { name: string; deviceType: string }) => [p.name, p.deviceType])).toEqual([['Phone', 'multiDevice']])
  const removed = await authd(['--json', 'users', 'passkeys', 'delete', user.userId, listed.json[0].passkeyId])
  expect(removed.json).toEqual({ userId: user.userId, passkeyId: listed.json[0].passkeyId })
  const again = await call('POST', '/passkeys/login/options', {})
  const refused = await call('POST', '/passkeys/login', { challengeId: again.json.data.challengeId, response: authenticator.assert(again.json.data.options) })
  expect(refused.json).toEqual({ statusCode: 401, message: 'Unauthorized', data: null })
}
