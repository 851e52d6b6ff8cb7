// Where the seed generator (bench/seed.ts) writes: a SQLite file or a PostgreSQL database, each
// through its engine's fastest plain path (bun:sqlite prepared inserts in large transactions;
// PostgreSQL `INSERT … SELECT FROM unnest(arrays)`, one round trip per few thousand rows). The
// schema is the app's own, made by its migrations; the secondary indexes of the big tables are
// dropped while loading and built again after (a sorted build, much faster than millions of
// random inserts into a B-tree), from their own definitions read back from the catalogue.
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { runMigrations } from '../src/db/sqlite/migrate'
import { runPgMigrations } from '../src/db/pg/migrate'

export type Row = unknown[]

export interface Sink {
  kind: 'sqlite' | 'postgres'
  insert(table: string, columns: string[], rows: Row[]): Promise<void>
  /** Drops the secondary indexes of `tables`; the function returned builds them again. */
  deferIndexes(tables: string[]): Promise<() => Promise<void>>
  /** A named server secret (server_secrets), created as authd creates it when absent. */
  serverSecret(name: string, create: () => string): Promise<string>
  query<T>(text: string, params?: unknown[]): Promise<T[]>
  /** Statistics for the planner, as an operator's routine maintenance leaves them. */
  analyze(): Promise<void>
  /** SQLite: copies the WAL into the database file and empties it; PostgreSQL: nothing. */
  checkpoint(): void
  close(): Promise<void>
}

export function sqliteSink(path: string): Sink {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const db = new Database(path, { create: true })
  db.run('PRAGMA busy_timeout = 5000')
  db.run('PRAGMA journal_mode = WAL')
  runMigrations(db)
  // The webhook triggers report changes as they happen (an event row per new user or
  // session): the seed writes history, with the events retention would have left (seed.ts), so
  // they are off while it loads (PostgreSQL: session_replication_role below) and back at close.
  const triggers = db.query("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'webhook%'").all() as Array<{ name: string; sql: string }>
  for (const { name } of triggers) db.run(`DROP TRIGGER ${name}`)
  // Loading only: a crash mid-seed loses the seed, nothing else. authd opens it at FULL again.
  db.run('PRAGMA synchronous = OFF')
  db.run('PRAGMA cache_size = -1000000')
  const statements = new Map<string, ReturnType<Database['prepare']>>()
  const insertMany = db.transaction((statement: ReturnType<Database['prepare']>, rows: Row[]) => {
    for (const row of rows) statement.run(...(row as never[]))
  })
  return {
    kind: 'sqlite',
    async insert(table, columns, rows) {
      const key = `${table}(${columns.join(',')})`
      let statement = statements.get(key)
      if (!statement) {
        statement = db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`)
        statements.set(key, statement)
      }
      insertMany(statement, rows.map((row) => row.map((v) => (typeof v === 'boolean' ? Number(v) : v))))
    },
    async deferIndexes(tables) {
      const indexes = db
        .query(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${tables.map(() => '?').join(', ')})`)
        .all(...tables) as Array<{ name: string; sql: string }>
      for (const { name } of indexes) db.run(`DROP INDEX ${name}`)
      return async () => {
        for (const { sql } of indexes) db.run(sql)
      }
    },
    async serverSecret(name, create) {
      const row = db.query('SELECT value FROM server_secrets WHERE name = ?').get(name) as { value: string } | null
      if (row) return row.value
      const value = create()
      db.query('INSERT INTO server_secrets (name, value, created_at) VALUES (?, ?, ?)').run(name, value, Date.now())
      return value
    },
    async query(text, params = []) {
      return db.query(text.replace(/\$(\d+)/g, '?$1')).all(...(params as never[])) as never
    },
    // None: authd never runs ANALYZE on its file, so its planner works without statistics,
    // and the plans measured here must be those.
    async analyze() {},
    checkpoint: () => void db.run('PRAGMA wal_checkpoint(TRUNCATE)'),
    async close() {
      for (const { sql } of triggers) db.run(sql)
      db.run('PRAGMA wal_checkpoint(TRUNCATE)')
      // Finalized first: a statement left for the collector keeps the file open (and locked,
      // in WAL mode) after close(), and `authd db copy` then finds the database in use.
      for (const statement of statements.values()) statement.finalize()
      db.close(true)
    },
  }
}

export async function postgresSink(url: string): Promise<Sink> {
  // One connection: the session settings below hold for every statement of the load.
  const sql = new SQL(url, { max: 1 })
  await runPgMigrations(sql)
  await sql.unsafe('SET synchronous_commit = off')
  await sql.unsafe("SET maintenance_work_mem = '512MB'")
  // Foreign keys unchecked while loading (the generator writes parents first): a superuser's
  // setting; elsewhere the load checks them, slower.
  await sql.unsafe('SET session_replication_role = replica').catch(() => {})
  const types = new Map<string, Map<string, string>>()
  const typesOf = async (table: string) => {
    let columns = types.get(table)
    if (!columns) {
      const rows = (await sql`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${table}`) as Array<{ column_name: string; data_type: string }>
      columns = new Map(rows.map((r) => [r.column_name, r.data_type]))
      types.set(table, columns)
    }
    return columns
  }
  return {
    kind: 'postgres',
    async insert(table, columns, rows) {
      const types = await typesOf(table)
      const arrays = columns.map((_, i) => rows.map((row) => row[i]))
      const casts = columns.map((column, i) => `$${i + 1}::${types.get(column)}[]`)
      await sql.unsafe(`INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${casts.join(', ')})`, arrays)
    },
    async deferIndexes(tables) {
      // Not the indexes behind a constraint (primary keys): those stay.
      const indexes = (await sql.unsafe(
        `SELECT indexname, indexdef FROM pg_indexes i WHERE schemaname = current_schema() AND tablename = ANY($1::text[])
           AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
        [tables],
      )) as Array<{ indexname: string; indexdef: string }>
      for (const { indexname } of indexes) await sql.unsafe(`DROP INDEX "${indexname}"`)
      return async () => {
        for (const { indexdef } of indexes) await sql.unsafe(indexdef)
      }
    },
    async serverSecret(name, create) {
      await sql`INSERT INTO server_secrets (name, value, created_at) VALUES (${name}, ${create()}, ${Date.now()}) ON CONFLICT DO NOTHING`
      const [row] = (await sql`SELECT value FROM server_secrets WHERE name = ${name}`) as Array<{ value: string }>
      return row!.value
    },
    async query(text, params = []) {
      return (await sql.unsafe(text, params as never[])) as never
    },
    async analyze() {
      await sql.unsafe('VACUUM ANALYZE')
    },
    checkpoint() {},
    async close() {
      await sql.close()
    },
  }
}
