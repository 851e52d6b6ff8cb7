// Once at start: the tenants whose pages offer no passkeys because their RP ID is an IP
// address (browsers refuse one: every ceremony could only fail, so the pages hide the buttons),
// with what to do about it, as `authd doctor` reports it. Users see no passkey buttons and
// no message: the operator is the one who can change it.
import type { Config } from '../config'
import { passkeysPossible, relyingPartyOf } from '../core/tenants/relying-party'
import type { Store } from '../core/store'
import type { Logger } from '../log'

const NAMED = 10

export async function warnOfPasskeysOff(store: Pick<Store, 'tenants'>, config: Config, logger: Logger): Promise<void> {
  const off = (await store.tenants.list()).filter((tenant) => tenant.disabledAt === null && !passkeysPossible(config, tenant))
  if (off.length === 0) return
  logger.log('warn', 'passkeys are off: the RP ID is an IP address, which browsers refuse; the pages offer no passkeys', {
    rpIds: [...new Set(off.map((tenant) => relyingPartyOf(config, tenant).rpId))],
    tenants: off.slice(0, NAMED).map((tenant) => tenant.name),
    ...(off.length > NAMED && { moreTenants: off.length - NAMED }),
    fix: 'set AUTHD_PUBLIC_URL to the host name authd is reached at, or authd tenants update ID --passkey-rp-id <host> --passkey-origins <https://origin,…>; authd doctor checks it',
  })
}
