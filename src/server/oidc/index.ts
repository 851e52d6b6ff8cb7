// The OpenID Provider (product spec §21), every endpoint under the issuer /t/{tenant}.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { appsPages } from './apps-page'
import { authorizeRoutes } from './authorize'
import { endSessionRoutes } from './end-session'
import { oidcEndpoints } from './endpoints'

export { oauthErrorAnswer } from './protocol'
export { oidcCors } from './cors'

export const oidcRoutes = (deps: Deps) => new Elysia().use(oidcEndpoints(deps)).use(authorizeRoutes(deps)).use(endSessionRoutes(deps)).use(appsPages(deps))
