// The admin API's guard: `{ adminKey: true }` on a route resolves the key's tenant and the
// actor every admin operation is done and audited as (the client's address plus the key's id
// and tenant), or answers 401 (no valid key) / 403 (a key without the admin scope).
import { Elysia } from 'elysia'
import { authenticateAdminKey } from '../../core/tenants/api-keys'
import { adminActor } from '../../core/audit/audit'
import type { Deps } from '../../core/deps'
import { clientActor } from './client-ip'

export const adminKeyGuard = (deps: Pick<Deps, 'store' | 'config'>) =>
  new Elysia({ name: 'admin-key' }).use(clientActor(deps.config.trustedProxies)).macro({
    adminKey: {
      async resolve({ headers, actor }) {
        const { apiKey, tenant } = await authenticateAdminKey(deps, headers['x-api-key'])
        return { tenant, admin: adminActor(actor, apiKey) }
      },
    },
  })
