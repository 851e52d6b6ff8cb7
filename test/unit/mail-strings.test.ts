// Every catalogue of the mails holds exactly the keys of the English one (tsc checks the
// German one's type too; this catches a catalogue added without the type), with the same
// {placeholders}; a mail is written in the language it is given, English when unknown.
import { describe, expect, it } from 'bun:test'
import { mailCatalogues, mailLanguageFor, mailMoment } from '../../src/core/mail/strings'
import { en } from '../../src/core/mail/strings/en'
import { mfaNoticeMail, passwordResetOtpMail } from '../../src/core/mail/templates'

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()

describe("the mails' catalogues", () => {
  it.each(Object.entries(mailCatalogues))('%s has every key of the English one, no other, with the same placeholders', (_, catalogue) => {
    expect(Object.keys(catalogue).sort()).toEqual(Object.keys(en).sort())
    for (const [key, text] of Object.entries(en)) expect({ key, placeholders: placeholders((catalogue as Record<string, string>)[key]!) }).toEqual({ key, placeholders: placeholders(text) })
  })

  it.each([
    [null, 'en'],
    ['de-DE,de;q=0.9', 'de'],
    ['fr, en;q=0.5, de;q=0.7', 'de'],
    ['de;q=0, en', 'en'],
    ['constructor, __proto__', 'en'],
  ])('Accept-Language %p writes in %p', (header, language) => {
    expect(mailLanguageFor(header)).toBe(language)
  })

  it('writes a mail in its language, values escaped in HTML only; an unknown language is English', () => {
    const input = { tenantName: 'A&B', firstName: 'Jörg', code: '123456', validMinutes: 10 }
    const german = passwordResetOtpMail({ ...input, language: 'de' })
    expect(german.subject).toBe('A&B: Ihr Code zum Zurücksetzen des Passworts')
    expect(german.text).toStartWith('Hallo Jörg,\n\nJemand hat darum gebeten, das Passwort Ihres Kontos bei A&B zurückzusetzen.')
    expect(german.html).toContain('<html lang="de">')
    expect(german.html).toContain('Kontos bei A&amp;B zurückzusetzen')
    expect(passwordResetOtpMail({ ...input, language: 'xx' }).subject).toBe('A&B: your password reset code')
    expect(mfaNoticeMail({ tenantName: 'Acme', firstName: '', notice: 'recovery-used', at: 0, recoveryCodesLeft: 3, language: 'de' }).text).toContain('Sie haben noch 3 Wiederherstellungscodes.')
  })

  it('states a moment in the language, in UTC', () => {
    const at = Date.UTC(2026, 10, 25, 4, 5)
    expect(mailMoment('en', at)).toBe('Wed, 25 Nov 2026 04:05:00 GMT')
    expect(mailMoment('de', at)).toBe('25. November 2026 um 04:05 UTC')
  })
})
