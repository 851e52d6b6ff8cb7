// The mails' catalogues and the choice among them. A mail is written in the language of the
// request that caused it (its Accept-Language, carried on the Actor), composed when it is
// queued: the outbox row holds the finished text, so a retry sends the same language. A key
// missing from a catalogue falls back to English (tsc and test/unit/mail-strings.test.ts keep
// that from happening).
import { chooseLanguage } from '../../languages'
import { de } from './de'
import { en, type MailCatalogue, type MailKey } from './en'

export type { MailKey }
export const mailCatalogues: Record<string, MailCatalogue> = { en, de }
export const MAIL_LANGUAGES = Object.keys(mailCatalogues)

/** The mail language for an Accept-Language header: English when it names none we have. */
export const mailLanguageFor = (acceptLanguage: string | null | undefined): string => chooseLanguage(acceptLanguage, MAIL_LANGUAGES)

export type MailTranslate = (key: MailKey, values?: Record<string, string | number>) => string

export function mailTranslator(language: string | undefined, escapeValue: (value: string) => string = (value) => value): MailTranslate {
  const catalogue = language !== undefined && Object.hasOwn(mailCatalogues, language) ? mailCatalogues[language]! : en
  return (key, values = {}) =>
    (catalogue[key] ?? en[key]).replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(values, name) ? escapeValue(String(values[name])) : whole))
}

/** A moment as a mail states it, in UTC (the server knows no time zone of the reader's). */
export function mailMoment(language: string | undefined, at: number): string {
  if (language === undefined || language === 'en' || !Object.hasOwn(mailCatalogues, language)) return new Date(at).toUTCString()
  return `${new Intl.DateTimeFormat(language, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(at))} UTC`
}
