// A consistent online copy of the database: VACUUM INTO reads one snapshot (a read
// transaction, so the server keeps writing meanwhile) and writes a compact, self-contained
// database file, with no WAL beside it to copy.
import { Database } from 'bun:sqlite'
import { existsSync, renameSync, rmSync, statSync } from 'node:fs'

export function backupDatabase(databasePath: string, target: string): { bytes: number } {
  if (!existsSync(databasePath)) throw new Error(`no database at ${databasePath}`)
  const db = new Database(databasePath, { readonly: true })
  // Written under a temporary name and renamed: a half-written file never carries the name.
  const partial = `${target}.partial`
  rmSync(partial, { force: true })
  try {
    db.run('PRAGMA busy_timeout = 5000')
    db.prepare('VACUUM INTO ?').run(partial)
  } finally {
    db.close()
  }
  renameSync(partial, target)
  return { bytes: statSync(target).size }
}
