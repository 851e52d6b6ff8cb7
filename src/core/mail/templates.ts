// The mails authd sends, as plain text and HTML, each naming the tenant. Values are
// HTML-escaped: names come from admins and imports, not from us.
export interface MailContent {
  subject: string
  text: string
  html: string
}

const escape = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

function layout(title: string, paragraphs: string[]): string {
  return [
    '<!doctype html>',
    '<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>',
    '<body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#1a1a1a;max-width:560px;margin:0 auto;padding:24px">',
    `<h1 style="font-size:20px">${title}</h1>`,
    ...paragraphs.map((p) => `<p style="font-size:15px;line-height:1.5">${p}</p>`),
    '</body></html>',
  ].join('\n')
}

const greeting = (firstName: string) => (firstName ? `Hello ${firstName},` : 'Hello,')

export function passwordResetOtpMail(input: { tenantName: string; firstName: string; code: string; validMinutes: number }): MailContent {
  const { tenantName, firstName, code, validMinutes } = input
  return {
    subject: `${tenantName}: your password reset code`,
    text: [
      greeting(firstName),
      '',
      `Someone asked to reset the password of your ${tenantName} account. Your one-time code is:`,
      '',
      `    ${code}`,
      '',
      `It is valid for ${validMinutes} minutes and can be used once.`,
      'If you did not ask for it, ignore this mail: your password stays as it is.',
    ].join('\n'),
    html: layout(`${escape(tenantName)}: password reset`, [
      escape(greeting(firstName)),
      `Someone asked to reset the password of your ${escape(tenantName)} account. Your one-time code is:`,
      `<strong style="font-size:28px;letter-spacing:6px;font-family:monospace">${code}</strong>`,
      `It is valid for ${validMinutes} minutes and can be used once.`,
      'If you did not ask for it, ignore this mail: your password stays as it is.',
    ]),
  }
}

export function passwordChangedMail(input: { tenantName: string; firstName: string; changedAt: number }): MailContent {
  const { tenantName, firstName } = input
  const when = new Date(input.changedAt).toUTCString()
  return {
    subject: `${tenantName}: your password was changed`,
    text: [
      greeting(firstName),
      '',
      `The password of your ${tenantName} account was changed on ${when}, and every session was signed out.`,
      `If this was not you, contact your ${tenantName} administrator now.`,
    ].join('\n'),
    html: layout(`${escape(tenantName)}: password changed`, [
      escape(greeting(firstName)),
      `The password of your ${escape(tenantName)} account was changed on ${escape(when)}, and every session was signed out.`,
      `If this was not you, contact your ${escape(tenantName)} administrator now.`,
    ]),
  }
}

export function invitationMail(input: { tenantName: string; firstName: string; token: string; expiresAt: number; inviteUrl?: string }): MailContent {
  const { tenantName, firstName, token } = input
  const until = new Date(input.expiresAt).toUTCString()
  // The token rides in the fragment: it never reaches a web server's access log.
  const link = input.inviteUrl ? `${input.inviteUrl}#token=${token}` : undefined
  return {
    subject: `${tenantName}: set up your password`,
    text: [
      greeting(firstName),
      '',
      `An account was created for you at ${tenantName}. Choose your password to start using it.`,
      '',
      ...(link ? [`Set your password here: ${link}`, ''] : []),
      'Your setup token:',
      '',
      `    ${token}`,
      '',
      `It is valid until ${until} and can be used once.`,
    ].join('\n'),
    html: layout(`Welcome to ${escape(tenantName)}`, [
      escape(greeting(firstName)),
      `An account was created for you at ${escape(tenantName)}. Choose your password to start using it.`,
      ...(link ? [`<a href="${escape(link)}">Set your password</a>`] : []),
      `Your setup token:<br><code style="font-size:14px;word-break:break-all">${escape(token)}</code>`,
      `It is valid until ${escape(until)} and can be used once.`,
    ]),
  }
}

export function signupCodeMail(input: { tenantName: string; firstName: string; code: string; validMinutes: number }): MailContent {
  const { tenantName, firstName, code, validMinutes } = input
  return {
    subject: `${tenantName}: your sign-up code`,
    text: [
      greeting(firstName),
      '',
      `Someone asked to create a ${tenantName} account with this address. To confirm that it is yours, enter this code:`,
      '',
      `    ${code}`,
      '',
      `It is valid for ${validMinutes} minutes and can be used once. Only the latest code works.`,
      'If you did not sign up, ignore this mail: no account is created without this code.',
    ].join('\n'),
    html: layout(`${escape(tenantName)}: confirm your address`, [
      escape(greeting(firstName)),
      `Someone asked to create a ${escape(tenantName)} account with this address. To confirm that it is yours, enter this code:`,
      `<strong style="font-size:28px;letter-spacing:6px;font-family:monospace">${code}</strong>`,
      `It is valid for ${validMinutes} minutes and can be used once. Only the latest code works.`,
      'If you did not sign up, ignore this mail: no account is created without this code.',
    ]),
  }
}

