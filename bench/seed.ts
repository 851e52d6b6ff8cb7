// Fills a database, on either engine, with the shape of a long-running installation: users
// over many tenants (one large one), refresh families with months of spent tokens, audit rows,
// delivered and dead mail, TOTP factors with recovery codes and passkeys for a share of the
// users. The rows are what authd writes: its ids (UUIDv7 at the row's time), its hashes
// (SHA-256 of a token, HMAC under the database's own server key for recovery codes), its sealed
// TOTP secrets, one real argon2id hash of the bench password shared by every user (hashing a
// million passwords would take days, and the rows would be no different in shape).
//
//   npm run bench -- seed --users 1000000 --data-dir /tmp/authd-big
//   npm run bench -- seed --users 1000000 --tokens 20000000 --database-url postgres://…
import { randomBytes } from 'node:crypto'
import { maskEmail } from '../src/core/audit/audit'
import { recoveryCodeHash, sealSecret } from '../src/core/mfa/factor'
import { newSecret as newClientSecret } from '../src/core/oidc/clients'
import { newRefreshToken, refreshTokenKey } from '../src/core/sessions/refresh-tokens'
import { hmacSha256, randomToken, sha256 } from '../src/core/secrets'
import { newSecret as newEndpointSecret, sealSecret as sealEndpointSecret } from '../src/core/webhooks/signing'
import type { Row, Sink } from './seed-sinks'

const DAY = 86_400_000
/** A UUIDv7 of the given time, as authd makes ids at the moment a row is written. */
const uuidAt = (ms: number) => Bun.randomUUIDv7(undefined, ms)

export interface SeedOptions {
  users: number
  /** Refresh-token rows in all (spent ones included); default 20 per user. */
  tokens?: number
  /** Tenants besides the large one; default one per 5,000 users, at least 1. */
  tenants?: number
  /** The share of the users in the large tenant. */
  largeTenantShare?: number
  /** The large tenant: an existing one (made with its API key by the CLI), or a new one. */
  largeTenantId?: string
  auditPerUser?: number
  mailPerUser?: number
  totpShare?: number
  passkeyShare?: number
  /** The share of sessions that are OpenID grants to a tenant's first-party client. */
  oidcGrantShare?: number
  /** How far back the history goes (refresh families, mail); the audit log goes back a year. */
  days?: number
  /** The password every seeded user has (hashed once). */
  password?: string
  argon2?: { memoryCost: number; timeCost: number }
  now?: number
}

export interface SeedCounts {
  [table: string]: number
}

/** Tables the generator fills in bulk: their secondary indexes are built after the load. */
const BULK_TABLES = ['users', 'refresh_families', 'refresh_tokens', 'audit_events', 'mail_outbox', 'mfa_totp', 'mfa_recovery_codes', 'passkeys', 'password_reset_requests', 'setup_tokens', 'limit_counters', 'signup_requests', 'oidc_consents', 'oidc_codes', 'webhook_events', 'webhook_deliveries', 'group_members']

