import type { Command } from 'commander'
import { isPublished, revokeSigningKey, rotateKeys } from '../../core/sessions/signing-keys'
import { contextFrom } from '../context'
import { isoTime, table } from '../io'
import type { Env } from '../env'

export function registerKeys(program: Command, env: Env) {
  const keys = program.command('keys').description('signing keys: ES256 for access tokens (and ID tokens that ask for it), RS256 for ID tokens')

  keys
    .command('rotate')
    .description('make a new signing key of each algorithm (ES256, RS256); the old public keys stay in the JWKS until their tokens expire')
    .action(async (_: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const rotated = (await ctx.withRuntime((rt) => rotateKeys(rt))).map((k) => ({ kid: k.kid, alg: k.alg, createdAt: isoTime(k.createdAt) }))
      // (the access-token key's fields at the top, as before there was an RSA key)
      ctx.out.result({ ...rotated[0]!, keys: rotated }, () => rotated.map((k) => `new signing key ${k.kid} (${k.alg}) is now active`).join('\n'))
    })

  keys
    .command('revoke <kid>')
    .description('emergency: remove a leaked key from the JWKS at once and end every session it signed an access token for')
    .action(async (kid: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const result = await ctx.withRuntime((rt) => revokeSigningKey(rt, kid))
      ctx.out.result(result, () =>
        [
          `revoked signing key ${result.kid} (${result.alg}): it is out of the JWKS`,
          result.replacementKid ? `new signing key ${result.replacementKid} (${result.alg}) is now active` : null,
          `${result.sessionsRevoked} session(s) ended`,
        ]
          .filter(Boolean)
          .join('\n'),
      )
    })

  keys
    .command('list')
    .description('list signing keys')
    .action(async (_: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const rows = await ctx.withRuntime(async (rt) => {
        const now = rt.clock.now()
        return (await rt.store.signingKeys.list()).map((k) => ({
          kid: k.kid,
          alg: k.alg,
          active: k.retiredAt === null && k.revokedAt === null,
          published: isPublished(k, now, rt.config.accessTokenTtlSec),
          createdAt: isoTime(k.createdAt),
          retiredAt: isoTime(k.retiredAt),
          revokedAt: isoTime(k.revokedAt),
        }))
      })
      ctx.out.result(rows, () => table(rows, ['kid', 'alg', 'active', 'published', 'createdAt', 'retiredAt', 'revokedAt']))
    })
}
