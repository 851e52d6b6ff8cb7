// Every request authd makes to an upstream provider (discovery, JWKS, token, userinfo, GitHub's
// API) goes through here. A tenant's admin key chooses a provider's issuer, and the discovery
// document chooses the other endpoints, so each is a URL someone outside the operator wrote:
// as for webhooks (core/webhooks/address.ts), the host is resolved and every address checked
// (private, loopback and link-local ranges only where AUTHD_PROVIDERS_ALLOW_PRIVATE allows
// them), and the request goes to the address checked, so a name that resolves differently a
// moment later cannot swap it. An answer is read up to a size no provider's honest answer
// nears, so an upstream cannot fill authd's memory.
import { checkServerIdentity } from 'node:tls'
import ipaddr from 'ipaddr.js'
import type { FederationSettings } from '../../config'
import { addressAllowed, systemResolver, type Resolver } from '../webhooks/address'
import { UpstreamFailure } from './upstream-failure'

/** The most of an upstream's answer authd reads (a discovery document is a few KiB, a JWKS less). */
export const MAX_UPSTREAM_ANSWER_BYTES = 1024 * 1024

const bareHost = (hostname: string) => (hostname.startsWith('[') ? hostname.slice(1, -1) : hostname)

/** A fetch for the upstreams: the address checked and pinned, the answer's size bounded. */
export function upstreamFetch(settings: FederationSettings, resolve: Resolver = systemResolver) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input))
    const hostname = bareHost(url.hostname)
    let addresses: string[]
    try {
      addresses = ipaddr.isValid(hostname) ? [hostname] : await resolve(hostname)
    } catch {
      throw new UpstreamFailure('unreachable', `${hostname} does not resolve`)
    }
    const allowed = addresses.filter((address) => addressAllowed(address, { allowInsecure: false, allowPrivate: settings.allowPrivate }, false))
    // (the person is told the upstream cannot be reached; which address was refused goes to the log alone)
    if (allowed.length === 0 || allowed.length !== addresses.length) throw new UpstreamFailure('unreachable', `${hostname} does not resolve to an address authd may reach (AUTHD_PROVIDERS_ALLOW_PRIVATE)`)
    const pinned = new URL(url)
    const address = ipaddr.parse(allowed[0]!)
    pinned.hostname = address.kind() === 'ipv6' ? `[${address.toString()}]` : address.toString()
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
    headers.set('host', url.host)
    const response = await fetch(pinned, {
      ...init,
      headers,
      redirect: 'manual',
      // The connection goes to the checked address; the certificate must still name the host.
      tls: { serverName: hostname, checkServerIdentity: (_: string, cert: Parameters<typeof checkServerIdentity>[1]) => checkServerIdentity(hostname, cert) },
    } as RequestInit)
    return new Response(await boundedBody(response), { status: response.status, statusText: response.statusText, headers: response.headers })
  }
}

async function boundedBody(response: Response): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? 0)
  if (declared > MAX_UPSTREAM_ANSWER_BYTES) {
    await response.body?.cancel()
    throw new UpstreamFailure('failed', `an answer of ${declared} bytes (at most ${MAX_UPSTREAM_ANSWER_BYTES} are read)`)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = response.body?.getReader()
  if (!reader) return new Uint8Array()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_UPSTREAM_ANSWER_BYTES) {
      await reader.cancel()
      throw new UpstreamFailure('failed', `an answer of more than ${MAX_UPSTREAM_ANSWER_BYTES} bytes`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}
