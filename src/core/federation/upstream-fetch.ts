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
    // Compressed answers are unpacked here, within the same bound, never by fetch: a few KiB
    // of brotli can unpack to gigabytes after the read that measured them was cut short.
    headers.set('accept-encoding', 'identity')
    const response = await fetch(pinned, {
      ...init,
      headers,
      redirect: 'manual',
      decompress: false,
      // The connection goes to the checked address; the certificate must still name the host.
      tls: { serverName: hostname, checkServerIdentity: (_: string, cert: Parameters<typeof checkServerIdentity>[1]) => checkServerIdentity(hostname, cert) },
    } as RequestInit)
    const body = await boundedBody(response)
    const unpacked = new Headers(response.headers)
    unpacked.delete('content-encoding')
    unpacked.delete('content-length')
    return new Response(body, { status: response.status, statusText: response.statusText, headers: unpacked })
  }
}

/** The answer's bytes, unpacked (gzip, deflate), at most MAX_UPSTREAM_ANSWER_BYTES of them. */
async function boundedBody(response: Response): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? 0)
  const encoding = (response.headers.get('content-encoding') ?? 'identity').trim().toLowerCase()
  if (declared > MAX_UPSTREAM_ANSWER_BYTES || !['identity', 'gzip', 'x-gzip', 'deflate'].includes(encoding)) {
    await response.body?.cancel()
    throw new UpstreamFailure('failed', declared > MAX_UPSTREAM_ANSWER_BYTES ? `an answer of ${declared} bytes (at most ${MAX_UPSTREAM_ANSWER_BYTES} are read)` : `an answer encoded as ${encoding.slice(0, 40)}`)
  }
  if (!response.body) return new Uint8Array()
  const stream = encoding === 'identity' ? response.body : response.body.pipeThrough(new DecompressionStream(encoding === 'deflate' ? 'deflate' : 'gzip') as unknown as TransformStream<Uint8Array, Uint8Array>)
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = stream.getReader()
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
