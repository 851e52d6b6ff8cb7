// Where webhooks may be delivered.
import type ipaddr from 'ipaddr.js'
import { parseProxies, parseSwitch, type Read } from './parse'

/** Where webhooks may go (core/webhooks/address.ts). */
export interface WebhookSettings {
  /** `http://` to a loopback address is allowed (a receiver on the same machine). */
  allowInsecure: boolean
  /** Private, loopback and link-local addresses allowed: all of them, or these ranges. */
  allowPrivate: 'all' | Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>
}

export function readWebhookSettings(read: Read): WebhookSettings {
  return {
    allowInsecure: read('AUTHD_WEBHOOKS_ALLOW_INSECURE', false, parseSwitch),
    allowPrivate: read('AUTHD_WEBHOOKS_ALLOW_PRIVATE', [], (name, raw) => (raw === '1' || raw === 'true' ? 'all' : parseProxies(name, raw))),
  }
}
