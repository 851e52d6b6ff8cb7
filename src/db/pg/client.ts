// Opens PostgreSQL through Bun's built-in SQL client and drizzle-orm/bun-sql: no driver
// dependency, and it works inside `bun build --compile`.
import { SQL } from 'bun'
import { drizzle, type BunSQLDatabase } from 'drizzle-orm/bun-sql'
import { isObserved, noteQuery, queryLogger } from '../query-observer'
import * as schema from './schema'

export type PgDb = BunSQLDatabase<typeof schema> & { $client: SQL }
/** A transaction, or the database itself: what the helpers that run inside one accept. */
export type PgExecutor = Pick<PgDb, 'select' | 'insert' | 'update' | 'delete' | 'execute'>

const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const
type SslMode = (typeof SSL_MODES)[number]

/** The URL's `sslmode`, as libpq reads it; none means Bun's default. */
export function sslModeOf(url: string): SslMode | undefined {
  const mode = new URL(url).searchParams.get('sslmode')
  if (mode === null) return undefined
  if (!(SSL_MODES as readonly string[]).includes(mode)) throw new Error(`sslmode must be one of ${SSL_MODES.join(', ')} (got "${mode}")`)
  return mode as SslMode
}

export function openPostgres(url: string, options: { max?: number } = {}): PgDb {
  const tls = sslModeOf(url)
  const client = new SQL(url, { max: options.max ?? 10, idleTimeout: 30, connectionTimeout: 10, ...(tls && { tls }) })
  if (isObserved()) {
    // The store's own statements (pg/store.ts) run through unsafe(), past drizzle's logger.
    const unsafe = client.unsafe.bind(client)
    client.unsafe = ((query: string, params?: unknown[]) => (noteQuery(query, params), unsafe(query, params as never))) as typeof client.unsafe
  }
  return drizzle({ client, schema, logger: queryLogger }) as PgDb
}

/** SQLSTATE 23505, as Bun's client reports it (drizzle wraps it in its DrizzleQueryError). */
export function isPgUniqueViolation(error: unknown): boolean {
  const e = error as { errno?: string; cause?: { errno?: string } } | null
  return e?.errno === '23505' || e?.cause?.errno === '23505'
}

/** The engine aborted the transaction and a retry may pass: a deadlock (40P01) or a
 *  serialization failure (40001). */
export function isPgAborted(error: unknown): boolean {
  const e = error as { errno?: string; cause?: { errno?: string } } | null
  const code = e?.errno ?? e?.cause?.errno
  return code === '40P01' || code === '40001'
}

/** The database cannot be reached (refused, closed, timed out, shutting down), as opposed to a
 *  query that failed: SQLSTATE class 08 and 57P01-03, or Bun's client connection errors. */
export function isPgUnavailable(error: unknown): boolean {
  for (let e = error as { code?: string; errno?: string; cause?: unknown } | null | undefined, depth = 0; e && depth < 3; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && e.code.startsWith('ERR_POSTGRES_CONNECTION')) return true
    if (e.code === 'ERR_POSTGRES_IDLE_TIMEOUT' || e.code === 'ECONNREFUSED' || e.code === 'ECONNRESET') return true
    if (typeof e.errno === 'string' && (e.errno.startsWith('08') || ['57P01', '57P02', '57P03'].includes(e.errno))) return true
  }
  return false
}
