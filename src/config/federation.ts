// Where sign-in through upstream identity providers may reach (core/federation/upstream-fetch.ts).
import type ipaddr from 'ipaddr.js'
import { parseProxies, type Read } from './parse'

export interface FederationSettings {
  /** Private, loopback and link-local addresses an upstream provider may have: all of them, or these ranges (none by default). */
  allowPrivate: 'all' | Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>
}

export function readFederationSettings(read: Read): FederationSettings {
  return {
    allowPrivate: read('AUTHD_PROVIDERS_ALLOW_PRIVATE', [], (name, raw) => (raw === '1' || raw === 'true' ? 'all' : parseProxies(name, raw))),
  }
}
