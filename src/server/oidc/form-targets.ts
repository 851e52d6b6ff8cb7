// Where a page's form may end up once authd answers it with redirects. The pages' CSP limits
// form-action to authd and the tenant's registered origins, and Chromium applies it to every
// redirect after a form is sent: a sign-in that returns to /authorize, which sends the browser
// on to the client, needs the client's redirect URI allowed too. Only the URIs the client
// registered (for /authorize) or its post-logout URIs (for /end_session) are added.
import type { Deps } from '../../core/deps'
import type { Tenant } from '../../core/types'

const OIDC_PATH = /^\/t\/[^/]+\/(authorize|end_session)$/

/** A CSP source for a URI: its origin, or its scheme for a native app's private-use URI. */
export const sourceOf = (uri: string) => {
  const url = new URL(uri)
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : url.protocol
}

export async function oidcFormTargets(deps: Pick<Deps, 'store'>, tenant: Tenant, origin: string, returnTo: string | undefined): Promise<string[]> {
  if (!returnTo) return []
  let url: URL
  try {
    url = new URL(returnTo, origin)
  } catch {
    return []
  }
  const endpoint = url.origin === origin ? OIDC_PATH.exec(url.pathname)?.[1] : undefined
  const clientId = url.searchParams.get('client_id')
  if (!endpoint || !clientId || clientId.length > 100) return []
  const client = await deps.store.oidc.getClient(clientId)
  if (!client || client.tenantId !== tenant.id) return []
  return [...new Set((endpoint === 'authorize' ? client.redirectUris : client.postLogoutRedirectUris).map(sourceOf))]
}
