// The public signing keys as a plain JWKS document (RFC 7517), not in the envelope: JWT
// libraries (jose's createRemoteJWKSet and the like) read `keys` at the top level.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'

export const jwksRoute = (deps: Pick<Deps, 'keyRing'>) =>
  new Elysia().get('/.well-known/jwks.json', async ({ set }) => {
    // Short: a revoked key must leave shared caches soon (verifiers refetch on an unknown kid).
    set.headers['cache-control'] = 'public, max-age=60'
    return deps.keyRing.jwks()
  })
