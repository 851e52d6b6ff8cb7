// The public signing keys as a plain JWKS document (RFC 7517), not in the envelope: JWT
// libraries (jose's createRemoteJWKSet and the like) read `keys` at the top level.
import { Elysia, t } from 'elysia'
import type { Deps } from '../../core/deps'

const Jwk = t.Object(
  { kty: t.String(), kid: t.String(), alg: t.String(), use: t.Optional(t.String()), crv: t.Optional(t.String()), x: t.Optional(t.String()), y: t.Optional(t.String()) },
  { additionalProperties: true },
)

export const jwksRoute = (deps: Pick<Deps, 'keyRing'>) =>
  new Elysia().get(
    '/.well-known/jwks.json',
    async ({ set }) => {
      // Short: a revoked key must leave shared caches soon (verifiers refetch on an unknown kid).
      set.headers['cache-control'] = 'public, max-age=60'
      // (the access-token keys: the RSA key signs only the OpenID Provider's ID tokens, /t/{tenant}/jwks)
      return deps.keyRing.jwks(['ES256'])
    },
    {
      detail: {
        summary: 'The public signing keys (JWKS)',
        description:
          'A plain JWKS document (RFC 7517), not the envelope: verify access tokens (ES256) with any JWT library, picking the key by the kid in the token header. The RSA keys that sign ID tokens are at the OpenID Provider\'s /t/{tenant}/jwks only. Cache-Control: public, max-age=60; a retired key stays listed until its tokens have expired.',
        responses: { 200: { description: 'The keys', content: { 'application/json': { schema: t.Object({ keys: t.Array(Jwk) }) } } } },
      },
    },
  )
