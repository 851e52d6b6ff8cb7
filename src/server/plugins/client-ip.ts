// Who is calling: the client IP and user agent, as the Actor core records and limits by.
// The IP is the socket's peer. X-Forwarded-For is believed only when that peer is a trusted
// proxy (AUTHD_TRUSTED_PROXIES); then the hops are walked from the nearest, skipping trusted
// proxies, and the first untrusted address is the client. Anything else in the header is
// client-controlled and ignored.
import { mailLanguageFor } from '../../core/mail/strings'
import { Elysia } from 'elysia'
import ipaddr from 'ipaddr.js'
import type { Config } from '../../config'
import type { Actor } from '../../core/audit/audit'

/** The socket peer of a request handled without a socket (tests, app.handle). */
export const peerAddresses = new WeakMap<Request, string>()

/** The Bun server that received a request, kept on the request itself (a WeakMap entry and a
 *  closure per request cost a health probe a twentieth of its time): the peer is asked for
 *  only when an actor is needed, while the request is live. */
const RECEIVED_BY = Symbol('authd.receivedBy')
type PeerSource = { requestIP(request: Request): { address: string } | null }

export function recordPeer(request: Request, received: Request, server: PeerSource) {
  if (request === received) (request as Request & { [RECEIVED_BY]?: PeerSource })[RECEIVED_BY] = server
  else peerAddresses.set(request, server.requestIP(received)?.address ?? '')
}

/** The peer once asked for, kept on the request: each ask is a system call (getpeername), and a
 *  forward-auth check asks three times (its request id, its trust, its actor). */
const PEER = Symbol('authd.peer')

const peerOf = (request: Request): string | undefined => {
  const held = request as Request & { [RECEIVED_BY]?: PeerSource; [PEER]?: string }
  if (held[PEER] !== undefined) return held[PEER]
  const server = held[RECEIVED_BY]
  const peer = server ? (server.requestIP(request)?.address ?? '') : peerAddresses.get(request)
  if (peer !== undefined) held[PEER] = peer
  return peer
}

type Ranges = Config['trustedProxies']

/** An address as a proxy may write it in X-Forwarded-For: bare, `1.2.3.4:1111`, or
 *  `[2001:db8::1]:443`; null for anything else. */
function parse(hop: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const text = hop.trim()
  const address = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text)?.[1] ?? /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text)?.[1] ?? text
  try {
    // process() turns IPv4-mapped IPv6 (::ffff:10.0.0.1) back into IPv4.
    return ipaddr.process(address)
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

/**
 * Whether a request came straight from a trusted proxy (its socket peer is in
 * AUTHD_TRUSTED_PROXIES), so that headers only a proxy should set may be believed. With no
 * proxy configured the answer is no, without looking at the request at all.
 */
export function fromTrustedProxy(trusted: Ranges): (request: Request) => boolean {
  if (trusted.length === 0) return () => false
  const isTrustedPeer = perPeer((peer) => {
    const ip = parse(peer)
    return ip !== null && isTrusted(ip, trusted)
  })
  return (request) => {
    const peer = peerOf(request)
    return peer !== undefined && isTrustedPeer(peer)
  }
}

/** `compute` remembered per peer address: parsing an address costs more than the rest of a
 *  check, and the same peers come back (a bounded number of them are kept). */
function perPeer<T>(compute: (peer: string) => T): (peer: string) => T {
  const byPeer = new Map<string, T>()
  return (peer) => {
    let value = byPeer.get(peer)
    if (value === undefined) {
      value = compute(peer)
      if (byPeer.size >= 10_000) byPeer.clear()
      byPeer.set(peer, value)
    }
    return value
  }
}

/**
 * X-Forwarded-For from a loopback peer while no proxy is trusted: a reverse proxy on this
 * machine (install.sh's default host, 127.0.0.1, implies one) whose clients all look like
 * 127.0.0.1, so they share every per-IP limit. Reported once per process.
 */
export function isUntrustedLocalProxy(peer: string | undefined, forwardedFor: string | null, trusted: Ranges): boolean {
  if (forwardedFor === null || trusted.length > 0 || peer === undefined) return false
  const peerIp = parse(peer)
  return peerIp !== null && peerIp.range() === 'loopback'
}

export const clientActor = (trusted: Ranges, onUntrustedLocalProxy: () => void = () => {}) => {
  let reported = false
  // A peer without X-Forwarded-For always resolves the same way.
  const ipOfPeer = perPeer((peer) => resolveClientIp(peer, null, trusted))
  const resolve = (peer: string | undefined, forwardedFor: string | null) =>
    forwardedFor !== null || peer === undefined ? resolveClientIp(peer, forwardedFor, trusted) : ipOfPeer(peer)
  // (app.ts registers the health probes before this: they act on nothing)
  return new Elysia({ name: 'client-actor' }).derive({ as: 'global' }, ({ request }): { actor: Actor } => {
    const peer = peerOf(request)
    const forwardedFor = request.headers.get('x-forwarded-for')
    if (!reported && isUntrustedLocalProxy(peer, forwardedFor, trusted)) {
      reported = true
      onUntrustedLocalProxy()
    }
    return { actor: { ip: resolve(peer, forwardedFor), userAgent: request.headers.get('user-agent'), language: mailLanguageFor(request.headers.get('accept-language')) } }
  })
}
