// One migration runner for `authd serve` and `authd migrate`. It keeps drizzle-kit's
// bookkeeping table (`__drizzle_migrations`: hash, created_at = the journal's `when`), so
// drizzle-kit's own tooling agrees with it, but unlike drizzle's migrator it reads what is
// applied and applies what is pending under one BEGIN IMMEDIATE: two processes starting at
// once cannot both apply the same migration.
import type { Database } from 'bun:sqlite'
import { createHash } from 'node:crypto'
import { journal, migrationFiles } from './migrations'

export interface Migration {
  tag: string
  createdAt: number
  hash: string
  statements: string[]
}

export interface MigrationStatus {
  applied: string[]
  pending: string[]
}

/** One engine's embedded migrations, in journal order (see scripts/embed-migrations.ts). */
export function loadMigrations(journal: { entries: Array<{ tag: string; when: number }> }, files: Record<string, string>): Migration[] {
  return journal.entries.map((entry) => {
    const sqlText = files[entry.tag]
    if (sqlText === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`)
    return {
      tag: entry.tag,
      createdAt: entry.when,
      hash: createHash('sha256').update(sqlText).digest('hex'),
      statements: sqlText.split('--> statement-breakpoint').map((s) => s.trim()).filter(Boolean),
    }
  })
}

export const embeddedMigrations: Migration[] = loadMigrations(journal, migrationFiles)

/** What is applied and what is pending, given the newest applied migration's journal time. */
export function splitByApplied(migrations: Migration[], lastAppliedAt: number): MigrationStatus {
  return {
    applied: migrations.filter((m) => m.createdAt <= lastAppliedAt).map((m) => m.tag),
    pending: migrations.filter((m) => m.createdAt > lastAppliedAt).map((m) => m.tag),
  }
}

export const MIGRATIONS_TABLE = '__drizzle_migrations'
const TABLE = MIGRATIONS_TABLE

function ensureTable(db: Database) {
  db.run(`CREATE TABLE IF NOT EXISTS "${TABLE}" (id INTEGER PRIMARY KEY, hash text NOT NULL, created_at numeric)`)
}

function lastAppliedAt(db: Database): number {
  const row = db.query(`SELECT max(created_at) AS last FROM "${TABLE}"`).get() as { last: number | null }
  return row.last === null ? -Infinity : Number(row.last)
}

export function migrationStatus(db: Database, migrations = embeddedMigrations): MigrationStatus {
  ensureTable(db)
  return splitByApplied(migrations, lastAppliedAt(db))
}

/** Applies pending migrations; returns the tags it applied (empty when up to date). */
export function runMigrations(db: Database, migrations = embeddedMigrations): string[] {
  ensureTable(db)
  return db.transaction(() => {
    const last = lastAppliedAt(db)
    const pending = migrations.filter((m) => m.createdAt > last)
    for (const m of pending) {
      for (const statement of m.statements) db.run(statement)
      db.run(`INSERT INTO "${TABLE}" (hash, created_at) VALUES (?, ?)`, [m.hash, m.createdAt])
    }
    return pending.map((m) => m.tag)
  }).immediate()
}
