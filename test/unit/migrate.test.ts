import { describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/client'
import { embeddedMigrations, migrationStatus, runMigrations } from '../../src/db/migrate'
import { journal } from '../../src/db/migrations'
import { tempDir } from '../helpers'

describe('embedded migrations', () => {
  it('embed every migration drizzle-kit generated (run `npm run db:generate` after a schema change)', () => {
    const sqlFiles = readdirSync(join(import.meta.dir, '../../src/db/migrations')).filter((f) => f.endsWith('.sql'))
    expect(embeddedMigrations.map((m) => `${m.tag}.sql`)).toEqual(sqlFiles.sort())
    expect(embeddedMigrations.map((m) => m.tag)).toEqual(journal.entries.map((e) => e.tag))
  })

  it('apply once: a second run and a second process find nothing to do', () => {
    const path = join(tempDir(), 'authd.db')
    const first = new Database(path)
    const second = new Database(path)
    expect(runMigrations(first)).toEqual(embeddedMigrations.map((m) => m.tag))
    expect(runMigrations(second)).toEqual([])
    expect(migrationStatus(second)).toEqual({ applied: embeddedMigrations.map((m) => m.tag), pending: [] })
    const tables = first.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()
    expect(tables.map((t: any) => t.name)).toContain('refresh_tokens')
  })
})

describe('openDatabase', () => {
  it('uses WAL, synchronous=FULL, a busy timeout and foreign keys', () => {
    const db = openDatabase(join(tempDir(), 'authd.db'))
    const pragma = (name: string) => Object.values(db.$client.query(`PRAGMA ${name}`).get() as object)[0]
    expect(pragma('journal_mode')).toBe('wal')
    expect(pragma('synchronous')).toBe(2) // FULL
    expect(pragma('busy_timeout')).toBe(5000)
    expect(pragma('foreign_keys')).toBe(1)
    db.$client.close()
  })
})
