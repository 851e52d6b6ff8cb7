// A setup token and the invitation mail that carries it: made when a user is created without a
// password (users.ts) or invited again (setup-password.ts).
import type { Deps } from '../deps'
import { newOutboxMessage } from '../mail/outbox'
import { invitationMail } from '../mail/templates'
import { randomToken, sha256 } from '../secrets'
import { tenantPagesUrl } from '../tenants/tenant-pages'
import { tenantTitle } from '../tenants/title'
import type { SetupToken, Tenant, User } from '../types'

export function newSetupToken(deps: Pick<Deps, 'config'>, userId: string, now: number): { token: string; record: SetupToken } {
  const token = randomToken(32)
  const record = { id: Bun.randomUUIDv7(), userId, tokenHash: sha256(token), createdAt: now, expiresAt: now + deps.config.setupTokenTtlSec * 1000, usedAt: null }
  return { token, record }
}

/** What inviting answers (the admin API and `authd users invite`). */
export const toInvitationView = (invited: { user: User; setupToken: string; expiresAt: number }) => ({
  userId: invited.user.id,
  setupToken: invited.setupToken,
  expiresAt: new Date(invited.expiresAt).toISOString(),
})

/** The mail that hands a user their setup token. Its link leads to AUTHD_INVITE_URL when the
 *  operator has a page of their own, else to the tenant's invitation page at authd. */
export function invitationMessage(deps: Pick<Deps, 'config'>, tenant: Tenant, user: User, token: string, record: SetupToken, now: number, language?: string) {
  return newOutboxMessage({
    tenantId: tenant.id,
    kind: 'invitation',
    recipient: user.email,
    content: invitationMail({ tenantName: tenantTitle(tenant), firstName: user.firstName, token, expiresAt: record.expiresAt, inviteUrl: deps.config.inviteUrl ?? `${tenantPagesUrl(deps.config, tenant)}/invite`, language }),
    now,
    secretExpiresAt: record.expiresAt,
  })
}

