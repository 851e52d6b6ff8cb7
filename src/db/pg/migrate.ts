// The migration runner for PostgreSQL: the same bookkeeping as SQLite's (drizzle-kit's
// `__drizzle_migrations`: hash, created_at = the journal's `when`), applied in one transaction
// that first takes an advisory lock, so instances starting at the same moment on an empty
// database apply every migration exactly once: the others wait, then find nothing pending.
import type { SQL } from 'bun'
import { journal, migrationFiles } from './migrations'
import { loadMigrations, MIGRATIONS_TABLE, splitByApplied, type Migration, type MigrationStatus } from '../sqlite/migrate'

export const embeddedPgMigrations: Migration[] = loadMigrations(journal, migrationFiles)

/** The advisory lock's key: any constant no other application on the database uses. */
const MIGRATION_LOCK = 0x61757468 // 'auth'

const ensureTable = (sql: SQL) => sql.unsafe(`CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (id serial PRIMARY KEY, hash text NOT NULL, created_at bigint)`)

async function lastAppliedAt(sql: SQL): Promise<number> {
  const [row] = await sql.unsafe(`SELECT max(created_at) AS last FROM "${MIGRATIONS_TABLE}"`)
  return row?.last === null || row?.last === undefined ? -Infinity : Number(row.last)
}

export async function pgMigrationStatus(sql: SQL, migrations = embeddedPgMigrations): Promise<MigrationStatus> {
  const [exists] = await sql`SELECT to_regclass(${`"${MIGRATIONS_TABLE}"`}) IS NOT NULL AS present`
  return splitByApplied(migrations, exists?.present ? await lastAppliedAt(sql) : -Infinity)
}

/** Applies pending migrations; returns the tags it applied (empty when up to date). */
export async function runPgMigrations(sql: SQL, migrations = embeddedPgMigrations): Promise<string[]> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
    await ensureTable(tx)
    const pending = splitByApplied(migrations, await lastAppliedAt(tx)).pending
    for (const tag of pending) {
      const m = migrations.find((x) => x.tag === tag)!
      for (const statement of m.statements) await tx.unsafe(statement)
      await tx`INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES (${m.hash}, ${m.createdAt})`
    }
    return pending
  })
}
