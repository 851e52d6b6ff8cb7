// Opens the SQLite database with the durability and concurrency settings authd relies on.
import { Database, type SQLQueryBindings, type Statement } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { noteQuery, queryLogger } from '../query-observer'
import * as schema from './schema'

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database }

export function openDatabase(path: string): Db {
  // The database holds signing keys and hashes: only the owner may read it. The file is
  // created 600 by the process umask (main.ts), never chmod-ed after the fact.
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const sqlite = new StatementCachingDatabase(path, { create: true, strict: true })
  // The busy timeout comes first: switching a new database to WAL takes an exclusive lock,
  // and a second process starting at the same moment (another `authd serve`, or the CLI)
  // must wait for it rather than fail with "database is locked". WAL lets readers run beside
  // the one writer; synchronous=FULL makes every commit survive power loss (a spent OTP or a
  // revoked token must not come back).
  sqlite.run('PRAGMA busy_timeout = 5000')
  sqlite.run('PRAGMA journal_mode = WAL')
  sqlite.run('PRAGMA synchronous = FULL')
  sqlite.run('PRAGMA foreign_keys = ON')
  // Erased data (a delivered mail's body, which holds an OTP or setup token) is overwritten
  // with zeros, not left in a free cell of the page; see OutboxStore.purgeErased for the WAL.
  sqlite.run('PRAGMA secure_delete = ON')
  return drizzle({ client: sqlite, schema, logger: queryLogger }) as Db
}

/** How many compiled statements are kept: authd's drizzle queries are a few hundred distinct
 *  SQL texts at most (an IN list or a multi-row insert is one per length). */
export const CACHED_STATEMENTS = 500

/**
 * bun:sqlite, with each compiled statement kept by its SQL text. drizzle compiles every query
 * it runs afresh (its bun-sqlite session calls prepare() per query): compiling the same text
 * again was ~30% of a drizzle query's time (a select by id 38 against 26.5 µs, bench/README.md,
 * session 15). Bun's own cache (Database.query) keeps only the first 20 texts it sees. A
 * statement runs to completion each time it is used (run, get, all, values: nothing here
 * iterates), so one statement can serve every caller of its text. The least
 * recently used is dropped from the map when it is full, not finalized: a prepared query may
 * still hold it, and the collector finalizes it once nothing does.
 */
class StatementCachingDatabase extends Database {
  private readonly statements = new Map<string, Statement>()

  /** Bun's own statement cache; seen by the query observer like the rest. */
  override query<ReturnType, ParamsType extends SQLQueryBindings | SQLQueryBindings[]>(sql: string) {
    noteQuery(sql)
    return super.query<ReturnType, ParamsType>(sql)
  }

  override prepare<ReturnType, ParamsType extends SQLQueryBindings | SQLQueryBindings[]>(sql: string, params?: ParamsType, ...rest: unknown[]) {
    type Prepared = Statement<ReturnType, ParamsType extends any[] ? ParamsType : [ParamsType]>
    // With bindings or flags (Database.query passes its own), the caller wants its own statement.
    if (params !== undefined || rest.length > 0) return (super.prepare as (...args: unknown[]) => Prepared)(sql, params, ...rest)
    // Raw statements (the limit counters', the outbox claim) are prepared once, at start-up.
    noteQuery(sql)
    let statement = this.statements.get(sql)
    if (statement) {
      this.statements.delete(sql)
    } else {
      statement = super.prepare(sql)
      if (this.statements.size >= CACHED_STATEMENTS) this.statements.delete(this.statements.keys().next().value!)
    }
    this.statements.set(sql, statement)
    return statement as unknown as Prepared
  }
}
