// `authd db copy` moves every table: one left out of its list is lost at the move without a
// word (passkeys were, when they were added). The list must name every table of both schemas.
import { describe, expect, it } from 'bun:test'
import { getTableName, is } from 'drizzle-orm'
import { PgTable } from 'drizzle-orm/pg-core'
import { SQLiteTable } from 'drizzle-orm/sqlite-core'
import { TABLES } from '../../src/db/copy'
import * as pgSchema from '../../src/db/pg/schema'
import * as sqliteSchema from '../../src/db/sqlite/schema'

describe('authd db copy', () => {
  it('copies every table of the SQLite and the PostgreSQL schema', () => {
    const sqliteTables = Object.entries(sqliteSchema).filter(([, value]) => is(value, SQLiteTable)).map(([name]) => name)
    const pgTables = Object.entries(pgSchema).filter(([, value]) => is(value, PgTable)).map(([name]) => name)
    expect([...TABLES].sort() as string[]).toEqual(sqliteTables.sort())
    expect([...TABLES].sort() as string[]).toEqual(pgTables.sort())
    // The same names on both sides, so each table goes where its twin is.
    for (const table of TABLES) expect(getTableName(pgSchema[table])).toBe(getTableName(sqliteSchema[table]))
  })

  it('copies the webhook events last: the rows copied before them fire the triggers, whose events are discarded', () => {
    // (groups and their members, with triggers of their own, once came after: the copy made
    // group.created and group.member_added events for groups that were not new)
    expect(TABLES.at(-1)).toBe('webhookEvents')
  })
})
