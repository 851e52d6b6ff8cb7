// The English catalogue of the mails: every string a mail says. English is the reference:
// every other catalogue has exactly its keys (tsc checks it: `MailCatalogue`, and a test).
// {name} marks a value filled in when the mail is composed (escaped in its HTML part).
export const en = {
  greeting: 'Hello {firstName},',
  'greeting.anonymous': 'Hello,',

  'passwordReset.subject': '{tenant}: your password reset code',
  'passwordReset.title': '{tenant}: password reset',
  'passwordReset.intro': 'Someone asked to reset the password of your {tenant} account. Your one-time code is:',
  'passwordReset.validity': 'It is valid for {minutes} minutes and can be used once.',
  'passwordReset.ignore': 'If you did not ask for it, ignore this mail: your password stays as it is.',

  'passwordChanged.subject': '{tenant}: your password was changed',
  'passwordChanged.title': '{tenant}: password changed',
  'passwordChanged.body': 'The password of your {tenant} account was changed on {when}, and every session was signed out.',
  'passwordChanged.notYou': 'If this was not you, contact your {tenant} administrator now.',

  'invitation.subject': '{tenant}: set up your password',
  'invitation.title': 'Welcome to {tenant}',
  'invitation.intro': 'An account was created for you at {tenant}. Choose your password to start using it.',
  'invitation.linkLine': 'Set your password here: {link}',
  'invitation.link': 'Set your password',
  'invitation.token': 'Your setup token:',
  'invitation.validity': 'It is valid until {until} and can be used once.',

  'signupCode.subject': '{tenant}: your sign-up code',
  'signupCode.title': '{tenant}: confirm your address',
  'signupCode.intro': 'Someone asked to create a {tenant} account with this address. To confirm that it is yours, enter this code:',
  'signupCode.validity': 'It is valid for {minutes} minutes and can be used once. Only the latest code works.',
  'signupCode.ignore': 'If you did not sign up, ignore this mail: no account is created without this code.',
  'signupCode.replaced': 'This sign-up, asked for on {when}, replaced an earlier one for this address: the code sent for that one no longer works, only this newest code does.',
  'signupCode.replacedNotYou': 'The code creates the account with the password chosen in this newest sign-up. If you did not ask for it, do not enter the code: sign up again, and use the code of your own sign-up.',

  'signupAttempt.subject': '{tenant}: someone tried to sign up with your address',
  'signupAttempt.title': '{tenant}: sign-up attempt',
  'signupAttempt.body': 'On {when} someone tried to create a {tenant} account with your address, which already has one. No account was created and nothing changed.',
  'signupAttempt.advice': 'If it was you, log in instead, or reset your password if you have forgotten it. If it was not you, you need not do anything.',

  'mfa.enrolled.subject': '{tenant}: two-factor authentication was turned on',
  'mfa.enrolled.event': 'On {when}, two-factor authentication was turned on for your {tenant} account.',
  'mfa.enrolled.then': 'From now on, logging in asks for a code from your authenticator app.',
  'mfa.disabled.subject': '{tenant}: two-factor authentication was turned off',
  'mfa.disabled.event': 'On {when}, two-factor authentication was turned off for your {tenant} account.',
  'mfa.disabled.then': 'Logging in now asks for your password only.',
  'mfa.reset.subject': '{tenant}: an administrator removed your two-factor authentication',
  'mfa.reset.event': 'On {when}, an administrator removed your two-factor authentication for your {tenant} account.',
  'mfa.reset.then': 'Logging in now asks for your password only; you can turn it on again.',
  'mfa.recovery-used.subject': '{tenant}: a recovery code was used to log in',
  'mfa.recovery-used.event': 'On {when}, a recovery code was used to log in for your {tenant} account.',
  'mfa.recovery-used.then': 'You have {left} recovery codes left.',
  'mfa.notYou': 'If this was not you, change your password and contact your {tenant} administrator now.',

  'passkeyAdded.subject': '{tenant}: a passkey was added to your account',
  'passkeyAdded.body': 'On {when}, a passkey named "{passkey}" was added to your {tenant} account. It can sign you in without your password.',
  'passkeyAdded.notYou': "If this was not you, remove it from your account's passkeys, change your password and contact your {tenant} administrator now.",

  'webhookDisabled.subject': '{tenant}: a webhook endpoint was disabled',
  'webhookDisabled.body': 'Every delivery to the webhook endpoint {url} ({endpointId}) has failed since {since}, so authd has disabled it: events of {tenant} are no longer sent there.',
  'webhookDisabled.advice': 'When the endpoint answers again, enable it (authd webhooks update {endpointId} --enable, or the admin API) and send the dead deliveries again with authd webhooks redeliver.',
} as const

export type MailKey = keyof typeof en
/** A catalogue of another language: every key of the English one, no other. */
export type MailCatalogue = { readonly [K in MailKey]: string }
