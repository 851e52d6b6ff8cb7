// The frame of every page: the tenant's branding (display name, accent colour, logo), the
// language, the style sheet under the response's nonce, and the main landmark with the
// page's heading.
import { tenantTitle } from '../../core/tenants/tenants'
import type { Tenant } from '../../core/types'
import css from './assets/pages.css' with { type: 'text' }
import { html, unsafeRaw, type SafeHtml } from './html'
import type { Translate } from './strings'

const DEFAULT_ACCENT = '#0a4bb5'
const ACCENT = /^#[0-9a-f]{6}$/

/** Black or white, whichever contrasts more with the accent (WCAG relative luminance). */
export function onAccent(accent: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(accent.slice(i, i + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }) as [number, number, number]
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
  // Contrast with white is 1.05 / (L + 0.05), with black (L + 0.05) / 0.05: equal at L ≈ 0.179.
  return luminance > 0.179 ? '#000000' : '#ffffff'
}

/** What of a tenant its pages show. */
export type Branding = Pick<Tenant, 'name' | 'displayName' | 'accentColor' | 'logoUrl' | 'logoContentType'>

export interface Frame {
  tenant: Branding
  /** The tenant as written in this page's URL (its slug or id), for links to its other pages. */
  base: string
  t: Translate
  nonce: string
}

export function logoSource(tenant: Branding, base: string): string | null {
  return tenant.logoUrl ?? (tenant.logoContentType ? `${base}/logo` : null)
}

/** @param options.wide a page of tables (the admin console); options.nav its navigation, above the main landmark */
export function layout(frame: Frame, title: string, main: SafeHtml, options: { wide?: boolean; nav?: SafeHtml } = {}): string {
  const { tenant, t, nonce } = frame
  const name = tenantTitle(tenant)
  // (validated as #rrggbb when set; checked again, since it is written into the style sheet)
  const accent = tenant.accentColor && ACCENT.test(tenant.accentColor) ? tenant.accentColor : DEFAULT_ACCENT
  const logo = logoSource(tenant, frame.base)
  return html`<!doctype html>
<html lang="${t('layout.language')}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} – ${name}</title>
<style nonce="${nonce}">${unsafeRaw(css)}
:root { --accent: ${accent}; --on-accent: ${onAccent(accent)}; }</style>
</head>
<body>
<header class="brand">${logo && html`<img src="${logo}" alt="">`}<span>${name}</span></header>
${options.nav ?? ''}
<main${options.wide ? html` class="wide"` : ''}>
<h1>${title}</h1>
${main}
</main>
</body>
</html>
`.value
}
