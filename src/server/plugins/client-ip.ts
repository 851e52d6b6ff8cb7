// Who is calling: the client IP and user agent, as the Actor core records and limits by.
// The IP is the socket's peer. X-Forwarded-For is believed only when that peer is a trusted
// proxy (AUTHD_TRUSTED_PROXIES); then the hops are walked from the nearest, skipping trusted
// proxies, and the first untrusted address is the client. Anything else in the header is
// client-controlled and ignored.
import { Elysia } from 'elysia'
import ipaddr from 'ipaddr.js'
import type { Config } from '../../config'
import type { Actor } from '../../core/audit'

/** The socket peer of each request, recorded by serve.ts (Bun passes it beside the request). */
export const peerAddresses = new WeakMap<Request, string>()

type Ranges = Config['trustedProxies']

function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  try {
    // process() turns IPv4-mapped IPv6 (::ffff:10.0.0.1) back into IPv4.
    return ipaddr.process(address.trim())
  } catch {
    return null
  }
}

const isTrusted = (ip: ipaddr.IPv4 | ipaddr.IPv6, ranges: Ranges) =>
  ranges.some(([range, bits]) => ip.kind() === range.kind() && ip.match(range as never, bits))

export function resolveClientIp(peer: string | undefined, forwardedFor: string | null, trusted: Ranges): string {
  const peerIp = peer === undefined ? null : parse(peer)
  if (!peerIp) return 'unknown'
  if (!forwardedFor || !isTrusted(peerIp, trusted)) return peerIp.toString()
  const hops = forwardedFor.split(',')
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parse(hops[i]!)
    // A hop that is not an address was written by the client: stop at the last trusted one.
    if (!hop) break
    if (!isTrusted(hop, trusted)) return hop.toString()
  }
  return peerIp.toString()
}

export const clientActor = (trusted: Ranges) =>
  new Elysia({ name: 'client-actor' }).derive({ as: 'global' }, ({ request }): { actor: Actor } => ({
    actor: {
      ip: resolveClientIp(peerAddresses.get(request), request.headers.get('x-forwarded-for'), trusted),
      userAgent: request.headers.get('user-agent'),
    },
  }))
