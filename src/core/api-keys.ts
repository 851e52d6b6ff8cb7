// API keys: `authd_` + 256 random bits, shown once. Stored as SHA-256 plus a short visible
// prefix. Looking a key up by its hash needs no constant-time compare: an attacker can
// neither choose nor learn a stored hash's preimage from how long the look-up takes.
import { audit, CLI_ACTOR, type Actor } from './audit'
import type { Deps } from './deps'
import { notFound, unauthorized } from './errors'
import { randomToken, sha256 } from './secrets'
import { getTenant, validateName } from './tenants'
import type { ApiKey, Tenant } from './types'

const KEY_PREFIX = 'authd_'
const VISIBLE_PREFIX_LENGTH = KEY_PREFIX.length + 6

export async function createApiKey(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { tenantId: string; name?: string },
  actor: Actor = CLI_ACTOR,
): Promise<{ apiKey: ApiKey; key: string }> {
  await getTenant(deps, input.tenantId)
  const key = KEY_PREFIX + randomToken(32)
  const apiKey: ApiKey = {
    id: Bun.randomUUIDv7(),
    tenantId: input.tenantId,
    name: input.name === undefined ? 'default' : validateName('API key name', input.name),
    prefix: key.slice(0, VISIBLE_PREFIX_LENGTH),
    createdAt: deps.clock.now(),
    revokedAt: null,
  }
  await deps.store.apiKeys.insert(apiKey, sha256(key))
  await audit(deps, 'api_key.created', actor, { tenantId: apiKey.tenantId, detail: { keyId: apiKey.id, prefix: apiKey.prefix } })
  return { apiKey, key }
}

/** The tenant an X-API-KEY value selects; 401 for a missing, unknown or revoked key, or a disabled tenant. */
export async function authenticateApiKey(deps: Pick<Deps, 'store'>, presented: string | undefined | null): Promise<Tenant> {
  if (!presented || !presented.startsWith(KEY_PREFIX) || presented.length > 128) throw unauthorized()
  const found = await deps.store.apiKeys.findActiveByHash(sha256(presented))
  if (!found || found.tenant.disabledAt !== null) throw unauthorized()
  return found.tenant
}

export async function revokeApiKey(deps: Pick<Deps, 'store' | 'clock'>, keyId: string, actor: Actor = CLI_ACTOR): Promise<ApiKey> {
  const apiKey = await deps.store.apiKeys.revoke(keyId, deps.clock.now())
  if (!apiKey) throw notFound(`API key not found: ${keyId}`)
  await audit(deps, 'api_key.revoked', actor, { tenantId: apiKey.tenantId, detail: { keyId, prefix: apiKey.prefix } })
  return apiKey
}
