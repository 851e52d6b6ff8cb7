// Opening the sockets authd serves on. What stops one from opening (a port in use, a TLS key
// that is not the certificate's) is a setting to fix, not a crash: a ConfigError naming the
// setting, which the CLI prints as one line and exit 2. A listener that cannot start ends the
// process; serving on without it (no metrics, say) would hide the fault.
import { createPrivateKey, X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { ConfigError, type Config } from '../config'

const REASONS: Record<string, string> = { EADDRINUSE: 'the address is in use', EACCES: 'permission denied', EADDRNOTAVAIL: 'no such address on this machine' }

/** Runs `start` (a Bun.serve); a failure becomes one line naming where and which settings. */
export function listenOrRefuse<T>(where: { host: string; port: number }, settings: string, start: () => T): T {
  try {
    return start()
  } catch (error) {
    const code = (error as { code?: string }).code ?? ''
    const host = where.host.includes(':') ? `[${where.host}]` : where.host
    throw new ConfigError(`cannot listen on ${host}:${where.port} (${settings}): ${REASONS[code] ?? (error as Error).message}`)
  }
}

function readPem(setting: string, file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw new ConfigError(`${setting}: cannot read ${file} (${(error as { code?: string }).code ?? (error as Error).message})`)
  }
}

/** The certificate and key, checked to be a pair: a key of another certificate names AUTHD_TLS_KEY. */
export function readTlsPair(tls: NonNullable<Config['tls']>): { cert: string; key: string; expiresAt: Date } {
  const cert = readPem('AUTHD_TLS_CERT', tls.certFile)
  const key = readPem('AUTHD_TLS_KEY', tls.keyFile)
  let certificate: X509Certificate
  try {
    certificate = new X509Certificate(cert)
  } catch {
    throw new ConfigError(`AUTHD_TLS_CERT: ${tls.certFile} is not a PEM certificate`)
  }
  let privateKey: ReturnType<typeof createPrivateKey>
  try {
    privateKey = createPrivateKey(key)
  } catch {
    throw new ConfigError(`AUTHD_TLS_KEY: ${tls.keyFile} is not a PEM private key (or it is encrypted)`)
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError(`AUTHD_TLS_KEY: ${tls.keyFile} is not the private key of the certificate in AUTHD_TLS_CERT (${tls.certFile})`)
  }
  return { cert, key, expiresAt: new Date(certificate.validTo) }
}
