// The catalogues and the choice among them: the first language of Accept-Language (by its
// q-values) that has a catalogue, else English. A key missing from a catalogue falls back to
// English (tsc and test/unit/pages-strings.test.ts keep that from happening).
import { chooseLanguage as chooseAmong } from '../../../core/languages'
import { de } from './de'
import { en, type Catalogue, type MessageKey } from './en'

export type { MessageKey }
const CATALOGUES: Record<string, Catalogue> = { en, de }
export const LANGUAGES = Object.keys(CATALOGUES)

export type Translate = ((key: MessageKey, values?: Record<string, string | number>) => string) & { language: string }

export const chooseLanguage = (acceptLanguage: string | null): string => chooseAmong(acceptLanguage, LANGUAGES)

export function translator(language: string): Translate {
  const catalogue = Object.hasOwn(CATALOGUES, language) ? CATALOGUES[language]! : en
  const t = (key: MessageKey, values: Record<string, string | number> = {}) => (catalogue[key] ?? en[key]).replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole))
  return Object.assign(t, { language: Object.hasOwn(CATALOGUES, language) ? language : 'en' })
}

/** A wait, as "in 1 second", "in 40 seconds" or "in 15 minutes" in the reader's language
 *  (minutes, rounded up, from two minutes on). */
export function formatWait(language: string, seconds: number): string {
  const relative = new Intl.RelativeTimeFormat(language, { numeric: 'always' })
  const whole = Math.max(1, Math.ceil(seconds))
  return whole < 120 ? relative.format(whole, 'second') : relative.format(Math.ceil(whole / 60), 'minute')
}

export const catalogues = CATALOGUES

/** A moment as the pages show it, in the reader's language (UTC: the server knows no time zone of theirs). */
export function formatMoment(language: string, iso: string, withTime = true): string {
  const format = new Intl.DateTimeFormat(language, { dateStyle: 'medium', ...(withTime && { timeStyle: 'short' }), timeZone: 'UTC' }).format(new Date(iso))
  return withTime ? `${format} UTC` : format
}

/** The notice a page shows for its `?done=` value: only the page's own names count (never
 *  `constructor` or another property every object has). */
export const noticeOf = (notices: Record<string, MessageKey>, done: unknown): MessageKey | undefined =>
  typeof done === 'string' && Object.hasOwn(notices, done) ? notices[done] : undefined
