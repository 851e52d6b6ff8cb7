// `authd doctor`'s size checks: whether the database is near a size where retention settings
// or VACUUM start to matter. What grows without bound is the audit log (kept a year by default)
// and, between retention runs, sessions and mail; deleted rows leave free pages (SQLite) or
// dead row versions (PostgreSQL) that new rows reuse but that never go back to the file system
// on their own. bench/README.md (Scale) has the sizes measured.
import { Database } from 'bun:sqlite'
import { statSync } from 'node:fs'
import type { Config } from '../../config'
import { retentionPolicy } from '../../core/retention/retention'
import { openPostgres } from '../../db/pg/client'
import type { Finding } from './finding'

const MIB = 1024 * 1024
/** From here on, how long rows are kept is most of what decides the size. */
export const LARGE_DATABASE_BYTES = 1024 * MIB
/** Free space worth giving back: this share of the file, and at least FREE_SPACE_MIN_BYTES. */
export const FREE_SPACE_SHARE = 0.25
export const FREE_SPACE_MIN_BYTES = 64 * MIB

export interface SizeFacts {
  engine: 'sqlite' | 'postgres'
  bytes: number
  /** Free pages (SQLite), or the space of dead row versions (PostgreSQL, estimated). */
  freeBytes: number
  /** The biggest tables, biggest first (measured only for a large database: counting is slow). */
  largest: Array<{ table: string; rows: number }>
}

const size = (bytes: number) => (bytes >= 1024 * MIB ? `${(bytes / 1024 / MIB).toFixed(1)} GiB` : `${Math.round(bytes / MIB)} MiB`)
const days = (ms: number) => `${Math.round(ms / 86_400_000)} d`

/** The findings for a database of these facts under this configuration's retention. */
export function sizeFindings(facts: SizeFacts, config: Pick<Config, 'retention' | 'limits'>): Finding[] {
  const policy = retentionPolicy(config)
  const findings: Finding[] = []
  const freeShare = facts.bytes > 0 ? facts.freeBytes / facts.bytes : 0
  if (facts.bytes >= LARGE_DATABASE_BYTES) {
    const largest = facts.largest.map((t) => `${t.table} ${t.rows.toLocaleString('en')} rows`).join(', ')
    findings.push({
      check: 'database size',
      status: 'warn',
      detail: `the database is ${size(facts.bytes)}${largest ? ` (largest: ${largest})` : ''}; retention keeps audit events ${days(policy.auditEvents)}, ended sessions ${days(policy.refreshFamilies)}, sent mail ${days(policy.sentMail)}`,
      fix:
        'if that is more than you need, lower AUTHD_RETAIN_AUDIT (the audit log is kept longest) or AUTHD_RETAIN_SESSIONS; retention deletes the older rows within minutes of a restart' +
        (facts.engine === 'sqlite' ? '; past a few GiB on one machine, consider PostgreSQL (`authd db copy`)' : ''),
    })
  }
  if (freeShare >= FREE_SPACE_SHARE && facts.freeBytes >= FREE_SPACE_MIN_BYTES) {
    findings.push({
      check: 'database free space',
      status: 'warn',
      detail: `${size(facts.freeBytes)} (${Math.round(freeShare * 100)}%) of the database is ${facts.engine === 'sqlite' ? 'free pages' : 'dead row versions'} left by deleted rows: new rows reuse them, but the ${facts.engine === 'sqlite' ? 'file' : 'tables'} will not shrink on ${facts.engine === 'sqlite' ? 'its' : 'their'} own`,
      fix:
        facts.engine === 'sqlite'
          ? 'to give the space back: `authd backup compact.db` (VACUUM INTO writes a compact copy), stop authd, put compact.db in place of authd.db (remove authd.db-wal and -shm), start authd'
          : 'check that autovacuum runs (pg_stat_user_tables.last_autovacuum); VACUUM FULL gives the space back but locks the table while it runs',
    })
  }
  if (findings.length === 0) findings.push({ check: 'database size', status: 'ok', detail: `${size(facts.bytes)}, ${Math.round(freeShare * 100)}% free` })
  return findings
}

/** The tables that grow with users and their history, for the size warning's detail. */
const GROWING_TABLES = ['audit_events', 'refresh_tokens', 'refresh_families', 'users', 'mail_outbox']

function sqliteFacts(path: string): SizeFacts {
  const db = new Database(path, { readonly: true })
  try {
    const pragma = (name: string) => Object.values(db.query(`PRAGMA ${name}`).get() as Record<string, number>)[0]!
    const pageSize = pragma('page_size')
    const wal = statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0
    const bytes = pragma('page_count') * pageSize + wal
    const largest =
      bytes >= LARGE_DATABASE_BYTES
        ? GROWING_TABLES.map((table) => ({ table, rows: (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n })).sort((a, b) => b.rows - a.rows).slice(0, 3)
        : []
    return { engine: 'sqlite', bytes, freeBytes: pragma('freelist_count') * pageSize, largest }
  } finally {
    db.close()
  }
}

async function postgresFacts(url: string): Promise<SizeFacts> {
  const db = openPostgres(url, { max: 1 })
  try {
    const [database] = (await db.$client`SELECT pg_database_size(current_database())::bigint AS bytes`) as Array<{ bytes: string }>
    // The statistics' live and dead row counts: estimates, and free to read.
    const tables = (await db.$client`
      SELECT relname AS table, n_live_tup::bigint AS live, n_dead_tup::bigint AS dead, pg_total_relation_size(relid)::bigint AS bytes
      FROM pg_stat_user_tables ORDER BY pg_total_relation_size(relid) DESC`) as Array<{ table: string; live: string; dead: string; bytes: string }>
    const freeBytes = tables.reduce((n, t) => n + (Number(t.dead) + Number(t.live) > 0 ? (Number(t.bytes) * Number(t.dead)) / (Number(t.dead) + Number(t.live)) : 0), 0)
    const largest = tables.slice(0, 3).map((t) => ({ table: t.table, rows: Number(t.live) }))
    return { engine: 'postgres', bytes: Number(database!.bytes), freeBytes, largest }
  } finally {
    await db.$client.close()
  }
}

export async function sizeChecks(config: Config): Promise<Finding[]> {
  const facts = config.postgresUrl ? await postgresFacts(config.postgresUrl) : sqliteFacts(config.databasePath)
  return sizeFindings(facts, config)
}