export const COLUMNS = {
  tenants: ['id', 'name', 'created_at', 'audience', 'signup'],
  oidc_clients: ['id', 'tenant_id', 'name', 'secret_hash', 'secret_prefix', 'redirect_uris', 'post_logout_redirect_uris', 'first_party', 'created_at', 'updated_at'],
  webhook_endpoints: ['id', 'tenant_id', 'url', 'event_types', 'description', 'sealed_secret', 'created_at', 'updated_at'],
  groups: ['id', 'tenant_id', 'name', 'description', 'created_at', 'updated_at'],
  access_rules: ['id', 'tenant_id', 'position', 'domain', 'paths', 'methods', 'policy', 'groups', 'created_at'],
  users: ['id', 'tenant_id', 'email', 'first_name', 'last_name', 'type', 'password_hash', 'created_at', 'updated_at', 'disabled_at', 'session_epoch'],
  group_members: ['group_id', 'user_id', 'tenant_id', 'created_at'],
  refresh_families: ['id', 'user_id', 'tenant_id', 'remember_me', 'created_at', 'expires_at', 'revoked_at', 'revoked_reason', 'amr', 'auth_at', 'client_id', 'scope'],
  refresh_tokens: ['id', 'family_id', 'token_hash', 'created_at', 'expires_at', 'spent_at', 'access_kid', 'ip', 'user_agent'],
  audit_events: ['at', 'type', 'tenant_id', 'user_id', 'ip', 'user_agent', 'api_key_id', 'detail'],
  mail_outbox: ['id', 'tenant_id', 'kind', 'recipient', 'subject', 'text_body', 'html_body', 'status', 'attempts', 'next_attempt_at', 'lease_until', 'last_error', 'secret_expires_at', 'created_at', 'sent_at'],
  mfa_totp: ['user_id', 'sealed_secret', 'created_at', 'confirmed_at', 'last_used_step'],
  mfa_recovery_codes: ['id', 'user_id', 'code_hash', 'used_at'],
  passkeys: ['id', 'tenant_id', 'user_id', 'credential_id', 'public_key', 'counter', 'transports', 'device_type', 'backed_up', 'aaguid', 'name', 'created_at', 'last_used_at'],
  password_reset_requests: ['tenant_id', 'email_key', 'created_at', 'issued', 'attempts'],
  setup_tokens: ['id', 'user_id', 'token_hash', 'created_at', 'expires_at', 'used_at'],
  limit_counters: ['key', 'count', 'window_start', 'updated_at'],
  signup_requests: ['tenant_id', 'email_key', 'created_at', 'issued'],
  pending_signups: ['tenant_id', 'email_key', 'first_name', 'last_name', 'password_hash', 'code_hash', 'created_at', 'expires_at', 'attempts', 'spent_at'],
  idempotency_keys: ['tenant_id', 'key', 'request_hash', 'user_id', 'status_code', 'sealed_response', 'created_at'],
  oidc_consents: ['user_id', 'client_id', 'tenant_id', 'scope', 'created_at'],
  oidc_codes: ['id', 'code_hash', 'tenant_id', 'client_id', 'user_id', 'session_id', 'redirect_uri', 'code_challenge', 'issuer', 'nonce', 'scope', 'auth_at', 'amr', 'user_epoch', 'created_at', 'expires_at', 'spent_at', 'family_id'],
  webhook_events: ['id', 'tenant_id', 'user_id', 'type', 'data', 'created_at', 'fanned_out_at', 'deliveries'],
  webhook_deliveries: ['id', 'tenant_id', 'endpoint_id', 'event_id', 'status', 'attempts', 'next_attempt_at', 'give_up_at', 'last_attempt_at', 'last_status', 'last_error', 'last_response', 'created_at', 'delivered_at'],
} as const
type Table = keyof typeof COLUMNS

const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
]
const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Margaret', 'Dennis']
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson', 'Hamilton', 'Ritchie']

/** A small, fast, seeded generator: the same options make the same shape (not the same ids). */
function random(seed = 0x9e3779b9) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export type Progress = (done: number, total: number, rows: number) => void

/** A progress bar on stderr: redrawn in place on a terminal, a line per 10% otherwise. */
export function progressBar(label: string): Progress & { finish(): void } {
  const started = performance.now()
  let lastTenth = -1
  const draw = (done: number, total: number, rows: number) => {
    const share = total === 0 ? 1 : done / total
    const seconds = (performance.now() - started) / 1000
    const rate = rows / Math.max(seconds, 0.001)
    const eta = share > 0 ? (seconds / share) * (1 - share) : 0
    const width = 30
    const bar = '#'.repeat(Math.round(share * width)).padEnd(width, '.')
    const text = `${label} [${bar}] ${(share * 100).toFixed(0).padStart(3)}%  ${done.toLocaleString('en')}/${total.toLocaleString('en')}  ${rows.toLocaleString('en')} rows  ${Math.round(rate).toLocaleString('en')} rows/s  eta ${Math.round(eta)}s`
    if (process.stderr.isTTY) process.stderr.write(`\r${text}\x1b[K`)
    else if (Math.floor(share * 10) > lastTenth) {
      lastTenth = Math.floor(share * 10)
      process.stderr.write(`${text}\n`)
    }
  }
  return Object.assign(draw, { finish: () => process.stderr.isTTY && process.stderr.write('\n') })
}

