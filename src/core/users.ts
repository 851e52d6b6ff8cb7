import type { Deps } from './deps'
import { badRequest, conflict, notFound } from './errors'
import { checkPasswordPolicy } from './password-policy'
import { randomToken, sha256 } from './secrets'
import { getTenant, validateName } from './tenants'
import { USER_TYPES, type SetupToken, type Tenant, type User, type UserType } from './types'

/** The User object of the interface document. */
export interface PublicUser {
  userId: string
  email: string
  firstName: string
  lastName: string
  type: UserType
  tenant: { tenantId: string; name: string }
}

export function toPublicUser(user: User, tenant: Tenant): PublicUser {
  return {
    userId: user.id,
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    type: user.type,
    tenant: { tenantId: tenant.id, name: tenant.name },
  }
}

// Deliberately plain: one @, no spaces, a dot in the domain. Anything stricter rejects real
// addresses; the mail that is sent is the real test of an address.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/

/** Trims and lower-cases (addresses are case-insensitive here), or throws 400. */
export function normaliseEmail(raw: unknown): string {
  const email = typeof raw === 'string' ? raw.trim().toLowerCase() : ''
  if (email.length > 254 || !EMAIL_PATTERN.test(email)) throw badRequest('email must be a valid e-mail address')
  return email
}

export interface NewUser {
  tenantId: string
  email: string
  firstName: string
  lastName: string
  type?: string
  password?: string
}

export interface CreatedUser {
  user: User
  tenant: Tenant
  /** Issued when the user has no password and is not a `tenant` account. */
  setupToken?: { token: string; expiresAt: number }
}

export async function createUser(deps: Pick<Deps, 'store' | 'clock' | 'config' | 'hasher'>, input: NewUser): Promise<CreatedUser> {
  const tenant = await getTenant(deps, input.tenantId)
  const type = (input.type ?? 'user') as UserType
  if (!USER_TYPES.includes(type)) throw badRequest(`type must be one of ${USER_TYPES.join(', ')}`)
  const now = deps.clock.now()
  const user: User = {
    id: Bun.randomUUIDv7(),
    tenantId: tenant.id,
    email: normaliseEmail(input.email),
    firstName: validateName('firstName', input.firstName),
    lastName: validateName('lastName', input.lastName),
    type,
    passwordHash: null,
    createdAt: now,
    updatedAt: now,
    disabledAt: null,
  }
  if (input.password !== undefined) {
    if (type === 'tenant') throw badRequest('Tenant users cannot have a password')
    user.passwordHash = await deps.hasher.hash(checkPasswordPolicy(input.password, deps.config.passwordMinLength, user))
  }
  let setupToken: CreatedUser['setupToken']
  let setupRecord: SetupToken | undefined
  if (user.passwordHash === null && type !== 'tenant') {
    const token = randomToken(32)
    const expiresAt = now + deps.config.setupTokenTtlSec * 1000
    setupToken = { token, expiresAt }
    setupRecord = { id: Bun.randomUUIDv7(), userId: user.id, tokenHash: sha256(token), createdAt: now, expiresAt, usedAt: null }
  }
  if (!(await deps.store.users.insert(user, setupRecord))) {
    throw conflict(`A user with e-mail ${user.email} already exists in this tenant`)
  }
  return { user, tenant, setupToken }
}

export async function getUser(deps: Pick<Deps, 'store'>, userId: string): Promise<User> {
  const user = await deps.store.users.get(userId)
  if (!user) throw notFound(`User not found: ${userId}`)
  return user
}

export async function setUserDisabled(deps: Pick<Deps, 'store' | 'clock'>, userId: string, disabled: boolean): Promise<User> {
  const now = deps.clock.now()
  const user = await deps.store.users.setDisabledAt(userId, disabled ? now : null, now)
  if (!user) throw notFound(`User not found: ${userId}`)
  // A disabled user's sessions end now, not when their refresh tokens would have.
  if (disabled) await deps.store.sessions.revokeUserFamilies(userId, now, 'user-disabled')
  return user
}
