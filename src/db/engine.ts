// The database engine a Config selects: the SQLite file (the embedded default) or PostgreSQL
// (AUTHD_DATABASE_URL=postgres://…). Everything above this file sees only the Store; this is
// the one place that knows which engine it is.
import type { Config } from '../config'
import type { Store } from '../core/store'
import { openDatabase } from './sqlite/client'
import { migrationStatus, runMigrations, type MigrationStatus } from './sqlite/migrate'
import { openPostgres } from './pg/client'
import { pgMigrationStatus, runPgMigrations } from './pg/migrate'
import { createPgStore } from './pg/store'
import { createSqliteStore } from './sqlite/store'

export interface Engine {
  kind: 'sqlite' | 'postgres'
  /** The Store over this connection: after migrate() on a new database (SQLite's prepares its statements). */
  createStore(): Store
  close(): void
  /** Applies pending migrations; the tags applied. */
  migrate(): Promise<string[]>
  migrationStatus(): Promise<MigrationStatus>
  /** Where the data is, for logs and messages (a PostgreSQL URL without its password). */
  location: string
}

/**
 * A database URL as it may be shown: its password replaced, wherever it stands (the user
 * info, even with an unencoded @ in it, or a `password=` parameter). What cannot be parsed
 * loses its whole user info.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '…'
    for (const key of [...parsed.searchParams.keys()]) if (/^pass(word)?$/i.test(key)) parsed.searchParams.set(key, '…')
    return parsed.toString().replace('%E2%80%A6', '…')
  } catch {
    return url.replace(/\/\/[^/]*@/, '//…@')
  }
}

export function openEngine(config: Pick<Config, 'databasePath' | 'postgresUrl' | 'databasePoolSize'>): Engine {
  if (config.postgresUrl) {
    const db = openPostgres(config.postgresUrl, { max: config.databasePoolSize })
    return {
      kind: 'postgres',
      createStore: () => createPgStore(db),
      close: () => void db.$client.close(),
      migrate: () => runPgMigrations(db.$client),
      migrationStatus: () => pgMigrationStatus(db.$client),
      location: redactUrl(config.postgresUrl),
    }
  }
  const db = openDatabase(config.databasePath)
  return {
    kind: 'sqlite',
    createStore: () => createSqliteStore(db),
    close: () => db.$client.close(),
    migrate: async () => runMigrations(db.$client),
    migrationStatus: async () => migrationStatus(db.$client),
    location: config.databasePath,
  }
}
