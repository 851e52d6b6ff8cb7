// `authd db copy --to URL`: moves a whole database from one engine to the other (SQLite into
// an empty PostgreSQL database, or back), so a deployment that outgrows one machine keeps its
// users, sessions, keys and queued mail. The target is migrated, must be empty, and is
// written in one transaction; each table's row count is checked against the source before
// that transaction commits. The source is read a page at a time (a database of tens of
// millions of rows does not pass through memory at once).
import { Database } from 'bun:sqlite'
import { getTableColumns, is, sql, type Column } from 'drizzle-orm'
import { getTableConfig as getPgTableConfig, PgTable } from 'drizzle-orm/pg-core'
import { getTableConfig as getSqliteTableConfig } from 'drizzle-orm/sqlite-core'
import { existsSync } from 'node:fs'
import type { Config } from '../config'
import { openDatabase, type Db } from './sqlite/client'
import { runMigrations } from './sqlite/migrate'
import { openPostgres, type PgDb } from './pg/client'
import { runPgMigrations } from './pg/migrate'
import * as pgSchema from './pg/schema'
import * as sqliteSchema from './sqlite/schema'

/** Tables in an order that respects their foreign keys (test/unit/copy checks it names every
 *  table of both schemas: a table left out would be lost at the move, silently). */
export const TABLES = [
  'tenants',
  'users',
  // (before mfaChallenges: a login challenge may name the provider it completes the sign-in of)
  'identityProviders',
  'identities',
  'federationFlows',
  'apiKeys',
  'setupTokens',
  'signingKeys',
  'refreshFamilies',
  'refreshTokens',
  'passwordResetOtps',
  'passwordResetRequests',
  'mailOutbox',
  'serverSecrets',
  'serverSettings',
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
  'accessRules',
  'groups',
  'groupMembers',
  'deviceAuthorizations',
  'clientAssertions',
  // Last: on a SQLite target (or a PostgreSQL one whose tables the role does not own) the rows
  // copied above fired the webhook triggers, writing events for changes that are not new;
  // those are discarded before the source's events are copied.
  'webhookEvents',
] as const
type TableName = (typeof TABLES)[number]

/** Rows per INSERT: as many as stay well under both engines' limits on bound values. */
const batchFor = (columns: number) => Math.max(1, Math.floor(30_000 / columns))
/** Rows read from the source at a time: memory stays flat whatever the table's size. */
const PAGE = 10_000

type AnyTable = (typeof sqliteSchema)[TableName] | (typeof pgSchema)[TableName]

/**
 * A table's primary key as its columns and their property names in a row: rows are read in
 * its order, a page at a time, each page after the last one's key (keyset paging: every page
 * costs the same, where OFFSET would read all the rows before it again).
 */
function primaryKeyOf(table: AnyTable): Array<{ column: Column; property: string }> {
  const columns = Object.entries(getTableColumns(table)) as Array<[string, Column]>
  const config = is(table, PgTable) ? getPgTableConfig(table) : getSqliteTableConfig(table as never)
  const keyColumns: Column[] = config.primaryKeys[0]?.columns ?? columns.filter(([, c]) => c.primary).map(([, c]) => c)
  // By name: a composite key's config holds its own column objects.
  return keyColumns.map((column) => {
    const [property, own] = columns.find(([, c]) => c.name === column.name)!
    return { column: own, property }
  })
}

/** The rows after `after` (a row's key values), in key order: `(a, b) > (x, y)` on both engines. */
function pageQuery(table: AnyTable, after: unknown[] | null) {
  const key = primaryKeyOf(table)
  const where = after === null ? undefined : sql`(${sql.join(key.map((k) => k.column), sql`, `)}) > (${sql.join(after.map((v) => sql`${v}`), sql`, `)})`
  return { key, where, orderBy: key.map((k) => k.column) }
}

/** A PostgreSQL column's type as an array cast (`bigint[]`); serial columns are integers. */
function arrayTypeOf(column: Column): string {
  const type = column.getSQLType()
  return `${type === 'bigserial' ? 'bigint' : type === 'serial' ? 'integer' : type}[]`
}

