// The X-API-KEY guard: `{ apiKey: true }` on a route resolves the tenant the key selects,
// or answers 401 before the handler runs.
import { Elysia } from 'elysia'
import { authenticateApiKey } from '../../core/tenants/api-keys'
import type { Deps } from '../../core/deps'

export const apiKeyGuard = (deps: Pick<Deps, 'store'>) =>
  new Elysia({ name: 'api-key' }).macro({
    apiKey: {
      async resolve({ headers }) {
        return { tenant: await authenticateApiKey(deps, headers['x-api-key']) }
      },
    },
  })
