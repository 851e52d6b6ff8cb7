import { actorSees, audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { badRequest, conflict, notFoundById } from '../errors'
import { passwordChangedNotice } from '../mail/outbox'
import { checkPasswordPolicy } from './password-policy'
import { invitationMessage, newSetupToken } from './setup-tokens'
import { getTenant, validateName } from '../tenants/tenants'
import { normaliseEmail } from '../names'
import type { UserFields } from './store'
import { USER_TYPES, type SetupToken, type Tenant, type User, type UserType } from '../types'

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


const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/** The user as they see themselves (GET /me): whether their address is proven too, and their groups' names (sorted). */
export type OwnUserView = PublicUser & { emailVerifiedAt: string | null; groups: string[] }

export const toOwnUserView = (user: User, tenant: Tenant, groups: string[]): OwnUserView => ({ ...toPublicUser(user, tenant), emailVerifiedAt: isoOrNull(user.emailVerifiedAt), groups })

/** A user as an administrator sees it (the admin API and the CLI print this same shape). */
export interface UserView extends OwnUserView {
  hasPassword: boolean
  disabled: boolean
  createdAt: string
  updatedAt: string
}

export function toUserView(user: User, tenant: Tenant, groups: string[]): UserView {
  return {
    ...toOwnUserView(user, tenant, groups),
    hasPassword: user.passwordHash !== null,
    disabled: user.disabledAt !== null,
    createdAt: new Date(user.createdAt).toISOString(),
    updatedAt: new Date(user.updatedAt).toISOString(),
  }
}

/** The user as an administrator sees it, with the names of their groups as they are now. */
export async function userView(deps: Pick<Deps, 'store'>, user: User, tenant?: Tenant): Promise<UserView> {
  return toUserView(user, tenant ?? (await getTenant(deps, user.tenantId)), await deps.store.groups.groupNamesOfUser(user.id))
}

/** What creating a user answers: the User, plus the setup token when one was issued and not mailed. */
export type CreatedUserView = OwnUserView & { setupToken?: string; setupTokenExpiresAt?: string }

export function toCreatedUserView(created: CreatedUser): CreatedUserView {
  // (a user just made is in no group: the import's memberships are not in this view)
  const user = toOwnUserView(created.user, created.tenant, [])
  const setup = created.setupToken
  return setup ? { ...user, setupToken: setup.token, setupTokenExpiresAt: new Date(setup.expiresAt).toISOString() } : user
}

export interface NewUser {
  tenantId: string
  email: string
  firstName: string
  lastName: string
  type?: string
  password?: string
  /** Mail the setup token (an invitation) instead of returning it. */
  invite?: boolean
  /** The admin vouches that the user receives mail at `email`. */
  emailVerified?: boolean
}

export interface CreatedUser {
  user: User
  tenant: Tenant
  /** Issued when the user has no password, is not a `tenant` account and was not invited by mail. */
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
    sessionEpoch: 0,
    emailVerifiedAt: input.emailVerified === true ? now : null,
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

export async function createUser(
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'hasher' | 'mailQueued'>,
  input: NewUser,
  actor: Actor = CLI_ACTOR,
): Promise<CreatedUser> {
  if (!actorSees(actor, input.tenantId)) throw notFoundById('Tenant', input.tenantId)
  const tenant = await getTenant(deps, input.tenantId)
  const { user, setupToken } = await prepareUser(deps, tenant, input)
  if (input.invite && !setupToken) {
    throw badRequest(user.type === 'tenant' ? 'Tenant users cannot be invited: they cannot have a password' : 'invite and password exclude each other')
  }
  const invitation = input.invite && setupToken ? invitationMessage(deps, tenant, user, setupToken.token, setupToken.record, user.createdAt, actor.language) : undefined
  if (!(await deps.store.users.insert(user, setupToken?.record, invitation))) throw emailTaken(user.email)
  if (invitation) deps.mailQueued.notify()
  await audit(deps, 'user.created', actor, {
    tenantId: tenant.id,
    userId: user.id,
    detail: { type: user.type, withPassword: user.passwordHash !== null, invited: invitation !== undefined, ...(user.emailVerifiedAt !== null && { emailVerified: true }) },
  })
  return { user, tenant, setupToken: setupToken && !invitation ? { token: setupToken.token, expiresAt: setupToken.record.expiresAt } : undefined }
}

export const MAX_PAGE = 100

/** Opaque to clients: the last id of the page, base64url. */
const encodeCursor = (lastId: string) => Buffer.from(lastId).toString('base64url')
function decodeCursor(cursor: string): string {
  const id = /^[A-Za-z0-9_-]{1,100}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString() : ''
  if (!/^[0-9a-f-]{36}$/.test(id)) throw badRequest('cursor is not one this server returned')
  return id
}

export interface UserPage {
  items: UserView[]
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null
}

/** A tenant's users in creation order, a keyset page at a time (stable while users are added). */
export async function listUsers(
  deps: Pick<Deps, 'store' | 'clock'>,
  tenantId: string,
  query: { email?: string; cursor?: string; limit?: number },
  actor: Actor = CLI_ACTOR,
): Promise<UserPage> {
  if (!actorSees(actor, tenantId)) throw notFoundById('Tenant', tenantId)
  const limit = query.limit ?? 50
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw badRequest(`limit must be an integer from 1 to ${MAX_PAGE}`)
  const email = query.email === undefined ? undefined : normaliseEmail(query.email)
  const afterId = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
  const tenant = await getTenant(deps, tenantId)
  // One more than asked tells whether there is a next page without a count.
  const rows = await deps.store.users.page(tenantId, { email, afterId, limit: limit + 1 })
  const items = rows.slice(0, limit)
  await audit(deps, 'users.listed', actor, { tenantId, detail: { count: items.length } })
  const groups = await deps.store.groups.groupNamesOfUsers(items.map((u) => u.id))
  return { items: items.map((u) => toUserView(u, tenant, groups.get(u.id) ?? [])), nextCursor: rows.length > limit ? encodeCursor(items.at(-1)!.id) : null }
}

/** One user, as an administrator sees it; audited as a read. */
export async function viewUser(deps: Pick<Deps, 'store' | 'clock'>, userId: string, actor: Actor = CLI_ACTOR): Promise<UserView> {
  const user = await getUser(deps, userId, actor)
  await audit(deps, 'user.viewed', actor, { tenantId: user.tenantId, userId })
  return userView(deps, user)
}

export interface UserChanges {
  email?: string
  firstName?: string
  lastName?: string
  type?: string
  disabled?: boolean
  /** true: the admin vouches for the address (now); false: it is no longer taken as proven. */
  emailVerified?: boolean
}

/**
 * Address, names and type, whether the address is proven, and disabling (which ends every
 * session, as setUserDisabled does). A new address is not proven unless the same change says
 * so; the setup tokens and OTPs mailed to the old one stop working with it.
 */
export async function updateUser(deps: Pick<Deps, 'store' | 'clock'>, userId: string, changes: UserChanges, actor: Actor = CLI_ACTOR): Promise<UserView> {
  let user = await getUser(deps, userId, actor)
  const now = deps.clock.now()
  const fields: UserFields = {}
  if (changes.email !== undefined) {
    const email = normaliseEmail(changes.email)
    if (email !== user.email) Object.assign(fields, { email, emailVerifiedAt: null })
  }
  if (changes.emailVerified !== undefined) {
    if (typeof changes.emailVerified !== 'boolean') throw badRequest('emailVerified must be true or false')
    fields.emailVerifiedAt = changes.emailVerified ? now : null
  }
  if (changes.firstName !== undefined) fields.firstName = validateName('firstName', changes.firstName)
  if (changes.lastName !== undefined) fields.lastName = validateName('lastName', changes.lastName)
  if (changes.type !== undefined) {
    const type = changes.type as UserType
    if (!USER_TYPES.includes(type)) throw badRequest(`type must be one of ${USER_TYPES.join(', ')}`)
    if (type === 'tenant' && user.passwordHash !== null) throw badRequest('Tenant users cannot have a password')
    fields.type = type
  }
  const asked = Object.keys(changes).filter((key) => key !== 'disabled' && changes[key as keyof UserChanges] !== undefined)
  if (asked.length === 0 && changes.disabled === undefined) throw badRequest('Nothing to change: give email, firstName, lastName, type, emailVerified or disabled')
  const changed = Object.keys(fields)
  const togglesDisabled = changes.disabled !== undefined && changes.disabled !== (user.disabledAt !== null)
  if (changed.length > 0) {
    const updated = await deps.store.users.update(userId, fields, now)
    if (updated === 'email-taken') throw emailTaken(fields.email!)
    user = updated ?? notFoundUser(userId)
  }
  // Every call is an event, even one that changed nothing; disabling audits itself.
  if (changed.length > 0 || !togglesDisabled) await audit(deps, 'user.updated', actor, { tenantId: user.tenantId, userId, detail: { fields: changed } })
  if (togglesDisabled) user = await setUserDisabled(deps, userId, changes.disabled!, actor)
  return userView(deps, user)
}

/**
 * Deletes the user and erases their personal data: address, names, password hash, sessions
 * with their IPs and user agents, OTPs, setup tokens, outbox mail to them. Audit rows stay,
 * reduced to the user id, so an investigation still sees that something happened.
 */
export async function deleteUser(deps: Pick<Deps, 'store' | 'clock'>, userId: string, actor: Actor = CLI_ACTOR): Promise<{ userId: string }> {
  const user = await getUser(deps, userId, actor)
  if (!(await deps.store.users.erase(user))) notFoundUser(userId)
  await audit(deps, 'user.deleted', actor, { tenantId: user.tenantId, userId })
  return { userId }
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
  await deps.store.users.replacePassword({ userId, passwordHash, now, notice: passwordChangedNotice(tenant, user, now, actor.language), reason: 'password-set-by-admin' })
  deps.mailQueued.notify()
  await audit(deps, 'password.set_by_admin', actor, { tenantId: tenant.id, userId })
  return { ...user, passwordHash, updatedAt: now }
}

const notFoundUser = (userId: string): never => {
  throw notFoundById('User', userId)
}

/** The user, if the actor may see it: another tenant's user is as unknown as a missing one. */
export async function getUser(deps: Pick<Deps, 'store'>, userId: string, actor?: Actor): Promise<User> {
  const user = await deps.store.users.get(userId)
  if (!user || (actor && !actorSees(actor, user.tenantId))) return notFoundUser(userId)
  return user
}

export async function setUserDisabled(deps: Pick<Deps, 'store' | 'clock'>, userId: string, disabled: boolean, actor: Actor = CLI_ACTOR): Promise<User> {
  await getUser(deps, userId, actor)
  const now = deps.clock.now()
  // Disabling ends the user's sessions now, not when their refresh tokens would have, and
  // spends every OTP and setup token mailed before it.
  const user = await deps.store.users.setDisabledAt(userId, disabled ? now : null, now)
  if (!user) throw notFoundById('User', userId)
  await audit(deps, disabled ? 'user.disabled' : 'user.enabled', actor, { tenantId: user.tenantId, userId })
  return user
}
