// One Chromium for every browser test of a run (Debian's, through playwright-core): launched by
// the first file that asks and shared by the next ones, rather than a browser per test or file.
// Each file takes a fresh context (cookies and storage of its own) from it.
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

export const CHROMIUM = process.env.AUTHD_TEST_CHROMIUM ?? '/usr/bin/chromium'
/** Whether the browser tests can run here; in CI (CI=true) its absence fails them instead. */
export const browserAvailable = existsSync(CHROMIUM)
export const runBrowserTests = browserAvailable || process.env.CI === 'true'
if (!browserAvailable && process.env.CI !== 'true') console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`)

let launched: Promise<Browser> | undefined

/** The run's browser: launched once, closed by playwright when the test process exits. */
export function sharedBrowser(): Promise<Browser> {
  launched ??= chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  return launched
}
