// `authd db copy --to URL`: moves a whole database from one engine to the other (SQLite into
// an empty PostgreSQL database, or back), so a deployment that outgrows one machine keeps its
// users, sessions, keys and queued mail. The target is migrated, must be empty, and is
// written in one transaction; each table's row count is checked against the source before
// that transaction commits.
import { Database } from 'bun:sqlite'
import { sql } from 'drizzle-orm'
import { existsSync } from 'node:fs'
import type { Config } from '../config'
import { openDatabase, type Db } from './client'
import { runMigrations } from './migrate'
import { openPostgres, type PgDb } from './pg/client'
import { runPgMigrations } from './pg/migrate'
import * as pgSchema from './pg/schema'
import * as sqliteSchema from './schema'

/** Tables in an order that respects their foreign keys (test/unit/copy checks it names every
 *  table of both schemas: a table left out would be lost at the move, silently). */
export const TABLES = [
  'tenants',
  'users',
  'apiKeys',
  'setupTokens',
  'signingKeys',
  'refreshFamilies',
  'refreshTokens',
  'passwordResetOtps',
  'passwordResetRequests',
  'mailOutbox',
  'serverSecrets',
  'limitCounters',
  'auditEvents',
  'idempotencyKeys',
  'pendingSignups',
  'signupRequests',
  'mfaTotp',
  'mfaRecoveryCodes',
  'mfaChallenges',
  'passkeys',
  'webauthnChallenges',
  'oidcClients',
  'oidcCodes',
  'oidcConsents',
  'webhookEndpoints',
  'webhookDeliveries',
  // Last: the rows copied above fired the webhook triggers on the target, writing events for
  // changes that are not new; those are discarded before the source's events are copied.
  'webhookEvents',
] as const
type TableName = (typeof TABLES)[number]

const BATCH = 500

interface Side {
  location: string
  read(table: TableName): Promise<Record<string, unknown>[]>
  /** Runs `write` in one transaction; `insert` adds rows, `count` reads a table's count inside it. */
  transaction(
    write: (insert: (table: TableName, rows: Record<string, unknown>[]) => Promise<void>, count: (table: TableName) => Promise<number>, empty: (table: TableName) => Promise<void>) => Promise<void>,
  ): Promise<void>
  count(table: TableName): Promise<number>
  close(): Promise<void>
}

function sqliteSide(db: Db, location: string): Side {
  const count = (table: TableName) => (db.select({ n: sql<number>`count(*)` }).from(sqliteSchema[table]).get()?.n ?? 0)
  return {
    location,
    read: async (table) => db.select().from(sqliteSchema[table]).all() as Record<string, unknown>[],
    async transaction(write) {
      db.$client.run('BEGIN IMMEDIATE')
      try {
        await write(
          async (table, rows) => {
            for (let i = 0; i < rows.length; i += BATCH) db.insert(sqliteSchema[table]).values(rows.slice(i, i + BATCH) as never).run()
          },
          async (table) => count(table),
          async (table) => void db.delete(sqliteSchema[table]).run(),
        )
        db.$client.run('COMMIT')
      } catch (error) {
        db.$client.run('ROLLBACK')
        throw error
      }
    },
    count: async (table) => count(table),
    close: async () => db.$client.close(),
  }
}

function pgSide(db: PgDb, location: string): Side {
  const countWith = async (executor: Pick<PgDb, 'select'>, table: TableName) => Number((await executor.select({ n: sql<number>`count(*)` }).from(pgSchema[table]))[0]?.n ?? 0)
  return {
    location,
    read: async (table) => (await db.select().from(pgSchema[table])) as Record<string, unknown>[],
    async transaction(write) {
      await db.transaction(async (tx) => {
        await write(
          async (table, rows) => {
            for (let i = 0; i < rows.length; i += BATCH) await tx.insert(pgSchema[table]).values(rows.slice(i, i + BATCH) as never)
          },
          (table) => countWith(tx, table),
          async (table) => void (await tx.delete(pgSchema[table])),
        )
        // Rows came with their ids: move the sequences past them.
        for (const table of ['audit_events', 'password_reset_requests', 'signup_requests']) {
          await tx.execute(sql`SELECT setval(pg_get_serial_sequence(${table}, 'id'), coalesce((SELECT max(id) FROM ${sql.identifier(table)}), 0) + 1, false)`)
        }
      })
    },
    count: (table) => countWith(db, table),
    close: () => db.$client.close(),
  }
}

async function openSide(target: { sqlitePath?: string; postgresUrl?: string }, location: string): Promise<Side> {
  if (target.postgresUrl) {
    const db = openPostgres(target.postgresUrl, { max: 1 })
    await runPgMigrations(db.$client)
    return pgSide(db, location)
  }
  const db = openDatabase(target.sqlitePath!)
  runMigrations(db.$client)
  return sqliteSide(db, location)
}

export class CopyRefused extends Error {}

/**
 * Who else has the source open, if anyone: rows written after the copy read its tables would
 * be lost at the switch-over. On SQLite, a connection in WAL mode keeps a lock on the file for
 * as long as it is open, idle or not, so an exclusive lock that cannot be had (without
 * waiting) means another process holds the database: a running `authd serve`, most likely.
 * On PostgreSQL, any other session on the database.
 */
export async function sourceInUse(from: Pick<Config, 'databasePath' | 'postgresUrl'>): Promise<string | null> {
  if (from.postgresUrl) {
    const db = openPostgres(from.postgresUrl, { max: 1 })
    try {
      const [row] = (await db.$client`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`) as Array<{ n: number }>
      return row!.n > 0 ? `${row!.n} other connection(s) to the source database are open` : null
    } finally {
      await db.$client.close()
    }
  }
  if (!existsSync(from.databasePath)) return null
  const probe = new Database(from.databasePath)
  try {
    probe.run('PRAGMA busy_timeout = 0')
    probe.run('PRAGMA locking_mode = EXCLUSIVE')
    probe.run('BEGIN EXCLUSIVE')
    probe.run('COMMIT')
    return null
  } catch (error) {
    if (/locked|busy/i.test((error as Error).message)) return `another process has ${from.databasePath} open`
    throw error
  } finally {
    probe.close()
  }
}

/** Copies every row of the configured database into `to`; returns the rows copied per table. */
export async function copyDatabase(
  from: Pick<Config, 'databasePath' | 'postgresUrl'>,
  to: { sqlitePath?: string; postgresUrl?: string; location: string },
  fromLocation: string,
): Promise<Record<TableName, number>> {
  if ((from.postgresUrl ?? from.databasePath) === (to.postgresUrl ?? to.sqlitePath)) throw new CopyRefused('the target is the database being copied')
  const source = await openSide({ sqlitePath: from.databasePath, postgresUrl: from.postgresUrl }, fromLocation)
  let target: Side | undefined
  try {
    target = await openSide(to, to.location)
    for (const table of TABLES) {
      if ((await target.count(table)) > 0) throw new CopyRefused(`${to.location} is not empty (${table} has rows): copy only into an empty database`)
    }
    const copied = {} as Record<TableName, number>
    await target.transaction(async (insert, count, empty) => {
      for (const table of TABLES) {
        if (table === 'webhookEvents') await empty(table)
        const rows = await source.read(table)
        await insert(table, rows)
        const written = await count(table)
        if (written !== rows.length) throw new Error(`${table}: ${rows.length} rows read, ${written} written`)
        copied[table] = rows.length
      }
    })
    return copied
  } finally {
    await target?.close()
    await source.close()
  }
}
