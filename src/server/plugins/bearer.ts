// The `Authorization: Bearer <access token>` guard: `{ bearer: true }` on a route resolves the
// caller (user, tenant, session) or answers 401 before the handler runs.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'
import { authenticateBearer } from '../../core/sessions/signed-in-user'

export const bearerGuard = (deps: Pick<Deps, 'store' | 'clock' | 'config' | 'keyRing'>) =>
  new Elysia({ name: 'bearer' }).macro({
    bearer: {
      async resolve({ headers }) {
        return { caller: await authenticateBearer(deps, headers.authorization) }
      },
    },
  })
