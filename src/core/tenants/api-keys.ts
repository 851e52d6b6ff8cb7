// API keys: `authd_` + 256 random bits, shown once. Stored as SHA-256 plus a short visible
// prefix. Looking a key up by its hash needs no constant-time compare: an attacker can
// neither choose nor learn a stored hash's preimage from how long the look-up takes.
import { audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { adminScopeRequired, badRequest, notFoundById, unauthorized } from '../errors'
import { randomToken, sha256 } from '../secrets'
import { getTenant, validateName } from './tenants'
import { API_KEY_SCOPES, type ApiKey, type ApiKeyScope, type Tenant } from '../types'

const KEY_PREFIX = 'authd_'
const VISIBLE_PREFIX_LENGTH = KEY_PREFIX.length + 6

export async function createApiKey(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { tenantId: string; name?: string; scope?: string },
  actor: Actor = CLI_ACTOR,
): Promise<{ apiKey: ApiKey; key: string }> {
  const created = newApiKey(deps, input)
  await getTenant(deps, input.tenantId)
  const { apiKey, key } = created
  await deps.store.apiKeys.insert(apiKey, created.keyHash)
  await audit(deps, 'api_key.created', actor, apiKeyCreatedEvent(apiKey))
  return { apiKey, key }
}

/** A new key and its validated record; nothing is stored yet. */
export function newApiKey(deps: Pick<Deps, 'clock'>, input: { tenantId: string; name?: string; scope?: string }): { apiKey: ApiKey; key: string; keyHash: string } {
  const scope = (input.scope ?? 'client') as ApiKeyScope
  if (!API_KEY_SCOPES.includes(scope)) throw badRequest(`scope must be one of ${API_KEY_SCOPES.join(', ')}`)
  const key = KEY_PREFIX + randomToken(32)
  const apiKey: ApiKey = {
    id: Bun.randomUUIDv7(),
    tenantId: input.tenantId,
    name: input.name === undefined ? 'default' : validateName('API key name', input.name),
    prefix: key.slice(0, VISIBLE_PREFIX_LENGTH),
    createdAt: deps.clock.now(),
    revokedAt: null,
    scope,
  }
  return { apiKey, key, keyHash: sha256(key) }
}

export const apiKeyCreatedEvent = (apiKey: ApiKey) => ({ tenantId: apiKey.tenantId, detail: { keyId: apiKey.id, prefix: apiKey.prefix, scope: apiKey.scope } })

/** The key an X-API-KEY value is, and its tenant; 401 for a missing, unknown or revoked key, or a disabled tenant. */
async function findPresentedKey(deps: Pick<Deps, 'store'>, presented: string | undefined | null): Promise<{ apiKey: ApiKey; tenant: Tenant }> {
  if (!presented || !presented.startsWith(KEY_PREFIX) || presented.length > 128) throw unauthorized()
  const found = await deps.store.apiKeys.findActiveByHash(sha256(presented))
  if (!found || found.tenant.disabledAt !== null) throw unauthorized()
  return found
}

/** The tenant an X-API-KEY value selects (a key of either scope: admin includes client). */
export async function authenticateApiKey(deps: Pick<Deps, 'store'>, presented: string | undefined | null): Promise<Tenant> {
  return (await findPresentedKey(deps, presented)).tenant
}

/** The admin API's key check: 401 as for any key, then 403 for a key without the admin scope. */
export async function authenticateAdminKey(deps: Pick<Deps, 'store'>, presented: string | undefined | null): Promise<{ apiKey: ApiKey; tenant: Tenant }> {
  const found = await findPresentedKey(deps, presented)
  if (found.apiKey.scope !== 'admin') throw adminScopeRequired()
  return found
}

export async function revokeApiKey(deps: Pick<Deps, 'store' | 'clock'>, keyId: string, actor: Actor = CLI_ACTOR): Promise<ApiKey> {
  const apiKey = await deps.store.apiKeys.revoke(keyId, deps.clock.now())
  if (!apiKey) throw notFoundById('API key', keyId)
  await audit(deps, 'api_key.revoked', actor, { tenantId: apiKey.tenantId, detail: { keyId, prefix: apiKey.prefix } })
  return apiKey
}