interface Side {
  location: string
  /** Every row of `table`, a page at a time, in primary-key order. */
  pages(table: TableName): AsyncIterable<Record<string, unknown>[]>
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
    async *pages(table) {
      let after: unknown[] | null = null
      for (;;) {
        const { key, where, orderBy } = pageQuery(sqliteSchema[table], after)
        const rows = db.select().from(sqliteSchema[table]).where(where).orderBy(...(orderBy as never[])).limit(PAGE).all() as Record<string, unknown>[]
        if (rows.length > 0) yield rows
        if (rows.length < PAGE) return
        after = key.map((k) => rows.at(-1)![k.property])
      }
    },
    async transaction(write) {
      db.$client.run('BEGIN IMMEDIATE')
      try {
        await write(
          async (table, rows) => {
            const batch = batchFor(Object.keys(getTableColumns(sqliteSchema[table])).length)
            for (let i = 0; i < rows.length; i += batch) db.insert(sqliteSchema[table]).values(rows.slice(i, i + batch) as never).run()
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
    async *pages(table) {
      let after: unknown[] | null = null
      for (;;) {
        const { key, where, orderBy } = pageQuery(pgSchema[table], after)
        const rows = (await db.select().from(pgSchema[table]).where(where).orderBy(...(orderBy as never[])).limit(PAGE)) as Record<string, unknown>[]
        if (rows.length > 0) yield rows
        if (rows.length < PAGE) return
        after = key.map((k) => rows.at(-1)![k.property])
      }
    },
    async transaction(write) {
      await db.transaction(async (tx) => {
        // The copied rows are no new changes: the webhook triggers (an event written for each
        // user, session, factor, passkey) are off for the copy, inside its transaction, so an
        // interrupted copy leaves them on. Five times the rows per second for users (50,000
        // rows: 6.4 s with the trigger, 1.1 s without). Only the tables' owner may; a copy by
        // another role keeps them on and empties the events they wrote (webhookEvents, last).
        const triggered = (await tx.execute(sql`SELECT DISTINCT c.relname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace`)) as unknown as Array<{ name: string }>
        const setTriggers = async (executor: Pick<PgDb, 'execute'>, state: 'ENABLE' | 'DISABLE') => {
          for (const { name } of triggered) await executor.execute(sql`ALTER TABLE ${sql.identifier(name)} ${sql.raw(state)} TRIGGER USER`)
        }
        const triggersOff = await tx.transaction((savepoint) => setTriggers(savepoint, 'DISABLE')).then(
          () => true,
          () => false,
        )
        await write(
          async (table, rows) => {
            // A page in one statement, a column per array (unnest): ~4x the rows per second of
            // a multi-row VALUES list, whose tens of thousands of bound values Bun's client
            // and PostgreSQL's parser pay for one by one.
            const columns = Object.entries(getTableColumns(pgSchema[table])) as Array<[string, Column]>
            const arrays = columns.map(([property, column]) => sql`${sql.param(rows.map((row) => row[property] ?? null))}::${sql.raw(arrayTypeOf(column))}`)
            await tx.execute(sql`INSERT INTO ${pgSchema[table]} (${sql.join(columns.map(([, column]) => sql.identifier(column.name)), sql`, `)}) SELECT * FROM unnest(${sql.join(arrays, sql`, `)})`)
          },
          (table) => countWith(tx, table),
          async (table) => void (await tx.delete(pgSchema[table])),
        )
        if (triggersOff) await setTriggers(tx, 'ENABLE')
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

/** What a copy reports as it goes: rows copied so far, of how many. */
export type CopyProgress = (copied: number, total: number) => void

/**
 * Copies every row of the configured database into `to`; returns the rows copied per table.
 * Tables are read a page at a time and written in one transaction, each table's count checked
 * against the source before it commits: an interrupted copy (a crash, Ctrl-C, a lost
 * connection) leaves the target as empty as it was, and is simply run again.
 */
export async function copyDatabase(
  from: Pick<Config, 'databasePath' | 'postgresUrl'>,
  to: { sqlitePath?: string; postgresUrl?: string; location: string },
  fromLocation: string,
  progress: CopyProgress = () => {},
): Promise<Record<TableName, number>> {
  if ((from.postgresUrl ?? from.databasePath) === (to.postgresUrl ?? to.sqlitePath)) throw new CopyRefused('the target is the database being copied')
  const source = await openSide({ sqlitePath: from.databasePath, postgresUrl: from.postgresUrl }, fromLocation)
  let target: Side | undefined
  try {
    target = await openSide(to, to.location)
    for (const table of TABLES) {
      if ((await target.count(table)) > 0) throw new CopyRefused(`${to.location} is not empty (${table} has rows): copy only into an empty database`)
    }
    // For the progress only: a source in use (--force) may grow while it is read.
    let total = 0
    for (const table of TABLES) total += await source.count(table)
    let done = 0
    progress(0, total)
    const copied = {} as Record<TableName, number>
    await target.transaction(async (insert, count, empty) => {
      for (const table of TABLES) {
        if (table === 'webhookEvents') await empty(table)
        let read = 0
        for await (const rows of source.pages(table)) {
          await insert(table, rows)
          read += rows.length
          progress((done += rows.length), Math.max(total, done))
        }
        const written = await count(table)
        if (written !== read) throw new Error(`${table}: ${read} rows read, ${written} written`)
        copied[table] = read
      }
    })
    return copied
  } finally {
    await target?.close()
    await source.close()
  }
}
