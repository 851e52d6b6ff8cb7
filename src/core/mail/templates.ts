// The mails authd sends, as plain text and HTML, each naming the tenant, in the language of
// the request that caused it (strings/: one catalogue per language). Values are HTML-escaped
// in the HTML part: names come from admins and imports, not from us.
import { MAIL_LANGUAGES, mailMoment, mailTranslator, type MailTranslate } from './strings'

export interface MailContent {
  subject: string
  text: string
  html: string
}

/** Every mail's input: the language to write it in (English when absent or unknown). */
interface Localised {
  language?: string
}

const escape = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

function layout(language: string | undefined, title: string, paragraphs: string[]): string {
  return [
    '<!doctype html>',
    `<html lang="${language !== undefined && MAIL_LANGUAGES.includes(language) ? language : 'en'}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>`,
    '<body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#1a1a1a;max-width:560px;margin:0 auto;padding:24px">',
    `<h1 style="font-size:20px">${title}</h1>`,
    ...paragraphs.map((p) => `<p style="font-size:15px;line-height:1.5">${p}</p>`),
    '</body></html>',
  ].join('\n')
}

/** The translators of one mail: `t` for its text part, `h` (values escaped) for its HTML. */
const translators = (language: string | undefined) => ({ t: mailTranslator(language), h: mailTranslator(language, escape) })

const greeting = (t: MailTranslate, firstName: string) => (firstName ? t('greeting', { firstName }) : t('greeting.anonymous'))

const bigCode = (code: string) => `<strong style="font-size:28px;letter-spacing:6px;font-family:monospace">${escape(code)}</strong>`

export function passwordResetOtpMail(input: Localised & { tenantName: string; firstName: string; code: string; validMinutes: number }): MailContent {
  const { t, h } = translators(input.language)
  const values = { tenant: input.tenantName, minutes: input.validMinutes }
  return {
    subject: t('passwordReset.subject', values),
    text: [greeting(t, input.firstName), '', t('passwordReset.intro', values), '', `    ${input.code}`, '', t('passwordReset.validity', values), t('passwordReset.ignore')].join('\n'),
    html: layout(input.language, h('passwordReset.title', values), [
      greeting(h, input.firstName),
      h('passwordReset.intro', values),
      bigCode(input.code),
      h('passwordReset.validity', values),
      h('passwordReset.ignore'),
    ]),
  }
}

export function passwordChangedMail(input: Localised & { tenantName: string; firstName: string; changedAt: number }): MailContent {
  const { t, h } = translators(input.language)
  const values = { tenant: input.tenantName, when: mailMoment(input.language, input.changedAt) }
  const lines = ['passwordChanged.body', 'passwordChanged.notYou'] as const
  return {
    subject: t('passwordChanged.subject', values),
    text: [greeting(t, input.firstName), '', ...lines.map((key) => t(key, values))].join('\n'),
    html: layout(input.language, h('passwordChanged.title', values), [greeting(h, input.firstName), ...lines.map((key) => h(key, values))]),
  }
}

export function invitationMail(input: Localised & { tenantName: string; firstName: string; token: string; expiresAt: number; inviteUrl?: string }): MailContent {
  const { t, h } = translators(input.language)
  const { token } = input
  const values = { tenant: input.tenantName, until: mailMoment(input.language, input.expiresAt) }
  // The token rides in the fragment: it never reaches a web server's access log.
  const link = input.inviteUrl ? `${input.inviteUrl}#token=${token}` : undefined
  return {
    subject: t('invitation.subject', values),
    text: [
      greeting(t, input.firstName),
      '',
      t('invitation.intro', values),
      '',
      ...(link ? [t('invitation.linkLine', { link }), ''] : []),
      t('invitation.token'),
      '',
      `    ${token}`,
      '',
      t('invitation.validity', values),
    ].join('\n'),
    html: layout(input.language, h('invitation.title', values), [
      greeting(h, input.firstName),
      h('invitation.intro', values),
      ...(link ? [`<a href="${escape(link)}">${h('invitation.link')}</a>`] : []),
      `${h('invitation.token')}<br><code style="font-size:14px;word-break:break-all">${escape(token)}</code>`,
      h('invitation.validity', values),
    ]),
  }
}

