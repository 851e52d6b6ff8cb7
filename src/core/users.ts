import { audit, CLI_ACTOR, type Actor } from './audit'
import type { Deps } from './deps'
import { badRequest, conflict, notFound } from './errors'
import { passwordChangedNotice } from './mail/outbox'
import { checkPasswordPolicy } from './password-policy'
import { newSetupToken } from './setup-password'
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

// Deliberately plain: one @, a dot in the domain. Anything stricter rejects real addresses;
// the mail that is sent is the real test of an address. What is refused is what could change
// where mail goes or what a log line says: white space, control and format characters (NUL,
// CR/LF, bidi overrides), and the characters that separate or quote addresses in a mail
// header (`,;<>()[]\"`): "a@x.com,b@y.com" must never reach nodemailer as one recipient.
const EMAIL_PATTERN = /^[^@]+@[^@.]+(\.[^@.]+)+$/
const EMAIL_FORBIDDEN = /[\s\p{C},;<>()[\]\\"]/u

/** Trims and lower-cases (addresses are case-insensitive here), or throws 400. */
export function normaliseEmail(raw: unknown): string {
  const email = typeof raw === 'string' ? raw.trim().toLowerCase() : ''
  if (email.length > 254 || !EMAIL_PATTERN.test(email) || EMAIL_FORBIDDEN.test(email)) throw badRequest('email must be a valid e-mail address')
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

/** Validates a new user and hashes its password; nothing is stored yet. */
export async function prepareUser(
  deps: Pick<Deps, 'clock' | 'config' | 'hasher'>,
  tenant: Tenant,
  input: Omit<NewUser, 'tenantId'>,
): Promise<{ user: User; setupToken?: { token: string; record: SetupToken } }> {
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
    user.passwordHash = await deps.hasher.hash(await checkPasswordPolicy(input.password, deps.config.passwordMinLength, user))
  }
  // Tenant users are machine identities: they never get a setup token.
  const setupToken = user.passwordHash === null && type !== 'tenant' ? newSetupToken(deps, user.id, now) : undefined
  return { user, setupToken }
}

export const emailTaken = (email: string) => conflict(`A user with e-mail ${email} already exists in this tenant`)

export async function createUser(deps: Pick<Deps, 'store' | 'clock' | 'config' | 'hasher'>, input: NewUser, actor: Actor = CLI_ACTOR): Promise<CreatedUser> {
  const tenant = await getTenant(deps, input.tenantId)
  const { user, setupToken } = await prepareUser(deps, tenant, input)
  if (!(await deps.store.users.insert(user, setupToken?.record))) throw emailTaken(user.email)
  await audit(deps, 'user.created', actor, { tenantId: tenant.id, userId: user.id, detail: { type: user.type, withPassword: user.passwordHash !== null } })
  return { user, tenant, setupToken: setupToken && { token: setupToken.token, expiresAt: setupToken.record.expiresAt } }
}

/** `authd users set-password`: the policy applies; every session ends and the user is told. */
export async function setUserPassword(
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'hasher' | 'mailQueued'>,
  userId: string,
  password: string,
  actor: Actor = CLI_ACTOR,
): Promise<User> {
  const user = await getUser(deps, userId)
  if (user.type === 'tenant') throw badRequest('Tenant users cannot have a password')
  const tenant = await getTenant(deps, user.tenantId)
  const passwordHash = await deps.hasher.hash(await checkPasswordPolicy(password, deps.config.passwordMinLength, user))
  const now = deps.clock.now()
  await deps.store.users.replacePassword({ userId, passwordHash, now, notice: passwordChangedNotice(tenant, user, now) })
  deps.mailQueued.notify()
  await audit(deps, 'password.set_by_admin', actor, { tenantId: tenant.id, userId })
  return { ...user, passwordHash, updatedAt: now }
}

export async function getUser(deps: Pick<Deps, 'store'>, userId: string): Promise<User> {
  const user = await deps.store.users.get(userId)
  if (!user) throw notFound(`User not found: ${userId}`)
  return user
}

export async function setUserDisabled(deps: Pick<Deps, 'store' | 'clock'>, userId: string, disabled: boolean, actor: Actor = CLI_ACTOR): Promise<User> {
  const now = deps.clock.now()
  // Disabling ends the user's sessions now, not when their refresh tokens would have, and
  // spends every OTP and setup token mailed before it.
  const user = await deps.store.users.setDisabledAt(userId, disabled ? now : null, now)
  if (!user) throw notFound(`User not found: ${userId}`)
  await audit(deps, disabled ? 'user.disabled' : 'user.enabled', actor, { tenantId: user.tenantId, userId })
  return user
}
