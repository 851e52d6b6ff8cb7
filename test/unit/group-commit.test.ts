// Group commit (src/db/group-commit.ts): transactions of one turn share a commit, each is
// answered only once that commit is durable, and one that fails fails alone.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GroupCommit } from '../../src/db/sqlite/group-commit'

let dir: string
let db: Database
let other: Database
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'authd-group-commit-'))
  db = new Database(join(dir, 'a.db'))
  db.run('PRAGMA journal_mode = WAL')
  db.run('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)')
  other = new Database(join(dir, 'a.db'))
})
afterEach(() => {
  db.close()
  other.close()
  rmSync(dir, { recursive: true, force: true })
})

const insert = (id: number) => () => db.run('INSERT INTO t (id, v) VALUES (?, ?)', [id, `v${id}`])
const visibleToOthers = (id: number) => other.query('SELECT v FROM t WHERE id = ?').get(id) !== null

describe('group commit', () => {
  it('commits the transactions of one turn together, and fails only the one that throws', async () => {
    const commit = new GroupCommit(db)
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map((id) =>
      commit.run(() => {
        insert(id)()
        if (id === 3) throw new Error('refused')
        return id
      }),
    ))
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'])
    expect((results[2] as PromiseRejectedResult).reason.message).toBe('refused')
    expect(other.query('SELECT id FROM t ORDER BY id').all()).toEqual([{ id: 1 }, { id: 2 }, { id: 4 }, { id: 5 }])
    expect(commit.stats).toEqual({ batches: 1, transactions: 5 })
  })

  it('answers a transaction only when its commit is visible to every other connection', async () => {
    const commit = new GroupCommit(db)
    const seenWhenAnswered = await Promise.all([1, 2, 3].map((id) => commit.run(insert(id)).then(() => [1, 2, 3].map(visibleToOthers))))
    expect(seenWhenAnswered).toEqual([[true, true, true], [true, true, true], [true, true, true]])
  })

  it('fails every transaction of a batch whose commit cannot happen, and keeps none of them', async () => {
    db.run('PRAGMA busy_timeout = 50')
    other.run('BEGIN IMMEDIATE') // another process holds the write lock past the busy timeout
    const commit = new GroupCommit(db)
    const results = await Promise.allSettled([1, 2].map((id) => commit.run(insert(id))))
    other.run('ROLLBACK')
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect((results[0] as PromiseRejectedResult).reason.message).toContain('locked')
    expect(other.query('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 })
    // and the next batch goes through
    await commit.run(insert(3))
    expect(visibleToOthers(3)).toBe(true)
  })

  it('runs a transaction started from inside another as part of it', async () => {
    const commit = new GroupCommit(db)
    const inner: Promise<unknown>[] = []
    await commit.run(() => {
      insert(1)()
      inner.push(commit.run(insert(2)))
    })
    await Promise.all(inner)
    expect(commit.stats).toEqual({ batches: 1, transactions: 1 })
    expect(other.query('SELECT count(*) AS n FROM t').get()).toEqual({ n: 2 })
  })
})
