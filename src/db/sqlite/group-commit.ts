// Group commit for SQLite. With synchronous=FULL every commit waits for an fsync, and one
// transaction per request made the fsync the cost of a refresh. Write transactions queued in
// the same turn of the event loop run together instead: one BEGIN IMMEDIATE, a savepoint
// per transaction, one COMMIT (one fsync), and only then is any of them answered. Durability
// is unchanged (nothing is acknowledged before its commit is on disk), and isolation per
// request is kept: a transaction that throws is rolled back to its savepoint and fails alone.
//
// bun:sqlite is synchronous, so a batch runs start to finish without yielding: no read on
// this connection ever sees a batch half-done. While one batch's fsync blocks, requests keep
// arriving; they form the next batch.
import type { Database, Statement } from 'bun:sqlite'
import { writeSync } from 'node:fs'

interface Job {
  work: () => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

/** At most this many transactions share a commit, so one burst does not hold the lock long. */
const MAX_BATCH = 256

export class GroupCommit {
  private queue: Job[] = []
  private scheduled = false
  /** Batches committed and transactions in them, for tests and the bench. */
  readonly stats = { batches: 0, transactions: 0 }

  constructor(
    private readonly client: Database,
    /** Fault injection for the crash test only: a batch of at least this many transactions is
     *  held before its COMMIT (0: never), so the process can be killed in the middle of one. */
    private readonly holdBatchesOf = Number(process.env.AUTHD_TEST_HOLD_BATCH_OF ?? 0),
  ) {}

  /** Runs `work` (synchronous) in the next batch; resolves once its batch is committed. */
  run<T>(work: () => T): Promise<T> {
    // Inside a running batch (a transaction started from within another's work), nest.
    if (this.client.inTransaction) return Promise.resolve(this.client.transaction(work)())
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(() => this.flush())
      }
    })
  }

  private flush() {
    this.scheduled = false
    const batch = this.queue.splice(0, MAX_BATCH)
    if (this.queue.length > 0) {
      this.scheduled = true
      setImmediate(() => this.flush())
    }
    let outcomes: Outcome[]
    try {
      outcomes = this.commit(batch)
    } catch (error) {
      // BEGIN or COMMIT failed (the lock not had within busy_timeout, a full disk): nothing
      // of the batch is on disk, so every one of its transactions fails.
      for (const job of batch) job.reject(error)
      return
    }
    batch.forEach((job, i) => {
      const outcome = outcomes[i]!
      if (outcome.ok) job.resolve(outcome.value)
      else job.reject(outcome.error)
    })
  }

  private statements?: Record<'begin' | 'savepoint' | 'release' | 'rollbackTo' | 'commit', Statement>

  private commit(batch: Job[]): Outcome[] {
    const { client } = this
    const sql = (this.statements ??= {
      begin: client.prepare('BEGIN IMMEDIATE'),
      savepoint: client.prepare('SAVEPOINT job'),
      release: client.prepare('RELEASE job'),
      rollbackTo: client.prepare('ROLLBACK TO job'),
      commit: client.prepare('COMMIT'),
    })
    sql.begin.run()
    try {
      const outcomes = batch.map((job): Outcome => {
        sql.savepoint.run()
        try {
          const value = job.work()
          sql.release.run()
          return { ok: true, value }
        } catch (error) {
          sql.rollbackTo.run()
          sql.release.run()
          return { ok: false, error }
        }
      })
      if (this.holdBatchesOf > 0 && batch.length >= this.holdBatchesOf) holdBeforeCommit(batch.length)
      sql.commit.run()
      this.stats.batches++
      this.stats.transactions += batch.length
      return outcomes
    } catch (error) {
      if (client.inTransaction) client.run('ROLLBACK')
      throw error
    }
  }
}

/** Blocks the thread for a minute, as a batch in progress does, after saying so on stderr. */
function holdBeforeCommit(transactions: number) {
  writeSync(2, `authd-test: batch of ${transactions} held before COMMIT\n`)
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000)
}

const committers = new WeakMap<Database, GroupCommit>()

/** The group commit of this connection (one per connection: batches share its transaction). */
export function groupCommitOf(client: Database): GroupCommit {
  let committer = committers.get(client)
  if (!committer) committers.set(client, (committer = new GroupCommit(client)))
  return committer
}
