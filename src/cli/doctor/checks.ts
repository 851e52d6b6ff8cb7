// `authd doctor`: checks an installation and says what to fix. Each check is independent,
// so one broken piece does not hide the others.
import { Database } from 'bun:sqlite'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import { describeUnknownSetting, unknownSettings, type Config } from '../../config'
import { openEngine, redactUrl } from '../../db/engine'
import { migrationStatus } from '../../db/sqlite/migrate'
import { openPostgres } from '../../db/pg/client'
import { pgMigrationStatus } from '../../db/pg/migrate'
import { cookieDomainOf, forwardAuthDomainsOf } from '../../core/forward-auth/domains'
import { isIpAddress, relyingPartyOf, rpIdFitsOrigin } from '../../core/tenants/relying-party'
import type { Tenant } from '../../core/types'
import type { Store } from '../../core/store'
import { systemClock } from '../../core/clock'
import { Upstreams } from '../../core/federation/upstream'
import { UpstreamFailure } from '../../core/federation/upstream-failure'
import { readTlsPair } from '../../server/listen'
import { sizeChecks } from './size'

import type { Finding } from './finding'

const KEY_ROTATION_DAYS = 90

function databaseChecks(config: Config): Finding[] {
  if (!existsSync(config.databasePath)) {
    return [{ check: 'database', status: 'fail', detail: `no database at ${config.databasePath}`, fix: 'run `authd migrate` (or `authd init`) with this --data-dir' }]
  }
  const findings: Finding[] = []
  const db = new Database(config.databasePath, { readonly: true })
  try {
    const integrity = (db.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check
    findings.push(
      integrity === 'ok'
        ? { check: 'database', status: 'ok', detail: `${config.databasePath}: integrity ok` }
        : { check: 'database', status: 'fail', detail: `integrity check: ${integrity}`, fix: 'restore the latest backup (docs/operations.md: Backups)' },
    )
    const mode = (db.query('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode
    if (mode !== 'wal') findings.push({ check: 'journal mode', status: 'warn', detail: `journal_mode is ${mode}`, fix: 'start `authd serve` once: it sets WAL' })
    const { pending } = migrationStatus(db)
    findings.push(
      pending.length === 0
        ? { check: 'migrations', status: 'ok', detail: 'the schema is current' }
        : { check: 'migrations', status: 'fail', detail: `pending: ${pending.join(', ')}`, fix: 'run `authd migrate` (authd serve also applies them)' },
    )
  } catch (error) {
    findings.push({ check: 'database', status: 'fail', detail: (error as Error).message, fix: 'is this an authd database? restore the latest backup' })
  } finally {
    db.close()
  }
  return findings
}

function permissionChecks(config: Config): Finding[] {
  const mailDir = join(config.dataDir, 'mail')
  let mailFiles: string[]
  try {
    mailFiles = existsSync(mailDir) ? readdirSync(mailDir).map((name) => join(mailDir, name)) : []
  } catch (error) {
    // Made by another user (authd init run as root on the service's data directory): the
    // server cannot write mail there either.
    return [{ check: 'mail directory permissions', status: 'fail', detail: `cannot read ${mailDir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, fix: `chown -R <the user authd runs as> ${config.dataDir}` }]
  }
  const walFiles = [`${config.databasePath}-wal`, `${config.databasePath}-shm`]
  const checks: Array<[string, string[]]> = [
    ['data directory', [config.dataDir]],
    ...(config.postgresUrl ? [] : ([['database file', [config.databasePath, ...walFiles]]] as Array<[string, string[]]>)),
    // .eml files hold OTPs and setup tokens when no SMTP is configured.
    ['mail directory', [mailDir, ...mailFiles]],
  ]
  const findings: Finding[] = []
  for (const [what, paths] of checks) {
    const present = paths.filter((path) => existsSync(path))
    if (present.length === 0) continue
    const open = present.map((path) => ({ path, mode: statSync(path).mode & 0o777 })).filter(({ mode }) => (mode & 0o077) !== 0)
    findings.push(
      open.length === 0
        ? { check: `${what} permissions`, status: 'ok', detail: `${present[0]} is owner-only` }
        : {
            check: `${what} permissions`,
            status: 'warn',
            detail: `${open.map(({ path, mode }) => `${path} is ${mode.toString(8)}`).join(', ')}: readable by other users of this machine (it holds secrets)`,
            fix: `chmod go-rwx ${open.map(({ path }) => path).join(' ')}`,
          },
    )
  }
  return findings
}

function exposureChecks(config: Config): Finding[] {
  if (config.tls) {
    // The pair authd serve would load: a key of another certificate stops it at start-up.
    try {
      const { expiresAt } = readTlsPair(config.tls)
      return [{ check: 'transport', status: 'ok', detail: `HTTPS with ${config.tls.certFile} (valid until ${expiresAt.toISOString()}); public URL ${config.publicUrl}` }]
    } catch (error) {
      return [{ check: 'transport', status: 'fail', detail: (error as Error).message, fix: 'set AUTHD_TLS_CERT and AUTHD_TLS_KEY to a certificate and its own private key (PEM)' }]
    }
  }
  const loopback = ['127.0.0.1', 'localhost', '::1'].includes(config.host)
  if (config.publicUrl.startsWith('https://') || loopback) return [{ check: 'transport', status: 'ok', detail: `public URL ${config.publicUrl}` }]
  return [{
    check: 'transport',
    status: 'warn',
    detail: `listening on ${config.host} with public URL ${config.publicUrl}: browsers store Secure cookies only over HTTPS`,
    fix: 'set AUTHD_TLS_CERT and AUTHD_TLS_KEY, or put a TLS proxy in front and set AUTHD_PUBLIC_URL=https://…',
  }]
}

function metricsCheck(config: Config): Finding {
  const address = config.metricsAddr
  if (!address) {
    return { check: 'metrics', status: 'ok', detail: 'off (the public port never serves /metrics)', fix: 'to scrape with Prometheus, set AUTHD_METRICS_ADDR=127.0.0.1:9464 and scrape http://127.0.0.1:9464/metrics' }
  }
  const where = `http://${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}/metrics`
  if (['0.0.0.0', '::', ''].includes(address.host)) {
    return { check: 'metrics', status: 'warn', detail: `${where} listens on every interface: its counters can tell which addresses are registered`, fix: 'bind AUTHD_METRICS_ADDR to loopback or a private interface that only Prometheus reaches' }
  }
  return { check: 'metrics', status: 'ok', detail: `Prometheus scrapes ${where}` }
}

async function smtpCheck(config: Config): Promise<Finding> {
  if (!config.smtpUrl) return { check: 'smtp', status: 'warn', detail: `no AUTHD_SMTP_URL: mail is written to ${config.dataDir}/mail`, fix: 'set AUTHD_SMTP_URL and AUTHD_MAIL_FROM to send mail' }
  const transporter = nodemailer.createTransport(config.smtpUrl, { connectionTimeout: 5000, greetingTimeout: 5000, socketTimeout: 5000 } as never)
  try {
    await transporter.verify()
    return { check: 'smtp', status: 'ok', detail: 'the SMTP server accepted a connection' }
  } catch (error) {
    return { check: 'smtp', status: 'fail', detail: `cannot reach the SMTP server: ${(error as Error).message}`, fix: 'check AUTHD_SMTP_URL (host, port, credentials) and the firewall' }
  } finally {
    transporter.close()
  }
}

/** PostgreSQL: the connection, the server's version, TLS, migrations and the same data checks. */
/** What the data says, on either engine (through the Store): signing-key age, untrusted local
 *  proxies seen by the server, failed mail. Run only once the database checks passed. */
async function dataChecks(config: Config): Promise<Finding[]> {
  const engine = openEngine(config)
  const store = engine.createStore()
  try {
    const findings: Finding[] = []
    const active = (await store.signingKeys.list()).findLast((k) => k.retiredAt === null && k.revokedAt === null)
    const ageDays = active ? (Date.now() - active.createdAt) / 86_400_000 : null
    findings.push(
      ageDays === null
        ? { check: 'signing key', status: 'warn', detail: 'no signing key yet', fix: '`authd serve` creates one at start, or run `authd keys rotate`' }
        : ageDays > KEY_ROTATION_DAYS
          ? { check: 'signing key', status: 'warn', detail: `the active key is ${Math.floor(ageDays)} days old`, fix: 'run `authd keys rotate`' }
          : { check: 'signing key', status: 'ok', detail: `the active key is ${Math.floor(ageDays)} days old` },
    )
    if (config.trustedProxies.length === 0) {
      // Recorded by the server the first time a loopback peer sends X-Forwarded-For.
      const [seen] = await store.audit.query({ type: 'config.untrusted_proxy', since: Date.now() - 7 * 86_400_000, limit: 1 })
      if (seen) {
        findings.push({
          check: 'client IPs',
          status: 'fail',
          detail: `since ${new Date(seen.at).toISOString()}, requests from 127.0.0.1 carry X-Forwarded-For but no proxy is trusted: all clients share one IP, so one abuser's limits block everyone`,
          fix: 'set AUTHD_TRUSTED_PROXIES=127.0.0.1 (the address of your reverse proxy) and restart authd',
        })
      }
    }
    const tenants = await store.tenants.list()
    findings.push(...passkeyChecks(config, tenants))
    findings.push(...forwardAuthChecks(config, tenants))
    findings.push(...(await providerChecks(config, store, tenants)))
    const { failed } = await store.outbox.countByStatus()
    findings.push(
      failed === 0
        ? { check: 'mail outbox', status: 'ok', detail: 'no failed messages' }
        : { check: 'mail outbox', status: 'warn', detail: `${failed} message(s) failed for good`, fix: 'fix SMTP, then run `authd mail retry`' },
    )
    return findings
  } finally {
    engine.close()
  }
}

/** Each tenant's passkey relying party as a browser would judge it: an IP address is no RP ID,
 *  and every allowed origin must be on the RP ID or a subdomain of it (a registrable suffix). */
export function passkeyChecks(config: Config, tenants: Tenant[]): Finding[] {
  const findings: Finding[] = []
  for (const tenant of tenants.filter((t) => t.disabledAt === null)) {
    const rp = relyingPartyOf(config, tenant)
    const fix = `authd tenants update ${tenant.id} --passkey-rp-id <host> --passkey-origins <https://origin,…> (or set AUTHD_PUBLIC_URL to the host name authd is reached at)`
    if (isIpAddress(rp.rpId)) {
      findings.push({ check: 'passkeys', status: 'warn', detail: `tenant ${tenant.name}: the RP ID ${rp.rpId} is an IP address, which browsers refuse: its users cannot use passkeys (its pages offer none)`, fix })
      continue
    }
    const misfits = rp.origins.filter((origin) => !rpIdFitsOrigin(rp.rpId, origin))
    if (misfits.length > 0) findings.push({ check: 'passkeys', status: 'fail', detail: `tenant ${tenant.name}: the RP ID ${rp.rpId} is not a registrable suffix of ${misfits.join(', ')}: browsers refuse passkeys there`, fix })
  }
  if (findings.length === 0 && tenants.length > 0) findings.push({ check: 'passkeys', status: 'ok', detail: "every tenant's RP ID fits its allowed origins" })
  return findings
}

/**
 * Forward authentication (spec §24) as a browser and the proxy would meet it: the session
 * cookie a sign-in sets must be for a domain that holds authd's own host (else none is set and
 * every check asks to sign in again), and the proxy's X-Forwarded-* or X-Original-* headers are
 * believed only from AUTHD_TRUSTED_PROXIES (else every check is refused with a 403).
 */
export function forwardAuthChecks(config: Pick<Config, 'publicUrl' | 'trustedProxies'>, tenants: Tenant[]): Finding[] {
  const guarding = tenants.filter((t) => t.disabledAt === null).map((tenant) => ({ tenant, domains: forwardAuthDomainsOf(tenant) })).filter(({ domains }) => domains.length > 0)
  if (guarding.length === 0) return []
  const findings: Finding[] = []
  const host = new URL(config.publicUrl).hostname
  for (const { tenant, domains } of guarding) {
    if (cookieDomainOf(domains, config.publicUrl) !== null) continue
    findings.push({
      check: 'forward auth',
      status: 'fail',
      detail: `tenant ${tenant.name}: authd's public URL ${config.publicUrl} is on none of its forward-auth domains (${domains.join(', ')}): a sign-in sets no session cookie for them, so every check of their applications answers as if nobody had signed in`,
      fix: `set AUTHD_PUBLIC_URL to an address on one of them, such as https://auth.${domains[0]}, or give the domain that holds ${host}: authd tenants update ${tenant.id} --forward-auth-domain <domain>`,
    })
  }
  if (config.trustedProxies.length === 0) {
    findings.push({
      check: 'forward auth',
      status: 'fail',
      detail: `${guarding.map(({ tenant }) => `tenant ${tenant.name}`).join(', ')} ${guarding.length === 1 ? 'has' : 'have'} forward-auth domains but AUTHD_TRUSTED_PROXIES is empty: authd believes no proxy's account of the original request, so it refuses every check (403)`,
      fix: 'set AUTHD_TRUSTED_PROXIES to the address of the reverse proxy that asks (such as 127.0.0.1) and restart authd',
    })
  }
  if (findings.length === 0) {
    findings.push({ check: 'forward auth', status: 'ok', detail: guarding.map(({ tenant, domains }) => `tenant ${tenant.name}: session cookie for ${cookieDomainOf(domains, config.publicUrl)}`).join('; ') })
  }
  return findings
}

/**
 * Each upstream identity provider of an enabled tenant as its next sign-in would meet it: its
 * discovery document (or GitHub's endpoints) read through the same guarded requests, so an
 * issuer mistyped, unreachable, or at an address AUTHD_PROVIDERS_ALLOW_PRIVATE does not allow
 * shows here rather than on a login page.
 */
export async function providerChecks(config: Config, store: Store, tenants: Tenant[]): Promise<Finding[]> {
  const findings: Finding[] = []
  const upstreams = new Upstreams(systemClock, config.federation)
  let providers = 0
  for (const tenant of tenants.filter((t) => t.disabledAt === null)) {
    for (const provider of await store.providers.list(tenant.id)) {
      providers++
      try {
        // (discovery needs no secret; the exchange, which does, is not made here)
        await upstreams.configurationOf(provider, 'doctor')
      } catch (error) {
        if (!(error instanceof UpstreamFailure)) throw error
        findings.push({
          check: 'providers',
          status: 'fail',
          detail: `tenant ${tenant.name}: ${provider.name} (${provider.issuer ?? 'github.com'}) cannot be read: ${error.upstreamError ?? error.kind}; its "Continue with" fails`,
          fix: `check the issuer (authd providers show ${provider.id}) and that authd reaches it; an upstream inside your network needs its range in AUTHD_PROVIDERS_ALLOW_PRIVATE`,
        })
      }
    }
  }
  if (providers > 0 && findings.length === 0) findings.push({ check: 'providers', status: 'ok', detail: `${providers} upstream provider(s) answer` })
  return findings
}

async function postgresChecks(config: Config): Promise<Finding[]> {
  const url = config.postgresUrl!
  const db = openPostgres(url, { max: 1 })
  const findings: Finding[] = []
  try {
    const [row] = (await db.$client`SELECT current_setting('server_version_num')::int AS version, coalesce((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false) AS ssl`) as Array<{ version: number; ssl: boolean }>
    const version = row!.version
    findings.push(
      version >= 130000
        ? { check: 'database', status: 'ok', detail: `${redactUrl(url)}: PostgreSQL ${Math.floor(version / 10000)}` }
        : { check: 'database', status: 'warn', detail: `PostgreSQL ${Math.floor(version / 10000)} is older than 13, which authd is tested with`, fix: 'upgrade PostgreSQL' },
    )
    const local = ['localhost', '127.0.0.1', '[::1]', ''].includes(new URL(url).hostname)
    findings.push(
      row!.ssl || local
        ? { check: 'database TLS', status: 'ok', detail: row!.ssl ? 'the connection is encrypted' : 'a local connection, without TLS' }
        : { check: 'database TLS', status: 'warn', detail: 'the connection to a remote database is not encrypted', fix: 'add ?sslmode=verify-full (or require) to AUTHD_DATABASE_URL' },
    )
    const { pending } = await pgMigrationStatus(db.$client)
    findings.push(
      pending.length === 0
        ? { check: 'migrations', status: 'ok', detail: 'the schema is current' }
        : { check: 'migrations', status: 'fail', detail: `pending: ${pending.join(', ')}`, fix: 'run `authd migrate` (authd serve also applies them)' },
    )
  } catch (error) {
    findings.push({ check: 'database', status: 'fail', detail: `cannot use ${redactUrl(url)}: ${(error as Error).message}`, fix: 'check AUTHD_DATABASE_URL (host, port, database, credentials, sslmode) and that PostgreSQL is running' })
  } finally {
    await db.$client.close()
  }
  return findings
}

/** Every value parsed (or doctor would not have started); names authd does not know are warned about. */
function configurationCheck(env: Record<string, string | undefined>): Finding {
  const unknown = unknownSettings(env)
  if (unknown.length === 0) return { check: 'configuration', status: 'ok', detail: 'every AUTHD_* setting is valid' }
  return {
    check: 'configuration',
    status: 'warn',
    detail: unknown.map(describeUnknownSetting).join('; '),
    fix: unknown.map(({ name, suggestion }) => (suggestion ? `rename ${name} to ${suggestion}` : `remove ${name}`)).join(', ') + ' (docs/configuration.md)',
  }
}

/** The earlier refresh-token format is for the time of a rolling upgrade: left on, every refresh writes a random key. */
function refreshTokenFormatCheck(config: Config): Finding[] {
  if (config.refreshTokenFormat !== 'hash') return []
  return [
    {
      check: 'refresh tokens',
      status: 'warn',
      detail: 'AUTHD_REFRESH_TOKEN_FORMAT=hash: new sessions get the earlier refresh-token format, whose stored keys are not ordered by time, which makes refreshes slower with millions of tokens',
      fix: 'unset it once no older authd (43-character refresh tokens) serves this database (docs/operations.md: Several instances)',
    },
  ]
}

export async function runDoctor(config: Config, env: Record<string, string | undefined> = {}): Promise<Finding[]> {
  const database = config.postgresUrl ? await postgresChecks(config) : databaseChecks(config)
  const usable = database.every((f) => f.status !== 'fail')
  return [
    configurationCheck(env),
    ...refreshTokenFormatCheck(config),
    ...database,
    ...(usable ? await dataChecks(config) : []),
    ...(usable ? await sizeChecks(config) : []),
    ...permissionChecks(config),
    ...exposureChecks(config),
    metricsCheck(config),
    await smtpCheck(config),
  ]
}
