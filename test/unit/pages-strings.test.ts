// Every catalogue of the pages holds exactly the keys of the English one (tsc checks the
// German one's type too; this catches a catalogue added without the type), with the same
// {placeholders}; and the language is chosen from Accept-Language by its q-values.
import { describe, expect, it } from 'bun:test'
import { en } from '../../src/server/pages/strings/en'
import type { AppError } from '../../src/core/errors'
import { checkPasswordPolicy } from '../../src/core/accounts/password-policy'
import { passwordRule } from '../../src/server/pages/problems'
import { catalogues, chooseLanguage, formatWait, translator } from '../../src/server/pages/strings'

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()

describe('the pages\' catalogues', () => {
  it.each(Object.entries(catalogues))('%s has every key of the English one, no other, with the same placeholders', (_, catalogue) => {
    expect(Object.keys(catalogue).sort()).toEqual(Object.keys(en).sort())
    for (const [key, text] of Object.entries(en)) expect({ key, placeholders: placeholders((catalogue as Record<string, string>)[key]!) }).toEqual({ key, placeholders: placeholders(text) })
  })

  it.each([
    [null, 'en'],
    ['de', 'de'],
    ['de-AT,de;q=0.9,en;q=0.8', 'de'],
    ['fr, en;q=0.5, de;q=0.7', 'de'],
    ['de;q=0, en', 'en'],
    ['xx', 'en'],
  ])('Accept-Language %p chooses %p', (header, language) => {
    expect(chooseLanguage(header)).toBe(language)
  })

  it.each([
    ['en', 1, 'in 1 second'],
    ['en', 40, 'in 40 seconds'],
    ['en', 900, 'in 15 minutes'],
    ['de', 1, 'in 1 Sekunde'],
    ['de', 130, 'in 3 Minuten'],
  ])('says a wait in %p: %p s is %p', (language, seconds, said) => {
    expect(formatWait(language as string, seconds as number)).toBe(said as string)
  })

  it('fills in {values}', () => {
    expect(translator('de')('login.heading', { tenant: 'Acme' })).toBe('Bei Acme anmelden')
  })
})

describe('password rules on the pages', () => {
  const context = { email: 'adalovelace@example.com', firstName: 'Augusta', lastName: 'King' }
  it.each([
    ['too short', 'short', 'The password must be at least 12 characters long.', 'Das Passwort muss mindestens 12 Zeichen lang sein.'],
    ['too long', 'x'.repeat(200) + 'yz', 'The password must be at most 128 characters long.', 'Das Passwort darf höchstens 128 Zeichen lang sein.'],
    ['the address', 'mail adalovelace@example.com', 'The password must not contain your e-mail address.', 'Das Passwort darf Ihre E-Mail-Adresse nicht enthalten.'],
    ["the address's local part", 'my adalovelace secret', 'The password must not contain the part of your e-mail address before the @.', 'Das Passwort darf den Teil Ihrer E-Mail-Adresse vor dem @ nicht enthalten.'],
    ['a name', 'the augusta passphrase', 'The password must not contain your name.', 'Das Passwort darf Ihren Namen nicht enthalten.'],
    ['a pattern', 'abcabcabcabcabc', 'The password must not be a short pattern repeated.', 'Das Passwort darf kein kurzes, wiederholtes Muster sein.'],
    ['common', 'password123456', 'This password is too common: it appears in lists of breached passwords.', 'Dieses Passwort ist zu verbreitet: Es steht in Listen gestohlener Passwörter.'],
    ['not Unicode', 'a lone \ud800 surrogate here', 'The password contains a character that cannot be used.', 'Das Passwort enthält ein Zeichen, das nicht verwendet werden kann.'],
  ])('are said in English and German by the rule the policy names, not by its English words: %s', async (_, password, english, german) => {
    const refusal = await checkPasswordPolicy(password, 12, context).then(
      () => null,
      (error: unknown) => error as AppError,
    )
    expect(refusal?.code).toBe('weak_password')
    expect([passwordRule(translator('en'), refusal!), passwordRule(translator('de'), refusal!)]).toEqual([english, german])
  })
})
