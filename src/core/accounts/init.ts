// `authd init`: the first tenant, its API key and its first admin. Everything is validated
// (names, address, the password against the policy) before anything is written, and then
// written in one transaction: a refused password must not leave a tenant behind whose key
// was never shown, which a second `init` would then call "already initialised".
import { apiKeyCreatedEvent, newApiKey } from '../tenants/api-keys'
import { auditEvent, CLI_ACTOR } from '../audit/audit'
import type { Deps } from '../deps'
import { conflict } from '../errors'
import { invitationMessage } from './setup-password'
import { newTenant } from '../tenants/tenants'
import type { ApiKey, Tenant, User } from '../types'
import { prepareUser } from './users'

export interface FirstRun {
  tenantName: string
  email: string
  firstName: string
  lastName: string
  /** Without one, the admin is invited: a setup token, e-mailed (and returned). */
  password?: string
}

export interface Initialised {
  tenant: Tenant
  apiKey: ApiKey
  key: string
  user: User
  invitation?: { setupToken: string; mailId: string }
}

export const alreadyInitialised = () => conflict('the database is already initialised')

export async function initialise(deps: Pick<Deps, 'store' | 'clock' | 'config' | 'hasher' | 'mailQueued'>, input: FirstRun): Promise<Initialised> {
  const tenant = newTenant(deps, { name: input.tenantName })
  const { apiKey, key, keyHash } = newApiKey(deps, { tenantId: tenant.id })
  const { user, setupToken } = await prepareUser(deps, tenant, { ...input, type: 'admin' })
  const invitation = setupToken && invitationMessage(deps, tenant, user, setupToken.token, setupToken.record, user.createdAt)
  const event = (type: Parameters<typeof auditEvent>[1], fields: Parameters<typeof auditEvent>[3]) => auditEvent(deps, type, CLI_ACTOR, fields)
  const written = await deps.store.tenants.initialise({
    tenant,
    apiKey,
    keyHash,
    user,
    setupToken: setupToken?.record,
    invitation,
    audit: [
      event('tenant.created', { tenantId: tenant.id, detail: { audience: tenant.audience } }),
      event('api_key.created', apiKeyCreatedEvent(apiKey)),
      event('user.created', { tenantId: tenant.id, userId: user.id, detail: { type: user.type, withPassword: user.passwordHash !== null, invited: invitation !== undefined } }),
    ],
  })
  if (!written) throw alreadyInitialised()
  if (invitation) deps.mailQueued.notify()
  return { tenant, apiKey, key, user, invitation: setupToken && invitation && { setupToken: setupToken.token, mailId: invitation.id } }
}
