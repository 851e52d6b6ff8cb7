// Erasing a delivered mail's body is real: after delivery, the setup token and the OTP it
// carried cannot be found anywhere in the raw database files (main file and WAL), as someone
// who copies the data directory of a running server would read them.
import { afterEach, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { inviteUser } from '../../src/core/setup-password'
import { createUser } from '../../src/core/users'
import { createTestContext, requestOtp, type TestContext } from '../helpers'

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
