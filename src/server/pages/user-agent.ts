// A session's browser as the account page names it ("Chrome on Linux", "Safari on iPhone")
// from the User-Agent it signed in with: the few browsers and systems people use, read in the
// order that tells them apart (Edge and Opera say "Chrome" too, Chrome says "Safari", an
// iPhone says "like Mac OS X"). Anything else is an unknown browser: the raw string, cut to
// fit, read as noise and could say anything its sender liked.
import type { Translate } from './strings'

const BROWSERS: [RegExp, string][] = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bVivaldi\//, 'Vivaldi'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bChromium\//, 'Chromium'],
  [/\b(Headless)?Chrome\/|\bCriOS\//, 'Chrome'],
  [/\bVersion\/[\d.]+ (Mobile\/\S+ )?Safari\//, 'Safari'],
]

const SYSTEMS: [RegExp, string][] = [
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bAndroid\b/, 'Android'],
  [/\bWindows\b/, 'Windows'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
]

const first = (table: [RegExp, string][], userAgent: string) => table.find(([pattern]) => pattern.test(userAgent))?.[1]

/** The browser and system a User-Agent names, or null for one this does not know. */
export function parseUserAgent(userAgent: string | null): { browser: string; system?: string } | null {
  const browser = userAgent && first(BROWSERS, userAgent)
  if (!browser) return null
  const system = first(SYSTEMS, userAgent)
  return system ? { browser, system } : { browser }
}

/** "Chrome on Linux", "Firefox" (no system known), or "Unknown browser", in the page's language. */
export function describeUserAgent(t: Translate, userAgent: string | null): string {
  const parsed = parseUserAgent(userAgent)
  if (!parsed) return t('account.session.unknownAgent')
  return parsed.system ? t('account.session.agent', { browser: parsed.browser, system: parsed.system }) : parsed.browser
}
