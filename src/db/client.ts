// Opens the SQLite database with the durability and concurrency settings authd relies on.
import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import * as schema from './schema'

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database }

export function openDatabase(path: string): Db {
  // The database holds signing keys and hashes: only the owner may read it. The file is
  // created 600 by the process umask (main.ts), never chmod-ed after the fact.
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const sqlite = new Database(path, { create: true, strict: true })
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
  return drizzle({ client: sqlite, schema }) as Db
}
