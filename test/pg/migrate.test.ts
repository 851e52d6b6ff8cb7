// The PostgreSQL migration runner: instances starting at once on an empty database apply every
// migration exactly once, and the schema has every table the SQLite one has.
import { SQL } from 'bun'
import { expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { embeddedMigrations, runMigrations } from '../../src/db/sqlite/migrate'
import { embeddedPgMigrations, pgMigrationStatus, runPgMigrations } from '../../src/db/pg/migrate'
import { describePostgres, useTestDatabase } from '../pg'

describePostgres('PostgreSQL migrations', () => {
  const databaseUrl = useTestDatabase()

  it('apply once when five runners start together on an empty database', async () => {
    const clients = Array.from({ length: 5 }, () => new SQL(databaseUrl(), { max: 1 }))
    try {
      expect(await pgMigrationStatus(clients[0]!)).toEqual({ applied: [], pending: embeddedPgMigrations.map((m) => m.tag) })
      const applied = await Promise.all(clients.map((sql) => runPgMigrations(sql)))
      expect(applied.flat()).toEqual(embeddedPgMigrations.map((m) => m.tag))
      const [{ n }] = await clients[0]!`SELECT count(*)::int AS n FROM "__drizzle_migrations"`
      expect(n).toBe(embeddedPgMigrations.length)
      expect(await pgMigrationStatus(clients[0]!)).toEqual({ applied: embeddedPgMigrations.map((m) => m.tag), pending: [] })
    } finally {
      await Promise.all(clients.map((sql) => sql.close()))
    }
  })

  // What keeps a refresh's spend a HOT update in a large table (migration 0016; its effect is
  // measured by bench/scale.ts: bench/README.md, Scale).
  it('leave room on each refresh-token page for the update every row gets (fillfactor 85)', async () => {
    const pg = new SQL(databaseUrl(), { max: 1 })
    try {
      await runPgMigrations(pg)
      const [{ reloptions }] = await pg`SELECT reloptions FROM pg_class WHERE relname = 'refresh_tokens' AND relkind = 'r'`
      expect(reloptions).toEqual(['fillfactor=85'])
    } finally {
      await pg.close()
    }
  })

  it('make the same tables and columns as the SQLite schema', async () => {
    const sqlite = new Database(':memory:')
    runMigrations(sqlite, embeddedMigrations)
    const sqliteColumns = (sqlite.query("SELECT m.name AS t, p.name AS c FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> '__drizzle_migrations'").all() as Array<{ t: string; c: string }>)
      .map(({ t, c }) => `${t}.${c}`)
      .sort()
    sqlite.close()
    const pg = new SQL(databaseUrl(), { max: 1 })
    const pgColumns = (await pg`SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '__drizzle_migrations'`)
      .map(({ t, c }: { t: string; c: string }) => `${t}.${c}`)
      .sort()
    await pg.close()
    expect(pgColumns).toEqual(sqliteColumns)
  })
})
