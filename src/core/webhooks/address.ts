// Where a webhook may go. An endpoint URL must be https (http only to a loopback host, with
// AUTHD_WEBHOOKS_ALLOW_INSECURE=1). At each delivery the host is resolved and every address
// checked: private, loopback, link-local (169.254.169.254, the cloud metadata service) and
// other non-public ranges are refused unless AUTHD_WEBHOOKS_ALLOW_PRIVATE allows them, and the
// request then goes to the address that was checked, so a name that resolves differently a
// moment later (DNS rebinding) cannot swap it. A refusal tells the tenant only that the name
// has no public address, never which, nor whether the name exists at all: a tenant that learnt
// what its endpoint's name resolves to, or which names resolve, could map the operator's
// internal DNS through authd. The address, or the resolver's error, goes to the server's log
// alone (RefusedAddress.address and .detail).
import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'
import type { WebhookSettings } from '../../config'
import { badRequest } from '../errors'

/** Resolves a host name to its addresses (injectable, so tests can resolve names as an attacker would). */
export type Resolver = (hostname: string) => Promise<string[]>

export const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address)

const MAX_URL_LENGTH = 2048

const bareHost = (hostname: string) => (hostname.startsWith('[') ? hostname.slice(1, -1) : hostname)

const isLoopbackName = (hostname: string) => {
  const host = bareHost(hostname).toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  return ipaddr.isValid(host) && normalised(host).range() === 'loopback'
}

const normalised = (address: string) => {
  const parsed = ipaddr.parse(address)
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed
}

/** Checks an endpoint URL as given (at creation and update); returns it normalised. */
export function checkEndpointUrl(raw: string, settings: WebhookSettings): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw badRequest('url must be an absolute https URL such as https://hooks.example.com/authd')
  }
  // (measured as stored: percent-encoding can make a URL several times longer than typed)
  if (raw.length > MAX_URL_LENGTH || url.href.length > MAX_URL_LENGTH) throw badRequest(`url must be at most ${MAX_URL_LENGTH} characters`)
  if (url.username || url.password) throw badRequest('url must not carry a user name or password (authd signs each delivery instead)')
  if (url.hash) throw badRequest('url must not have a #fragment (it is never sent)')
  if (url.port === '0') throw badRequest('url must not name port 0')
  if (url.protocol === 'https:') return url.href
  if (url.protocol === 'http:' && settings.allowInsecure && isLoopbackName(url.hostname)) return url.href
  if (url.protocol === 'http:') throw badRequest('url must be https (http only to a loopback address, with AUTHD_WEBHOOKS_ALLOW_INSECURE=1)')
  throw badRequest('url must be an absolute https URL such as https://hooks.example.com/authd')
}

/** Whether a delivery may go to this address under the settings. */
export function addressAllowed(address: string, settings: WebhookSettings, insecureLoopback: boolean): boolean {
  const parsed = normalised(address)
  const range = parsed.range()
  // An http URL is allowed only to loopback: its address must be loopback, nothing else.
  if (insecureLoopback) return range === 'loopback'
  if (range === 'unicast') return true
  if (settings.allowPrivate === 'all') return true
  return settings.allowPrivate.some(([network, bits]) => parsed.kind() === network.kind() && parsed.match(network, bits))
}

/** Where one attempt goes: the checked addresses, and the name the TLS certificate must carry. */
export interface Target {
  hostname: string
  /** The URL with each checked address in place of the name, in the resolver's order (tried
   *  in turn while a connection fails: `localhost` may be ::1 first, and listen on 127.0.0.1 only). */
  urls: string[]
}

export class RefusedAddress extends Error {
  /**
   * @param message what the tenant may read (stored with the delivery): no address in it
   * @param address the address refused and its range, for the operator's log only
   * @param detail why, for the operator's log only (the resolver's error, the range)
   */
  constructor(
    message: string,
    readonly address?: { address: string; range: string },
    readonly detail?: string,
  ) {
    super(message)
  }
}

/** One message whether the name is internal, has no address or does not exist. */
const noPublicAddress = (hostname: string, detail: string, address?: { address: string; range: string }) =>
  new RefusedAddress(`${hostname} does not resolve to a public address`, address, detail)

/** Resolves the endpoint's host and checks every address it has; throws RefusedAddress if any is not allowed. */
export async function resolveTarget(rawUrl: string, settings: WebhookSettings, resolve: Resolver): Promise<Target> {
  const url = new URL(rawUrl)
  const insecure = url.protocol === 'http:'
  if (insecure && !(settings.allowInsecure && isLoopbackName(url.hostname))) throw new RefusedAddress('http is allowed only to loopback, with AUTHD_WEBHOOKS_ALLOW_INSECURE=1')
  const hostname = bareHost(url.hostname)
  let addresses: string[]
  try {
    addresses = ipaddr.isValid(hostname) ? [hostname] : await resolve(hostname)
  } catch (error) {
    throw noPublicAddress(hostname, `cannot resolve: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500))
  }
  if (addresses.length === 0) throw noPublicAddress(hostname, 'the name has no address')
  const refused = addresses.find((address) => !addressAllowed(address, settings, insecure))
  if (refused !== undefined) {
    const address = { address: normalised(refused).toString(), range: normalised(refused).range() }
    if (insecure) throw new RefusedAddress(`${hostname} resolves to an address that is not loopback (http is allowed only to loopback)`, address)
    throw noPublicAddress(hostname, 'a non-public address (AUTHD_WEBHOOKS_ALLOW_PRIVATE allows such addresses)', address)
  }
  const urls = [...new Set(addresses.map((raw) => normalised(raw).toString()))].map((address) => {
    const target = new URL(url)
    target.hostname = address.includes(':') ? `[${address}]` : address
    return target.href
  })
  return { hostname, urls }
}