/** The code of a sign-up; `replacing`: it ended a pending one for the address, whose code is dead now. */
export function signupCodeMail(input: Localised & { tenantName: string; firstName: string; code: string; validMinutes: number; at: number; replacing?: boolean }): MailContent {
  const { t, h } = translators(input.language)
  const values = { tenant: input.tenantName, minutes: input.validMinutes, when: mailMoment(input.language, input.at) }
  const replaced = input.replacing ? (['signupCode.replaced', 'signupCode.replacedNotYou'] as const) : []
  return {
    subject: t('signupCode.subject', values),
    text: [
      greeting(t, input.firstName),
      '',
      t('signupCode.intro', values),
      '',
      `    ${input.code}`,
      '',
      t('signupCode.validity', values),
      ...replaced.map((key) => t(key, values)),
      t('signupCode.ignore'),
    ].join('\n'),
    html: layout(input.language, h('signupCode.title', values), [
      greeting(h, input.firstName),
      h('signupCode.intro', values),
      bigCode(input.code),
      h('signupCode.validity', values),
      ...replaced.map((key) => h(key, values)),
      h('signupCode.ignore'),
    ]),
  }
}

/** To the owner of a registered address that someone tried to sign up with. */
export function signupAttemptMail(input: Localised & { tenantName: string; firstName: string; at: number }): MailContent {
  const { t, h } = translators(input.language)
  const values = { tenant: input.tenantName, when: mailMoment(input.language, input.at) }
  const lines = ['signupAttempt.body', 'signupAttempt.advice'] as const
  return {
    subject: t('signupAttempt.subject', values),
    text: [greeting(t, input.firstName), '', ...lines.map((key) => t(key, values))].join('\n'),
    html: layout(input.language, h('signupAttempt.title', values), [greeting(h, input.firstName), ...lines.map((key) => h(key, values))]),
  }
}

/** What happened to a user's second factor, for the notice that tells them. */
export type MfaNotice = 'enrolled' | 'disabled' | 'reset' | 'recovery-used'

export function mfaNoticeMail(input: Localised & { tenantName: string; firstName: string; notice: MfaNotice; at: number; recoveryCodesLeft?: number }): MailContent {
  const { t, h } = translators(input.language)
  const values = { tenant: input.tenantName, when: mailMoment(input.language, input.at), left: input.recoveryCodesLeft ?? 0 }
  const lines = [`mfa.${input.notice}.event`, `mfa.${input.notice}.then`, 'mfa.notYou'] as const
  const subject = t(`mfa.${input.notice}.subject`, values)
  return {
    subject,
    text: [greeting(t, input.firstName), '', ...lines.map((key) => t(key, values))].join('\n'),
    html: layout(input.language, h(`mfa.${input.notice}.subject`, values), [greeting(h, input.firstName), ...lines.map((key) => h(key, values))]),
  }
}

/** "A passkey was added to your account": so that a passkey someone else added does not go unnoticed. */
export function passkeyAddedMail(input: Localised & { tenantName: string; firstName: string; passkeyName: string; at: number }): MailContent {
  const { t, h } = translators(input.language)
  const values = { tenant: input.tenantName, passkey: input.passkeyName, when: mailMoment(input.language, input.at) }
  const lines = ['passkeyAdded.body', 'passkeyAdded.notYou'] as const
  return {
    subject: t('passkeyAdded.subject', values),
    text: [greeting(t, input.firstName), '', ...lines.map((key) => t(key, values))].join('\n'),
    html: layout(input.language, h('passkeyAdded.subject', values), [greeting(h, input.firstName), ...lines.map((key) => h(key, values))]),
  }
}

/** To a tenant's admins: an endpoint failed for days and authd stopped sending to it. */
export function webhookDisabledMail(input: Localised & { tenantName: string; firstName: string; url: string; failingSince: number; endpointId: string }): MailContent {
  const { t, h } = translators(input.language)
  const values = { tenant: input.tenantName, url: input.url, endpointId: input.endpointId, since: mailMoment(input.language, input.failingSince) }
  const lines = ['webhookDisabled.body', 'webhookDisabled.advice'] as const
  return {
    subject: t('webhookDisabled.subject', values),
    text: [greeting(t, input.firstName), '', ...lines.map((key) => t(key, values))].join('\n'),
    html: layout(input.language, h('webhookDisabled.subject', values), [greeting(h, input.firstName), ...lines.map((key) => h(key, values))]),
  }
}
