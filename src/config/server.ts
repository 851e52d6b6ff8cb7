// Where authd listens and who reaches it: the address, the public URL and issuer, TLS, the
// metrics listener, the proxies whose X-Forwarded-For is believed, CORS, request limits.
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type ipaddr from 'ipaddr.js'
import { ConfigError, int, parseListenAddress, parseOrigins, parseProxies, str, type Read } from './parse'
import type { Setting } from './settings'

export interface ServerSettings {
  port: number
  host: string
  dataDir: string
  /** Where clients reach authd; its origin is trusted by the Origin check. */
  publicUrl: string
  issuer: string
  /** How long an answer that asks the client to come back later (429, 503) is held before it leaves. */
  refusalHoldMs: number
  corsOrigins: string[]
  maxBodyBytes: number
  /** PEM files: with both set, authd serves HTTPS itself. */
  tls?: { certFile: string; keyFile: string }
  /** Where Prometheus scrapes /metrics: a listener of its own, never the public port. Unset: off. */
  metricsAddr?: { host: string; port: number }
  /** Peers whose X-Forwarded-For is believed: [address, prefix length] pairs. */
  trustedProxies: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>
}

/** Where authd is reached when AUTHD_PUBLIC_URL is not set: the address it listens on. */
export function defaultPublicUrl(host: string, port: number, https = false): string {
  return `${https ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`
}

function readTls(env: Partial<Record<Setting, string>>): ServerSettings['tls'] {
  const certFile = env.AUTHD_TLS_CERT || undefined
  const keyFile = env.AUTHD_TLS_KEY || undefined
  if (!certFile && !keyFile) return undefined
  if (!certFile || !keyFile) throw new ConfigError('AUTHD_TLS_CERT and AUTHD_TLS_KEY must be set together')
  for (const [name, file] of [['AUTHD_TLS_CERT', certFile], ['AUTHD_TLS_KEY', keyFile]] as const) {
    if (!existsSync(file)) throw new ConfigError(`${name}: no such file ${file}`)
  }
  return { certFile: resolve(certFile), keyFile: resolve(keyFile) }
}

/** The server's settings; `overrides` are the command line's (--port, --host, --data-dir). */
export function readServerSettings(read: Read, env: Partial<Record<Setting, string>>, overrides: Partial<Pick<ServerSettings, 'port' | 'host' | 'dataDir'>>): ServerSettings {
  const port = overrides.port ?? read('AUTHD_PORT', 3000, int(0, 65535))
  const host = overrides.host ?? read('AUTHD_HOST', '127.0.0.1', str)
  const dataDir = resolve(overrides.dataDir ?? read('AUTHD_DATA_DIR', './data', str))
  const tls = readTls(env)
  const publicUrl = read('AUTHD_PUBLIC_URL', defaultPublicUrl(host, port, tls !== undefined), (name, raw) => {
    try {
      return new URL(raw).origin
    } catch {
      throw new ConfigError(`${name} must be a URL such as https://auth.example.com (got "${raw}")`)
    }
  })
  return {
    port,
    host,
    dataDir,
    publicUrl,
    issuer: read('AUTHD_ISSUER', publicUrl, str),
    refusalHoldMs: read('AUTHD_REFUSAL_HOLD_MS', 250, int(0, 10000)),
    corsOrigins: read('AUTHD_CORS_ORIGINS', [], parseOrigins),
    maxBodyBytes: 16 * 1024,
    tls,
    metricsAddr: read('AUTHD_METRICS_ADDR', undefined, parseListenAddress),
    trustedProxies: read('AUTHD_TRUSTED_PROXIES', [], parseProxies),
  }
}
