// Sign-up through the compiled binary, on whichever engine the caller set up: the CLI opens
// the tenant to a domain, a client signs up over HTTP, the code arrives by real SMTP and
// creates the account, logged in; the CLI then lists the new user.
import { expect } from 'bun:test'
import type { cliRunner } from './cli-runner'
import { toResult } from './helpers'
import { otpIn, sentTo, type TestSmtp } from './smtp'

export async function signupJourney(authd: ReturnType<typeof cliRunner>, url: string, tenantId: string, apiKey: string, smtp: TestSmtp) {
  const post = (path: string, body: unknown) =>
    fetch(`${url}/api/v1/auth${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) }).then(toResult)
  const body = { email: 'joan@example.org', password: 'a sign-up passphrase of mine', firstName: 'Joan', lastName: 'Clarke' }

  expect((await post('/signup', body)).json).toEqual({ statusCode: 403, message: 'Sign-up is closed', data: null })
  const opened = await authd(['--json', 'tenants', 'update', tenantId, '--signup', 'domains:example.org'])
  expect(opened.json.signup).toBe('domains:example.org')
  const bad = await authd(['tenants', 'update', tenantId, '--signup', 'sometimes'])
  expect({ code: bad.code, stderr: bad.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('signup must be closed, open, or domains:') })

  const asked = await post('/signup', body)
  expect({ status: asked.status, json: asked.json }).toEqual({
    status: 202,
    json: { statusCode: 202, message: 'If the address can be registered, a verification code has been sent', data: 'joan@example.org' },
  })
  // Another domain gets the same answer and no mail.
  expect((await post('/signup', { ...body, email: 'joan@example.com' })).json.message).toBe(asked.json.message)
  const mail = await smtp.waitFor(sentTo('joan@example.org'))
  expect(mail.subject).toBe('Acme: your sign-up code')
  const verified = await post('/verify-email', { email: 'joan@example.org', otp: otpIn(mail) })
  expect(verified.status).toBe(201)
  expect(verified.json.data.response.user).toMatchObject({ email: 'joan@example.org', firstName: 'Joan', type: 'user' })
  expect(verified.refreshCookie).toBeTruthy()
  expect((await post('/login', { email: body.email, password: body.password })).status).toBe(201)
  const listed = (await authd(['--json', 'users', 'list', '--tenant', tenantId, '--email', 'joan@example.org'])).json
  expect(listed.items.map((u: { userId: string }) => u.userId)).toEqual([verified.json.data.response.user.userId])
  expect(smtp.messages.some(sentTo('joan@example.com'))).toBe(false)
}
