// Every catalogue of the pages holds exactly the keys of the English one (tsc checks the
// German one's type too; this catches a catalogue added without the type), with the same
// {placeholders}; and the language is chosen from Accept-Language by its q-values.
import { describe, expect, it } from 'bun:test'
import { en } from '../../src/server/pages/strings/en'
import { catalogues, chooseLanguage, translator } from '../../src/server/pages/strings'

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

  it('fills in {values}', () => {
    expect(translator('de')('login.heading', { tenant: 'Acme' })).toBe('Bei Acme anmelden')
  })
})
