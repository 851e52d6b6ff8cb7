// authd's own pages (product spec §20), every one under /t/{tenant}/ (the tenant's slug or
// id): a page per file, each as thin as an API route, over the shared machinery of page.ts.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { notFound } from '../../core/errors'
import { findTenantForPages } from '../../core/tenants/tenant-pages'
import { accountPages } from './account'
import { devicePages } from './device'
import { invitePages } from './invite'
import { loginPages } from './login'
import { forwardAuthPages } from './forward-auth'
import { federationPages } from './federation'
import { logoutPages } from './logout'
import { PAGE_PREFIX } from './page'
import { passkeyPages } from './passkeys'
import { passwordResetPages } from './password-reset'
import { signupPages } from './signup'
import { stepUpPages } from './step-up'
import { twoFactorPages } from './two-factor'

export const pageRoutes = (deps: Deps) =>
  new Elysia()
    .use(loginPages(deps))
    .use(forwardAuthPages(deps))
    .use(federationPages(deps))
    .use(logoutPages(deps))
    .use(accountPages(deps))
    .use(stepUpPages(deps))
    .use(twoFactorPages(deps))
    .use(passkeyPages(deps))
    .use(passwordResetPages(deps))
    .use(invitePages(deps))
    .use(signupPages(deps))
    .use(devicePages(deps))
    .get(`${PAGE_PREFIX}/logo`, async ({ params, set }) => {
      // A logo file given to the CLI (`--logo FILE`), served by authd: the pages load nothing from elsewhere.
      const tenant = await findTenantForPages(deps, params.tenant)
      if (!tenant?.logoImage || !tenant.logoContentType) throw notFound()
      set.headers['content-type'] = tenant.logoContentType
      set.headers['cache-control'] = 'public, max-age=300'
      set.headers['content-security-policy'] = "default-src 'none'"
      set.headers['x-content-type-options'] = 'nosniff'
      return new Uint8Array(Buffer.from(tenant.logoImage, 'base64'))
    })
    // /t/{tenant} and /t/{tenant}/ lead to the login page.
    .get(PAGE_PREFIX, ({ params, set }) => {
      // (Elysia hands a segment that is no UTF-8 as null, which no tenant is named)
      if (typeof params.tenant !== 'string') throw notFound()
      set.status = 303
      set.headers.location = `/t/${encodeURIComponent(params.tenant)}/login`
      return ''
    })
