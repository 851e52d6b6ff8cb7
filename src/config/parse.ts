// How a setting's text becomes a value: each parser names the setting in the one line it
// stops start-up with.
import ipaddr from 'ipaddr.js'
import { ConfigError } from './error'
import type { Setting } from './settings'

export { ConfigError }

/** Reads one setting: its fallback when unset or empty, else what `parse` makes of it. */
export type Read = <T>(name: Setting, fallback: T, parse: (name: string, raw: string) => T) => T

export const reader =
  (env: Record<string, string | undefined>): Read =>
  (name, fallback, parse) => {
    const raw = env[name]
    return raw === undefined || raw === '' ? fallback : parse(name, raw)
  }

export const int = (min: number, max: number) => (name: string, raw: string) => parseInteger(name, raw, min, max)
export const str = (_: string, raw: string) => raw

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 }

/** "900", "900s", "15m", "72h", "30d" -> seconds. */
export function parseDuration(name: string, raw: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(raw.trim())
  const seconds = match ? Number(match[1]) * UNITS[match[2] || 's']! : NaN
  if (!Number.isSafeInteger(seconds) || seconds <= 0) {
    throw new ConfigError(`${name} must be a duration such as 900, 15m, 72h or 30d (got "${raw}")`)
  }
  return seconds
}

export function parseInteger(name: string, raw: string, min: number, max: number): number {
  const value = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`)
  }
  return value
}

export function parseOrigins(name: string, raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((origin) => {
      try {
        const url = new URL(origin)
        if (url.origin === 'null' || url.origin !== origin.replace(/\/$/, '')) throw new Error()
        return url.origin
      } catch {
        throw new ConfigError(`${name} must list origins such as https://app.example.com (got "${origin}")`)
      }
    })
}

/** "127.0.0.1:9464", "[::1]:9464" or ":9464" (loopback) -> host and port. */
export function parseListenAddress(name: string, raw: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]*)):(\d{1,5})$/.exec(raw.trim())
  const port = match ? Number(match[3]) : NaN
  if (!match || port > 65535) throw new ConfigError(`${name} must be HOST:PORT such as 127.0.0.1:9464 (got "${raw}")`)
  return { host: match[1] ?? (match[2] || '127.0.0.1'), port }
}

export function parseSwitch(name: string, raw: string): boolean {
  if (raw === '1' || raw === 'true') return true
  if (raw === '0' || raw === 'false') return false
  throw new ConfigError(`${name} must be 1 or 0 (got "${raw}")`)
}

export function parseProxies(name: string, raw: string): Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      try {
        if (entry.includes('/')) return ipaddr.parseCIDR(entry)
        const address = ipaddr.parse(entry)
        return [address, address.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number]
      } catch {
        throw new ConfigError(`${name} must list IP addresses or CIDRs such as 10.0.0.0/8 (got "${entry}")`)
      }
    })
}
