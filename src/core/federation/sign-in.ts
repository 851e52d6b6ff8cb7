// A sign-in through an upstream provider (product spec §25), from "Continue with {name}" to a
// session: the flow (its state held by the browser's cookie and by a row that the callback
// spends once), the upstream's answer checked by openid-client (upstream.ts), the account it
// belongs to (linking.ts), and then what a password's sign-in would do next: the second
// factor, or the session. The pages draw each outcome (server/pages/federation.ts).
import { randomPKCECodeVerifier } from 'openid-client'
import { audit, auditEvent, maskEmail, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { notFound } from '../errors'
import { issueDeviceCookie } from '../guards/device-cookies'
import { issueMfaChallenge, type MfaChallengeAnswer } from '../mfa/challenge'
import { hasConfirmedTotp } from '../mfa/factor'
import { prepareUser } from '../accounts/users'
import { normaliseEmail } from '../names'
import { randomToken, safeEqual, seal, sha256, unseal } from '../secrets'
import { startSession, type LoginResult } from '../sessions/sessions'
import type { Caller } from '../sessions/signed-in-user'
import { requireRecentAuth } from '../sessions/recent-auth'
import type { Tenant, User } from '../types'
import { MAX_GROUPS_PER_USER } from '../groups/groups'
import { ipSubject, spendBudget } from '../guards/limits'
import { resolveAccount, upstreamMfaTrusted } from './linking'
import { providerSecretOf, redirectUriOf } from './providers'
import { FLOW_CONTEXT, FLOW_TTL_MS, type FederationFlow, type Identity, type IdentityProvider, type UpstreamProfile } from './types'
import { upstreamsOf } from './upstream'
import { UpstreamFailure, type UpstreamFailureKind } from './upstream-failure'

type FederationDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'keyRing' | 'serverKeys' | 'hasher' | 'limitRules' | 'refusals'>

/**
 * Why a sign-in through a provider ends on an error page:
 *   expired          no flow for this browser and answer: gone after 10 minutes, spent (a replayed callback), or another browser's
 *   no-email         the upstream shared no address, so no account can be found or made
 *   creation-closed  no account of that address, and the provider (or the tenant) lets nobody in without one
 *   unverified-email no account of that address, and the upstream does not vouch for it: none is made
 *   user-disabled    the account is disabled
 *   identity-taken   linking from the account page: the upstream account is linked to another user
 *   not-signed-in    linking from the account page: the browser is no longer signed in as the user who started it
 */
export type FederationFailure = UpstreamFailureKind | 'expired' | 'no-email' | 'unverified-email' | 'creation-closed' | 'user-disabled' | 'identity-taken' | 'not-signed-in'

export type FederationOutcome =
  | { kind: 'signed-in'; session: LoginResult; returnTo: string | null }
  | { kind: 'second-factor'; challenge: MfaChallengeAnswer; returnTo: string | null }
  /** The address is that of an account that must be signed in to once (§25 rule 2): the flow waits. */
  | { kind: 'prove'; flowId: string; email: string; providerName: string; returnTo: string | null }
  | { kind: 'linked'; providerName: string }
  | { kind: 'failed'; failure: FederationFailure; providerName: string | null; upstreamError: string | null }

const failed = (failure: FederationFailure, provider: Pick<IdentityProvider, 'name'> | null, upstreamError: string | null = null): FederationOutcome => ({
  kind: 'failed',
  failure,
  providerName: provider?.name ?? null,
  upstreamError,
})

/** The tenant's provider, or a 404 (another tenant's is none of this one's). */
export async function providerOfTenant(deps: Pick<Deps, 'store'>, tenant: Tenant, providerId: string): Promise<IdentityProvider> {
  const provider = /^[0-9a-f-]{36}$/.test(providerId) ? await deps.store.providers.get(providerId) : null
  if (!provider || provider.tenantId !== tenant.id) throw notFound()
  return provider
}

/**
 * "Continue with {name}", or "Link" on the account page (`link`: the signed-in user, who proved
 * who they are within the step-up window, §18: linking adds a way into the account).
 * @returns the state for the browser's cookie, and where to send the browser
 */
export async function startUpstreamSignIn(
  deps: FederationDeps,
  input: { tenant: Tenant; providerId: string; returnTo: string | null; link?: Caller; reauthenticate?: boolean },
  actor: Actor,
): Promise<{ state: string; location: string }> {
  const provider = await providerOfTenant(deps, input.tenant, input.providerId)
  // Anyone may start one, and each start stores a flow (and may ask the upstream for its discovery).
  await spendBudget(deps, deps.limitRules.federationStartIp, ipSubject(actor.ip), { type: 'federation.limited', actor, tenantId: input.tenant.id })
  if (input.link) requireRecentAuth(deps, input.link)
  const now = deps.clock.now()
  const state = randomToken(32)
  const nonce = randomToken(16)
  const codeVerifier = randomPKCECodeVerifier()
  const fresh = input.reauthenticate === true && !input.link
  const location = await upstreamsOf(deps).authorizationUrl(provider, providerSecretOf(deps, provider), redirectUriOf(deps.config, provider), { state, nonce, codeVerifier, fresh })
  await deps.store.federationFlows.insert({
    id: Bun.randomUUIDv7(),
    stateHash: sha256(state),
    tenantId: input.tenant.id,
    providerId: provider.id,
    intent: input.link ? 'link' : fresh ? 'reauthenticate' : 'sign-in',
    userId: input.link?.user.id ?? null,
    codeVerifierSealed: seal(deps.serverKeys.sealing, FLOW_CONTEXT, codeVerifier),
    nonce,
    returnTo: input.returnTo,
    stage: 'started',
    pendingSealed: null,
    createdAt: now,
    expiresAt: now + FLOW_TTL_MS,
  })
  return { state, location }
}

/** The flow this browser's cookie and the upstream's answer both name, if it is live for this tenant and provider. */
async function flowOf(deps: Pick<Deps, 'store' | 'clock'>, tenant: Tenant, cookieState: string | undefined, answerState: string | null): Promise<FederationFlow | 'mismatch' | 'expired'> {
  // The answer's state must be this browser's: an answer started in another browser (a login
  // CSRF: the attacker's code delivered to the victim) matches no cookie here.
  if (!cookieState || !answerState || cookieState.length > 128 || !safeEqual(cookieState, answerState)) return 'mismatch'
  const flow = await deps.store.federationFlows.findByState(sha256(cookieState))
  if (!flow || flow.tenantId !== tenant.id || flow.expiresAt <= deps.clock.now()) return 'expired'
  return flow
}

/** GET /t/{tenant}/login/{providerId}/callback: the upstream's answer, to its end. */
export async function finishUpstreamSignIn(
  deps: FederationDeps,
  input: { tenant: Tenant; providerId: string; cookieState: string | undefined; query: URLSearchParams; caller: Caller | null },
  actor: Actor,
): Promise<FederationOutcome> {
  const provider = await providerOfTenant(deps, input.tenant, input.providerId)
  const flow = await flowOf(deps, input.tenant, input.cookieState, input.query.get('state'))
  if (flow === 'mismatch') return refused(deps, actor, input.tenant, provider, 'mismatch')
  if (flow === 'expired' || flow.providerId !== provider.id || flow.stage !== 'started') return refused(deps, actor, input.tenant, provider, 'expired')
  let profile: UpstreamProfile
  try {
    const codeVerifier = unseal(deps.serverKeys.sealing, FLOW_CONTEXT, flow.codeVerifierSealed)
    profile = await upstreamsOf(deps).complete(provider, providerSecretOf(deps, provider), redirectUriOf(deps.config, provider), input.query, {
      state: input.cookieState!,
      nonce: flow.nonce,
      codeVerifier,
      fresh: flow.intent === 'reauthenticate',
    })
  } catch (error) {
    if (!(error instanceof UpstreamFailure)) throw error
    // (spent: the flow is over whatever the upstream said; a retry starts a new one)
    await deps.store.federationFlows.advance(flow.id, 'started', 'done', deps.clock.now())
    return refused(deps, actor, input.tenant, provider, error.kind, error.upstreamError)
  }
  if (flow.intent === 'link') return linkToSignedInUser(deps, input, flow, provider, profile, actor)

  const email = addressOf(profile)
  const identity = await deps.store.identities.find(provider.id, profile.subject)
  const localUser = identity === null && email !== null ? await deps.store.users.findByEmail(input.tenant.id, email) : null
  const resolution = resolveAccount({ identity, provider, tenantSignup: input.tenant.signup, profile: { email, emailVerified: profile.emailVerified }, localUser })
  const now = deps.clock.now()
  if (resolution.outcome === 'refuse') {
    await deps.store.federationFlows.advance(flow.id, 'started', 'done', now)
    return refused(deps, actor, input.tenant, provider, resolution.reason)
  }
  if (resolution.outcome === 'prove') {
    const pendingSealed = seal(deps.serverKeys.sealing, FLOW_CONTEXT, JSON.stringify(profile))
    if (!(await deps.store.federationFlows.advance(flow.id, 'started', 'awaiting-proof', now, { pendingSealed, userId: resolution.userId }))) return refused(deps, actor, input.tenant, provider, 'expired')
    return { kind: 'prove', flowId: flow.id, email: localUser!.email, providerName: provider.name, returnTo: flow.returnTo }
  }
  // One answer, one sign-in: a replayed callback loses here if it got this far.
  if (!(await deps.store.federationFlows.advance(flow.id, 'started', 'done', now))) return refused(deps, actor, input.tenant, provider, 'expired')

  let user: User | null
  if (resolution.outcome === 'create') {
    user = await createUserOfIdentity(deps, input.tenant, provider, profile, email!, actor)
    if (!user) return refused(deps, actor, input.tenant, provider, 'expired')
  } else {
    user = await deps.store.users.get(resolution.userId)
    if (!user || user.tenantId !== input.tenant.id) return refused(deps, actor, input.tenant, provider, 'expired')
    if (resolution.outcome === 'link') {
      const linked = await deps.store.identities.insert(newIdentity(input.tenant, provider, profile, user, now), linkedEvent(deps, actor, user, provider, 'verified-email'))
      if (!linked) return refused(deps, actor, input.tenant, provider, 'expired')
    } else {
      await deps.store.identities.recordUse(identity!.id, profile.email, profile.emailVerified, now)
    }
  }
  return signInThroughProvider(deps, input.tenant, provider, profile, user, flow.returnTo, actor)
}

/** Where a password's sign-in would go next: the disabled refused, the second factor asked, else the session. */
async function signInThroughProvider(deps: FederationDeps, tenant: Tenant, provider: IdentityProvider, profile: UpstreamProfile, user: User, returnTo: string | null, actor: Actor): Promise<FederationOutcome> {
  if (user.disabledAt !== null) return refused(deps, actor, tenant, provider, 'user-disabled', null, user)
  await syncMappedGroups(deps, provider, user, profile)
  const trusted = upstreamMfaTrusted(provider, profile)
  if (!trusted && (await hasSecondFactor(deps, user))) {
    return { kind: 'second-factor', challenge: await issueMfaChallenge(deps, user, tenant, false, actor, provider.id), returnTo }
  }
  const detail = { email: maskEmail(user.email), rememberMe: false, providerId: provider.id, ...(trusted && { upstreamMfa: true }) }
  const session = await startSession(deps, user, tenant, false, actor, trusted ? ['fed', 'mfa'] : ['fed'], {
    limitResets: [],
    limitRefunds: [],
    audit: auditEvent(deps, 'login.succeeded', actor, { tenantId: tenant.id, userId: user.id, detail }),
    providerId: provider.id,
    // (the upstream may have signed the person in without asking, from a sign-in of its own hours ago)
    ...(profile.authTime !== null && { authAt: profile.authTime }),
  })
  return { kind: 'signed-in', session: { ...session, deviceCookie: issueDeviceCookie(deps, tenant.id, user.email) }, returnTo }
}

async function hasSecondFactor(deps: Pick<Deps, 'store'>, user: User): Promise<boolean> {
  return (await hasConfirmedTotp(deps, user.id)) || (await deps.store.passkeys.listByUser(user.id)).length > 0
}

/** From the account page: the upstream account becomes a way into the signed-in user's account. */
async function linkToSignedInUser(
  deps: FederationDeps,
  input: { tenant: Tenant; caller: Caller | null },
  flow: FederationFlow,
  provider: IdentityProvider,
  profile: UpstreamProfile,
  actor: Actor,
): Promise<FederationOutcome> {
  const now = deps.clock.now()
  if (!(await deps.store.federationFlows.advance(flow.id, 'started', 'done', now))) return refused(deps, actor, input.tenant, provider, 'expired')
  // The browser that comes back must still be the one signed in as the user who asked.
  if (!input.caller || input.caller.user.id !== flow.userId) return refused(deps, actor, input.tenant, provider, 'not-signed-in')
  const user = input.caller.user
  const identity = await deps.store.identities.find(provider.id, profile.subject)
  if (identity) {
    if (identity.userId !== user.id) return refused(deps, actor, input.tenant, provider, 'identity-taken', null, user)
    return { kind: 'linked', providerName: provider.name }
  }
  if (!(await deps.store.identities.insert(newIdentity(input.tenant, provider, profile, user, now), linkedEvent(deps, actor, user, provider, 'account-page')))) {
    return refused(deps, actor, input.tenant, provider, 'identity-taken', null, user)
  }
  return { kind: 'linked', providerName: provider.name }
}

/**
 * After a sign-in to the local account (any of its ways, its second factor included) made on
 * the page that asked for it, in the browser whose flow waits for that proof (§25 rule 2): the
 * upstream identity is linked. The flow must be this browser's (its cookie), named by the
 * sign-in's form, and for this very user; a sign-in as anyone else links nothing.
 * @returns the provider's name when an identity was linked
 */
export async function linkAfterProof(
  deps: Pick<Deps, 'store' | 'clock' | 'serverKeys'>,
  input: { tenant: Tenant; cookieState: string | undefined; flowId: string; userId: string },
  actor: Actor,
): Promise<string | null> {
  if (!input.cookieState || input.cookieState.length > 128) return null
  const flow = await deps.store.federationFlows.findByState(sha256(input.cookieState))
  // The sign-in must come from the page that said what it links (its forms name the flow): a
  // flow someone left in a shared browser is not linked by the next person's ordinary sign-in.
  if (!flow || flow.id !== input.flowId || flow.tenantId !== input.tenant.id || flow.stage !== 'awaiting-proof' || flow.userId !== input.userId || flow.pendingSealed === null) return null
  const now = deps.clock.now()
  if (!(await deps.store.federationFlows.advance(flow.id, 'awaiting-proof', 'done', now))) return null
  const provider = await deps.store.providers.get(flow.providerId)
  const user = await deps.store.users.get(input.userId)
  if (!provider || !user) return null
  const profile = JSON.parse(unseal(deps.serverKeys.sealing, FLOW_CONTEXT, flow.pendingSealed)) as UpstreamProfile
  const linked = await deps.store.identities.insert(newIdentity(input.tenant, provider, profile, user, now), linkedEvent(deps, actor, user, provider, 'proved-account'))
  return linked ? provider.name : null
}

/** The account an unknown identity creates (§25 rule 3): the upstream's names and the address it vouched for. */
async function createUserOfIdentity(deps: FederationDeps, tenant: Tenant, provider: IdentityProvider, profile: UpstreamProfile, email: string, actor: Actor): Promise<User | null> {
  const { firstName, lastName } = namesOf(profile, email)
  const { user } = await prepareUser(deps, tenant, { email, firstName, lastName, emailVerified: profile.emailVerified })
  const identity = newIdentity(tenant, provider, profile, user, user.createdAt)
  const created = auditEvent(deps, 'user.created', actor, { tenantId: tenant.id, userId: user.id, detail: { type: user.type, withPassword: false, providerId: provider.id, ...(profile.emailVerified && { emailVerified: true }) } })
  const outcome = await deps.store.identities.insertWithUser(user, identity, [created, linkedEvent(deps, actor, user, provider, 'created')])
  // (a second answer for the same person, or a sign-up of the address, won the race)
  return outcome === 'created' ? user : null
}

/** Names a user must have (1-100 visible characters): the upstream's, else the address's local part. */
function namesOf(profile: UpstreamProfile, email: string): { firstName: string; lastName: string } {
  const clip = (value: string | null) => (value === null ? null : [...value].slice(0, 100).join('').trim() || null)
  const visible = (value: string | null) => (value !== null && /\p{L}|\p{N}/u.test(value) && !/[\p{Cc}\p{Cf}\n]/u.test(value) ? value : null)
  const first = visible(clip(profile.firstName)) ?? clip(email.slice(0, email.indexOf('@')))!
  return { firstName: first, lastName: visible(clip(profile.lastName)) ?? '-' }
}

function newIdentity(tenant: Tenant, provider: IdentityProvider, profile: UpstreamProfile, user: User, now: number): Identity {
  return { id: Bun.randomUUIDv7(), tenantId: tenant.id, providerId: provider.id, subject: profile.subject, userId: user.id, email: profile.email, emailVerified: profile.emailVerified, createdAt: now, lastUsedAt: now }
}

const linkedEvent = (deps: Pick<Deps, 'clock'>, actor: Actor, user: User, provider: IdentityProvider, how: 'verified-email' | 'proved-account' | 'account-page' | 'created') =>
  auditEvent(deps, 'identity.linked', actor, { tenantId: user.tenantId, userId: user.id, detail: { providerId: provider.id, provider: provider.name, how } })

/** The upstream's address as authd keeps addresses, or null (none, or none a user could have). */
function addressOf(profile: UpstreamProfile): string | null {
  if (profile.email === null) return null
  try {
    return normaliseEmail(profile.email)
  } catch {
    return null
  }
}

/**
 * `--groups-claim` and `--map-group`: at each sign-in, each mapped local group holds the user
 * exactly when the upstream's claim names a group mapped to it. Groups nobody mapped are left
 * alone; a claim the upstream did not send counts as no groups (a mapped group is not kept on
 * the strength of an earlier sign-in).
 */
async function syncMappedGroups(deps: Pick<Deps, 'store' | 'clock'>, provider: IdentityProvider, user: User, profile: UpstreamProfile) {
  if (provider.groupsClaim === null || provider.groupMap === null) return
  const map = JSON.parse(provider.groupMap) as Record<string, string>
  const local = [...new Set(Object.values(map))]
  if (local.length === 0) return
  const upstream = new Set(profile.groups ?? [])
  const wanted = new Set(Object.entries(map).filter(([name]) => upstream.has(name)).map(([, localName]) => localName))
  const held = new Set((await deps.store.groups.groupsOfUser(user.id)).map((group) => group.id))
  for (const group of await deps.store.groups.findByNames(user.tenantId, local)) {
    if (wanted.has(group.name) && !held.has(group.id)) await deps.store.groups.addMembers(group, [user.id], deps.clock.now(), MAX_GROUPS_PER_USER)
    if (!wanted.has(group.name) && held.has(group.id)) await deps.store.groups.removeMembers(group.id, [user.id])
  }
}

async function refused(
  deps: FederationDeps,
  actor: Actor,
  tenant: Tenant,
  provider: IdentityProvider,
  failure: FederationFailure,
  upstreamError: string | null = null,
  user?: User,
): Promise<FederationOutcome> {
  await audit(deps, 'identity.refused', actor, { tenantId: tenant.id, userId: user?.id, detail: { providerId: provider.id, reason: failure, ...(upstreamError && { upstreamError: upstreamError.slice(0, 200) }) } })
  return failed(failure, provider, upstreamError)
}
