// One Chromium for every browser test of a run (Debian's, through playwright-core): launched by
// the first file that asks and shared by the next ones, rather than a browser per test or file.
// Each file takes a fresh context (cookies and storage of its own) from it.
import { existsSync, readFileSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM = process.env.AUTHD_TEST_CHROMIUM ?? '/usr/bin/chromium'
/** Whether the browser tests can run here; in CI (CI=true) its absence fails them instead. */
export const browserAvailable = existsSync(CHROMIUM)
export const runBrowserTests = browserAvailable || process.env.CI === 'true'
if (!browserAvailable && process.env.CI !== 'true') console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`)

let launched: Promise<Browser> | undefined

/** Hosts the browser finds on this machine without asking DNS: the forward-auth test's
 *  applications and authd on a protected domain (app.example.test, auth.example.test, each on
 *  its own port), as a real browser would see them. example.test is reserved (RFC 2606). */
export const TEST_DOMAIN = 'example.test'

/** The run's browser: launched once, closed by playwright when the test process exits. */
export function sharedBrowser(): Promise<Browser> {
  launched ??= chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--host-resolver-rules=MAP *.${TEST_DOMAIN} 127.0.0.1`,
    ],
  })
  return launched
}

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')

/**
 * The serious and critical axe-core findings on `page` as it is now, as "rule: targets" lines.
 * axe runs on a copy of the page in `checker` (a context made with bypassCSP: true), because
 * the pages' CSP rightly refuses the injected script.
 */
export async function seriousViolations(checker: BrowserContext, page: Page): Promise<string[]> {
  const copy = await checker.newPage()
  try {
    await copy.setContent(await page.content())
    await copy.addScriptTag({ content: AXE })
    return await copy.evaluate(async () => {
      const result = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] })
      return result.violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical').map((v: any) => `${v.id}: ${v.nodes.map((n: any) => n.target).join(', ')}`)
    })
  } finally {
    await copy.close()
  }
}

/**
 * seriousViolations for pages without scripts of their own (the admin console), about twenty
 * times faster: one page of `checker` takes each page's copy in turn, axe-core loaded in it
 * once (document.open keeps the window, so axe stays; it is loaded again should it not have).
 * A page's scripts would run in that shared window and outlive their document: for such pages,
 * seriousViolations, which copies each into a page of its own.
 */
export function scriptlessChecker(checker: BrowserContext): (page: Page) => Promise<string[]> {
  let copy: Promise<Page> | undefined
  let queue: Promise<unknown> = Promise.resolve()
  return async (page) => {
    const content = await page.content()
    const run = queue.then(async () => {
      const target = await (copy ??= checker.newPage())
      await target.setContent(content)
      if ((await target.evaluate(() => typeof (globalThis as any).axe)) !== 'object') await target.addScriptTag({ content: AXE })
      return await target.evaluate(async () => {
        const result = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] })
        return result.violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical').map((v: any) => `${v.id}: ${v.nodes.map((n: any) => n.target).join(', ')}`)
      })
    })
    queue = run.catch(() => {})
    return run
  }
}

/** Runs an action that leads to a new page, and waits until that page has loaded. */
export async function loaded(page: Page, action: () => Promise<unknown>): Promise<void> {
  await Promise.all([page.waitForEvent('load'), action()])
}

/**
 * A page of `context` with the DevTools virtual authenticator (ctap2, internal transport,
 * resident keys, user verification, presence given at once). With `autofill: false` the page
 * reports no conditional mediation, so a passkey is used only when a button asks for it (not
 * offered by the e-mail field's autofill as the login page loads).
 */
export async function pageWithAuthenticator(context: BrowserContext, { autofill = true } = {}): Promise<Page> {
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })
  if (!autofill) {
    await page.addInitScript(() => {
      ;(globalThis as any).PublicKeyCredential.isConditionalMediationAvailable = async () => false
    })
  }
  return page
}