/** To the owner of a registered address that someone tried to sign up with. */
export function signupAttemptMail(input: { tenantName: string; firstName: string; at: number }): MailContent {
  const { tenantName, firstName } = input
  const when = new Date(input.at).toUTCString()
  return {
    subject: `${tenantName}: someone tried to sign up with your address`,
    text: [
      greeting(firstName),
      '',
      `On ${when} someone tried to create a ${tenantName} account with your address, which already has one. No account was created and nothing changed.`,
      'If it was you, log in instead, or reset your password if you have forgotten it. If it was not you, you need not do anything.',
    ].join('\n'),
    html: layout(`${escape(tenantName)}: sign-up attempt`, [
      escape(greeting(firstName)),
      `On ${escape(when)} someone tried to create a ${escape(tenantName)} account with your address, which already has one. No account was created and nothing changed.`,
      'If it was you, log in instead, or reset your password if you have forgotten it. If it was not you, you need not do anything.',
    ]),
  }
}

/** What happened to a user's second factor, for the notice that tells them. */
export type MfaNotice = 'enrolled' | 'disabled' | 'reset' | 'recovery-used'

export function mfaNoticeMail(input: { tenantName: string; firstName: string; notice: MfaNotice; at: number; recoveryCodesLeft?: number }): MailContent {
  const { tenantName, firstName, notice } = input
  const when = new Date(input.at).toUTCString()
  const what = {
    enrolled: ['two-factor authentication was turned on', 'From now on, logging in asks for a code from your authenticator app.'],
    disabled: ['two-factor authentication was turned off', 'Logging in now asks for your password only.'],
    reset: ['an administrator removed your two-factor authentication', 'Logging in now asks for your password only; you can turn it on again.'],
    'recovery-used': ['a recovery code was used to log in', `You have ${input.recoveryCodesLeft ?? 0} recovery codes left.`],
  }[notice]
  const subject = `${tenantName}: ${what[0]}`
  const lines = [`On ${when}, ${what[0]} for your ${tenantName} account.`, what[1]!, `If this was not you, change your password and contact your ${tenantName} administrator now.`]
  return {
    subject,
    text: [greeting(firstName), '', ...lines].join('\n'),
    html: layout(escape(subject), [escape(greeting(firstName)), ...lines.map(escape)]),
  }
}

/** "A passkey was added to your account": so that a passkey someone else added does not go unnoticed. */
export function passkeyAddedMail(input: { tenantName: string; firstName: string; passkeyName: string; at: number }): MailContent {
  const { tenantName, firstName, passkeyName } = input
  const when = new Date(input.at).toUTCString()
  const subject = `${tenantName}: a passkey was added to your account`
  const lines = [
    `On ${when}, a passkey named "${passkeyName}" was added to your ${tenantName} account. It can sign you in without your password.`,
    `If this was not you, remove it from your account's passkeys, change your password and contact your ${tenantName} administrator now.`,
  ]
  return {
    subject,
    text: [greeting(firstName), '', ...lines].join('\n'),
    html: layout(escape(subject), [escape(greeting(firstName)), ...lines.map(escape)]),
  }
}

/** Two sign-ups with one address and different passwords: neither may be completed. */
export function signupContestedMail(input: { tenantName: string; at: number }): MailContent {
  const { tenantName } = input
  const when = new Date(input.at).toUTCString()
  const subject = `${tenantName}: sign up again`
  const lines = [
    `On ${when}, a second sign-up for a ${tenantName} account was made with your address, with another password than the first. As we cannot tell which of them was yours, neither can be completed: the codes sent for them no longer work.`,
    `If you were signing up, sign up again. If you were not, you need not do anything: no account was created.`,
  ]
  return { subject, text: ['Hello,', '', ...lines].join('\n'), html: layout(escape(subject), ['Hello,', ...lines.map(escape)]) }
}

/** To a tenant's admins: an endpoint failed for days and authd stopped sending to it. */
export function webhookDisabledMail(input: { tenantName: string; firstName: string; url: string; failingSince: number; endpointId: string }): MailContent {
  const { tenantName, firstName, url, endpointId } = input
  const since = new Date(input.failingSince).toUTCString()
  const subject = `${tenantName}: a webhook endpoint was disabled`
  const lines = [
    `Every delivery to the webhook endpoint ${url} (${endpointId}) has failed since ${since}, so authd has disabled it: events of ${tenantName} are no longer sent there.`,
    `When the endpoint answers again, enable it (authd webhooks update ${endpointId} --enable, or the admin API) and send the dead deliveries again with authd webhooks redeliver.`,
  ]
  return {
    subject,
    text: [greeting(firstName), '', ...lines].join('\n'),
    html: layout(escape(subject), [escape(greeting(firstName)), ...lines.map(escape)]),
  }
}
