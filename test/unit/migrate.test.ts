import { describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
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
