// Setup tokens: how a user created without a password gets one. Opaque, single use, stored
// as SHA-256, valid 72 hours by default. A `tenant` user (a machine identity) never gets one;
// the endpoint still refuses them (403) as the last line of defence.
import { audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { AppError, alreadyHasPassword, badRequest, notFound, tenantUserCannotSetUpPassword, unauthorized, userDisabled } from '../errors'
import { ipSubject, spendBudget } from '../guards/limits'
import { checkPasswordPolicy } from './password-policy'
import { sha256 } from '../secrets'
import { invitationMessage, newSetupToken } from './setup-tokens'
import { getTenant } from '../tenants/tenants'
import type { Tenant, User } from '../types'
import { getUser } from './users'

export { invitationMessage, newSetupToken, toInvitationView } from './setup-tokens'

/** `authd users invite`: a new setup token (earlier ones stop working), e-mailed and returned. */
export async function inviteUser(
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'mailQueued'>,
  userId: string,
  actor: Actor = CLI_ACTOR,
): Promise<{ user: User; tenant: Tenant; setupToken: string; expiresAt: number; mailId: string }> {
  const user = await getUser(deps, userId, actor)
  if (user.type === 'tenant') throw badRequest('Tenant users never get a setup token: they cannot have a password')
  if (user.passwordHash !== null) throw alreadyHasPassword()
  if (user.disabledAt !== null) throw userDisabled()
  const tenant = await getTenant(deps, user.tenantId)
  const now = deps.clock.now()
  const { token, record } = newSetupToken(deps, user.id, now)
  const mail = invitationMessage(deps, tenant, user, token, record, now, actor.language)
  await deps.store.setupTokens.replace(record, mail)
  deps.mailQueued.notify()
  await audit(deps, 'user.invited', actor, { tenantId: tenant.id, userId: user.id })
  return { user, tenant, setupToken: token, expiresAt: record.expiresAt, mailId: mail.id }
}

/** POST /setup-password: returns the userId. */
export async function setupPassword(
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'hasher' | 'serverKeys' | 'mailQueued' | 'limitRules' | 'refusals'>,
  input: { tenant: Tenant; setupToken: string | undefined; password: string },
  actor: Actor,
): Promise<string> {
  await spendBudget(deps, deps.limitRules.setupPasswordIp, ipSubject(actor.ip), { type: 'password.limited', actor, tenantId: input.tenant.id })
  let userId: string | undefined
  try {
    userId = await redeemSetupToken(deps, input, (id) => (userId = id))
    await audit(deps, 'password.set_up', actor, { tenantId: input.tenant.id, userId })
    return userId
  } catch (error) {
    if (error instanceof AppError && error.status !== 400) {
      await audit(deps, 'password.setup_failed', actor, { tenantId: input.tenant.id, userId, detail: { status: error.status } })
    }
    throw error
  }
}

async function redeemSetupToken(
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'hasher'>,
  input: { tenant: Tenant; setupToken: string | undefined; password: string },
  identified: (userId: string) => void,
): Promise<string> {
  if (!input.setupToken || input.setupToken.length > 128) throw unauthorized()
  const now = deps.clock.now()
  const record = await deps.store.setupTokens.findByHash(sha256(input.setupToken))
  if (!record || record.expiresAt <= now) throw unauthorized()
  const user = await deps.store.users.get(record.userId)
  if (!user) throw notFound()
  // Another tenant's token is as good as none: its existence is not revealed.
  if (user.tenantId !== input.tenant.id) throw unauthorized()
  identified(user.id)
  if (user.type === 'tenant') throw tenantUserCannotSetUpPassword()
  if (user.passwordHash !== null) throw alreadyHasPassword()
  if (record.usedAt !== null) throw unauthorized()
  if (user.disabledAt !== null) throw userDisabled()

  const password = await checkPasswordPolicy(input.password, deps.config.passwordMinLength, user)
  const passwordHash = await deps.hasher.hash(password)
  // Only the first of concurrent calls finds the user still without a password.
  if (!(await deps.store.setupTokens.complete({ userId: user.id, passwordHash, now }))) throw alreadyHasPassword()
  return user.id
}
