import { describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { CACHED_STATEMENTS, openDatabase } from '../../src/db/sqlite/client'
import { embeddedMigrations, migrationStatus, runMigrations } from '../../src/db/sqlite/migrate'
import { journal } from '../../src/db/sqlite/migrations'
import { tenants } from '../../src/db/sqlite/schema'
import { eq } from 'drizzle-orm'
import { tempDir } from '../helpers'

describe('embedded migrations', () => {
  it('embed every migration drizzle-kit generated (run `npm run db:generate` after a schema change)', () => {
    const sqlFiles = readdirSync(join(import.meta.dir, '../../src/db/sqlite/migrations')).filter((f) => f.endsWith('.sql'))
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

  it('compiles a SQL text once and serves every query of that text with it', () => {
    const db = openDatabase(join(tempDir(), 'authd.db'))
    runMigrations(db.$client)
    expect(db.$client.prepare('SELECT 1 AS one')).toBe(db.$client.prepare('SELECT 1 AS one'))
    // drizzle builds the same text for the same query shape: each run binds its own values
    const row = (id: string, name: string) => ({ id, name, createdAt: 1, audience: `aud-${id}-${name}` })
    db.insert(tenants).values(row('t1', 'One')).run()
    db.insert(tenants).values(row('t2', 'Two')).run()
    expect(db.select({ name: tenants.name }).from(tenants).where(eq(tenants.id, 't1')).get()).toEqual({ name: 'One' })
    expect(db.select({ name: tenants.name }).from(tenants).where(eq(tenants.id, 't2')).get()).toEqual({ name: 'Two' })
    // a statement whose last run failed (a duplicate key) serves the next caller
    expect(() => db.insert(tenants).values(row('t1', 'Again')).run()).toThrow(/UNIQUE/)
    db.insert(tenants).values(row('t3', 'Three')).run()
    expect(db.select({ id: tenants.id }).from(tenants).all().map((t) => t.id)).toEqual(['t1', 't2', 't3'])
    db.$client.close()
  })

  it(`keeps at most ${CACHED_STATEMENTS} compiled statements, dropping the least recently used`, () => {
    const db = openDatabase(join(tempDir(), 'authd.db'))
    const oldest = db.$client.prepare('SELECT 0')
    const recent = db.$client.prepare('SELECT -1')
    for (let i = 1; i <= CACHED_STATEMENTS; i++) {
      db.$client.prepare(`SELECT ${i}`)
      if (i === CACHED_STATEMENTS - 10) expect(db.$client.prepare('SELECT -1')).toBe(recent) // used again: now the most recent
    }
    // two texts more than fit: the two least recently used went ('SELECT 0', then 'SELECT 1'),
    // not 'SELECT -1', second in but used again since
    expect(db.$client.prepare('SELECT -1')).toBe(recent)
    const again = db.$client.prepare('SELECT 0')
    expect(again).not.toBe(oldest)
    expect(again.values()).toEqual([[0]])
    expect(oldest.values()).toEqual([[0]]) // dropped from the map, not finalized: a holder may still run it
    db.$client.close()
  })
})