/** Fills `sink`; returns the rows written per table and the large tenant's id. */
export async function seedDatabase(sink: Sink, options: SeedOptions, progress: Progress = () => {}): Promise<{ counts: SeedCounts; largeTenantId: string; seconds: number }> {
  const started = performance.now()
  const users = options.users
  const tokensPerUser = (options.tokens ?? users * 20) / Math.max(users, 1)
  const otherTenants = options.tenants ?? Math.max(1, Math.round(users / 5000))
  const largeShare = options.largeTenantShare ?? 0.5
  const auditPerUser = options.auditPerUser ?? 5
  const mailPerUser = options.mailPerUser ?? 1
  const totpShare = options.totpShare ?? 0.1
  const passkeyShare = options.passkeyShare ?? 0.05
  const oidcGrantShare = options.oidcGrantShare ?? 0.1
  const days = options.days ?? 120
  const now = options.now ?? Date.now()
  const rand = random()
  const pick = <T>(values: readonly T[]) => values[Math.floor(rand() * values.length)]!

  const hmacKey = await sink.serverSecret('hmac', () => randomToken(32))
  const sealingKey = await sink.serverSecret('sealing', () => randomToken(32))
  const passwordHash = await Bun.password.hash(options.password ?? 'correct horse battery staple', { algorithm: 'argon2id', ...(options.argon2 ?? { memoryCost: 19456, timeCost: 2 }) })
  const [signingKey] = await sink.query<{ kid: string }>('SELECT kid FROM signing_keys ORDER BY created_at DESC LIMIT 1')
  const accessKid = signingKey?.kid ?? null

  const counts: SeedCounts = {}
  const buffers = new Map<Table, Row[]>()
  let rowsWritten = 0
  const flush = async (table: Table) => {
    const rows = buffers.get(table)
    if (!rows || rows.length === 0) return
    buffers.set(table, [])
    await sink.insert(table, [...COLUMNS[table]], rows)
    counts[table] = (counts[table] ?? 0) + rows.length
    rowsWritten += rows.length
  }
  const add = async (table: Table, row: Row) => {
    let rows = buffers.get(table)
    if (!rows) buffers.set(table, (rows = []))
    rows.push(row)
    // Every table then, parents first (COLUMNS' order): a token's family is in before it.
    if (rows.length >= 5000) for (const name of Object.keys(COLUMNS) as Table[]) await flush(name)
  }

  // Tenants: the large one, then the others. The large one is named Bench: the scale bench
  // takes the tenant of that name in a database seeded earlier (bench/lib.ts startAuthd).
  let largeTenantId = options.largeTenantId
  if (!largeTenantId) {
    largeTenantId = uuidAt(now - 400 * DAY)
    await add('tenants', [largeTenantId, 'Bench', now - 400 * DAY, `authd:${largeTenantId}`, 'closed'])
  }
  const tenantIds: string[] = []
  for (let t = 0; t < otherTenants; t++) {
    const id = uuidAt(now - 400 * DAY + t)
    tenantIds.push(id)
    await add('tenants', [id, `Tenant ${t + 1}`, now - 400 * DAY + t, `authd:${id}`, 'closed'])
  }
  await flush('tenants')

  // Each tenant's OpenID clients (a first-party one everywhere, a third-party one in every other
  // tenant) and webhook endpoints (in every fourth of the other tenants; none in the large one,
  // which is the scale bench's own tenant: its logins must not send deliveries from the seeded
  // server alone).
  const apps = new Map<string, { firstParty: string; thirdParty?: string; endpoint?: string }>()
  for (const [t, tenantId] of [largeTenantId, ...tenantIds].entries()) {
    const at = now - 300 * DAY
    const client = (name: string, firstParty: boolean) => {
      const id = uuidAt(at + t)
      const { secretHash, secretPrefix } = newClientSecret()
      return add('oidc_clients', [id, tenantId, name, secretHash, secretPrefix, JSON.stringify([`https://${name.toLowerCase()}.example.com/callback`]), '[]', firstParty, at, at]).then(() => id)
    }
    const entry: { firstParty: string; thirdParty?: string; endpoint?: string } = { firstParty: await client('Intranet', true) }
    if (t % 2 === 0) entry.thirdParty = await client('Planner', false)
    if (t > 0 && t % 4 === 1) {
      entry.endpoint = uuidAt(at + t)
      await add('webhook_endpoints', [entry.endpoint, tenantId, `https://hooks.t${t}.example.com/authd`, '*', 'CRM sync', sealEndpointSecret(sealingKey, entry.endpoint, newEndpointSecret()), at, at])
    }
    apps.set(tenantId, entry)
  }
  await flush('oidc_clients')
  await flush('webhook_endpoints')
  // Each tenant's groups (its roles: a dozen), of which a user is in none to three.
  const GROUP_NAMES = ['admins', 'staff', 'developers', 'support', 'finance', 'sales', 'ops', 'readers', 'editors', 'grafana-admins', 'git-admins', 'hr']
  const groupsOf = new Map<string, string[]>()
  for (const [t, tenantId] of [largeTenantId, ...tenantIds].entries()) {
    const at = now - 300 * DAY + t
    const ids = GROUP_NAMES.map((name, i) => uuidAt(at + i))
    for (const [i, id] of ids.entries()) await add('groups', [id, tenantId, GROUP_NAMES[i]!, null, at, at])
    groupsOf.set(tenantId, ids)
  }
  await flush('groups')
  // Each tenant's access rules of forward authentication (a homelab's few applications at its
  // proxy): a status page open to all, a health check, a dashboard for two groups, a git
  // server's admin pages behind a second factor, and every other host for any signed-in user.
  for (const [t, tenantId] of [largeTenantId, ...tenantIds].entries()) {
    const at = now - 200 * DAY + t
    const host = (name: string) => `${name}.t${t}.example.com`
    const rules: Array<[domain: string, paths: string[], methods: string[], policy: string, groups: string[]]> = [
      [host('status'), [], [], 'bypass', []],
      [host('grafana'), ['/api/health'], ['GET', 'HEAD'], 'bypass', []],
      [host('grafana'), [], [], 'one_factor', ['staff', 'grafana-admins']],
      [host('git'), ['/admin'], [], 'two_factor', ['git-admins']],
      [`*.t${t}.example.com`, [], [], 'one_factor', []],
    ]
    for (const [i, [domain, paths, methods, policy, groups]] of rules.entries()) {
      await add('access_rules', [uuidAt(at + i), tenantId, i + 1, domain, JSON.stringify(paths), JSON.stringify(methods), policy, JSON.stringify(groups), at + i])
    }
  }
  await flush('access_rules')
  // Webhook history, as retention leaves it: deliveries of the last 30 days (AUTHD_RETAIN_WEBHOOKS)
  // with their events, and a day of events fanned out to no endpoint.
  const addEvent = async (tenantId: string, userId: string, type: string, data: unknown, at: number) => {
    const endpoint = apps.get(tenantId)!.endpoint
    if (at < now - (endpoint ? 30 : 1) * DAY) return
    const eventId = `evt_${randomBytes(16).toString('hex')}`
    await add('webhook_events', [eventId, tenantId, userId, type, JSON.stringify(data), at, at + 500, endpoint ? 1 : 0])
    if (!endpoint) return
    const dead = rand() < 0.01
    await add('webhook_deliveries', [
      uuidAt(at + 500), tenantId, endpoint, eventId, dead ? 'dead' : 'succeeded', dead ? 12 : 1, dead ? at + 3 * DAY : at + 600, at + 500 + 3 * DAY,
      dead ? at + 3 * DAY : at + 600, dead ? 503 : 200, dead ? 'HTTP 503' : null, dead ? 'Service Unavailable' : '', at + 500, dead ? null : at + 600,
    ])
  }

  const rebuildIndexes = await sink.deferIndexes(BULK_TABLES)
  const auditSpan = 365 * DAY
  const auditTotal = Math.round(users * auditPerUser)
  let auditWritten = 0
  // Audit rows are numbered in time order, as a live log's are: row i of the year at its slot.
  const auditAt = () => now - auditSpan + Math.floor((auditWritten++ / Math.max(auditTotal, 1)) * auditSpan)

  for (let u = 0; u < users; u++) {
    const tenantId = rand() < largeShare ? largeTenantId : tenantIds[u % tenantIds.length]!
    const createdAt = now - Math.floor(rand() * 400 * DAY)
    const userId = uuidAt(createdAt)
    const email = `user${u}@t${tenantId.slice(-6)}.example.com`
    const hasTotp = rand() < totpShare
    await add('users', [userId, tenantId, email, pick(FIRST), pick(LAST), 'user', passwordHash, createdAt, createdAt, rand() < 0.01 ? now - DAY : null, hasTotp ? 1 : 0])

    // Sessions: about two families a user, each a chain of rotations (every token spent but the
    // last), started over the last `days` days. Families end by logout, by their absolute end
    // (90 days) or live on.
    let tokensLeft = Math.round(tokensPerUser * (0.5 + rand()))
    const families = Math.max(1, Math.min(tokensLeft, 1 + Math.floor(rand() * 3)))
    for (let f = 0; f < families; f++) {
      const chain = f === families - 1 ? tokensLeft : Math.max(1, Math.floor(tokensLeft / (families - f)))
      tokensLeft -= chain
      if (chain <= 0) continue
      const rememberMe = rand() < 0.6
      const familyCreated = Math.max(createdAt, now - Math.floor(rand() * days * DAY))
      const familyExpires = familyCreated + 90 * DAY
      // Logged out within the last 30 days (AUTHD_RETAIN_SESSIONS): an older logout's rows
      // would be retention's to delete, a backlog a live database does not have.
      const revokedAt = rand() < 0.3 ? now - Math.floor(rand() * Math.min(now - familyCreated, 30 * DAY)) : null
      const familyId = uuidAt(familyCreated)
      // An OpenID grant is a refresh family of the client's; its code was spent at its start.
      const clientId = rand() < oidcGrantShare ? apps.get(tenantId)!.firstParty : null
      const amr = hasTotp ? 'pwd,otp' : 'pwd'
      await add('refresh_families', [familyId, userId, tenantId, rememberMe, familyCreated, familyExpires, revokedAt, revokedAt === null ? null : 'logout', amr, familyCreated, clientId, clientId && 'openid profile email offline_access'])
      if (clientId && familyCreated > now - DAY) {
        await add('oidc_codes', [uuidAt(familyCreated - 1000), sha256(randomToken(32)), tenantId, clientId, userId, uuidAt(familyCreated - 2000), 'https://intranet.example.com/callback', randomToken(32), null, randomToken(16), 'openid profile email offline_access', familyCreated - 2000, amr, hasTotp ? 1 : 0, familyCreated - 1000, familyCreated + 59_000, familyCreated, familyId])
      }
      await addEvent(tenantId, userId, 'session.created', { session: { id: familyId, clientId }, user: { id: userId } }, familyCreated)
      if (revokedAt !== null) await addEvent(tenantId, userId, 'session.ended', { session: { id: familyId, reason: 'logout', clientId }, user: { id: userId } }, revokedAt)
      const end = Math.min(revokedAt ?? now, familyExpires, now)
      const step = Math.max(1, Math.floor((end - familyCreated) / chain))
      const ip = `203.0.${u % 256}.${f % 256}`
      const userAgent = pick(USER_AGENTS)
      for (let k = 0; k < chain; k++) {
        const at = familyCreated + k * step
        const spentAt = k === chain - 1 ? null : at + step
        const ttl = rememberMe ? 30 * DAY : DAY
        await add('refresh_tokens', [uuidAt(at), familyId, refreshTokenKey(newRefreshToken(at)), at, Math.min(at + ttl, familyExpires), spentAt, accessKid, ip, userAgent])
      }
    }

    for (let a = 0; a < auditPerUser; a++) {
      const type = rand() < 0.85 ? 'login.succeeded' : rand() < 0.7 ? 'login.failed' : 'logout'
      const detail = type === 'logout' ? null : JSON.stringify(type === 'login.failed' ? { email: maskEmail(email), reason: 'wrong-password' } : { email: maskEmail(email), rememberMe: true, trustedDevice: false })
      await add('audit_events', [auditAt(), type, tenantId, userId, `203.0.${u % 256}.7`, pick(USER_AGENTS), null, detail])
    }

    for (let m = 0; m < mailPerUser; m++) {
      const at = now - Math.floor(rand() * 30 * DAY)
      const dead = rand() < 0.01
      // Delivered mail has its body erased; dead mail (failed for good) keeps it for a retry.
      await add('mail_outbox', [
        uuidAt(at), tenantId, 'password-changed', email, 'Your password was changed',
        dead ? 'Your password was changed. If this was not you, reset it now.' : null, dead ? '<p>Your password was changed.</p>' : null,
        dead ? 'failed' : 'sent', dead ? 8 : 1, at, null, dead ? '550 mailbox unavailable' : null, null, at, dead ? null : at + 2000,
      ])
    }

    if (hasTotp) {
      await add('mfa_totp', [userId, sealSecret({ serverKeys: { sealing: sealingKey } } as never, userId, randomBytes(20).toString('base64url')), createdAt, createdAt, Math.floor(now / 30_000) - Math.floor(rand() * 100_000)])
      for (let c = 0; c < 10; c++) {
        await add('mfa_recovery_codes', [uuidAt(createdAt), userId, recoveryCodeHash({ serverKeys: { hmac: hmacKey } } as never, userId, randomBytes(7).toString('hex')), c === 0 && rand() < 0.2 ? now - DAY : null])
      }
    }
    if (rand() < passkeyShare) {
      await add('passkeys', [uuidAt(createdAt), tenantId, userId, randomBytes(16).toString('base64url'), randomBytes(77).toString('base64url'), 0, '["hybrid","internal"]', 'multiDevice', true, '00000000-0000-0000-0000-000000000000', 'iCloud Keychain', createdAt, now - Math.floor(rand() * 30 * DAY)])
    }
    const tenantGroups = groupsOf.get(tenantId)!
    for (const g of new Set(Array.from({ length: Math.floor(rand() * 4) }, () => pick(tenantGroups)))) await add('group_members', [g, userId, tenantId, createdAt])
    const thirdParty = apps.get(tenantId)!.thirdParty
    if (thirdParty && rand() < 0.05) await add('oidc_consents', [userId, thirdParty, tenantId, 'openid profile email', createdAt])
    const emailKey = hmacSha256(hmacKey, `${tenantId}:${email}`)
    if (rand() < 0.2) await add('password_reset_requests', [tenantId, emailKey, now - Math.floor(rand() * 7 * DAY), true, 0])
    // Invited users set their password with a setup token (used); a few invitations are open.
    if (rand() < 0.05) {
      const at = now - Math.floor(rand() * 7 * DAY)
      await add('setup_tokens', [uuidAt(at), userId, sha256(randomToken(32)), at, at + 7 * DAY, rand() < 0.8 ? at + DAY : null])
    }
    // Limit counters of the last two days (back-off runs, budgets), keyed by keyed hashes.
    if (rand() < 0.1) {
      const at = now - Math.floor(rand() * 2 * DAY)
      await add('limit_counters', [hmacSha256(hmacKey, `login:${tenantId}:${email}`), 1 + Math.floor(rand() * 4), at, at])
    }
    if (rand() < 0.05) await add('signup_requests', [tenantId, emailKey, now - Math.floor(rand() * 7 * DAY), true])
    if (rand() < 0.005) {
      const at = now - Math.floor(rand() * 10 * 60_000)
      await add('pending_signups', [tenantId, hmacSha256(hmacKey, `new${u}:${tenantId}`), pick(FIRST), pick(LAST), passwordHash, hmacSha256(hmacKey, `code:${u}`), at, at + 15 * 60_000, 0, null])
    }
    if (rand() < 0.01) await add('idempotency_keys', [tenantId, randomToken(16), sha256(`POST /users ${u}`), userId, 201, `v1.${randomBytes(120).toString('base64url')}`, now - Math.floor(rand() * DAY)])

    if (u % 1000 === 999) progress(u + 1, users, rowsWritten)
  }
  for (const table of Object.keys(COLUMNS) as Table[]) await flush(table)
  progress(users, users, rowsWritten)
  await rebuildIndexes()
  await sink.analyze()
  return { counts, largeTenantId, seconds: (performance.now() - started) / 1000 }
}
