// The body of one hashing thread (see hash-pool.ts). It runs argon2id synchronously, one job at
// a time, at the lowest CPU priority: hashing then takes only the CPU the event loop leaves, so
// a login flood slows logins down instead of every other request.
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import type { HashJob, HashResult } from './hash-pool'

declare const self: Worker

lowerOwnPriority()

self.onmessage = ({ data: job }: MessageEvent<HashJob>) => {
  let result: HashResult
  try {
    const value =
      job.op === 'hash'
        ? Bun.password.hashSync(job.password, { algorithm: 'argon2id', memoryCost: job.memoryKib, timeCost: job.timeCost })
        : Bun.password.verifySync(job.password, job.hash)
    result = { id: job.id, value }
  } catch (error) {
    // The message only: a job's password must not travel back inside an error.
    result = { id: job.id, error: error instanceof Error ? error.message : 'hashing failed' }
  }
  postMessage(result)
}

/** Linux gives each thread its own nice value, addressed by its thread id, which
 *  /proc/thread-self names. Elsewhere (or without /proc) the thread keeps the default. */
function lowerOwnPriority() {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, 19)
  } catch {
    // No per-thread priority here: hashing competes with the event loop as an equal.
  }
}
