// How much of a core the event loop has used lately, read from the kernel's scheduler
// statistics for the main thread (Linux's /proc/<pid>/task/<pid>/schedstat: nanoseconds on a
// CPU). The hashing threads run at the lowest priority, yet two argon2 passes on a two-core
// machine still lengthen every request's tail (their memory traffic, the scheduler's slices):
// with the loop this busy, the hasher leaves it a core (passwords.ts).
import { readFileSync } from 'node:fs'

/** Readings closer together than this reuse the last share: it is a rate, not a snapshot. */
const WINDOW_MS = 100

/** Returns a function that answers the event loop's share of one core since its previous
 *  reading (0 to 1), or undefined where the kernel does not say (not Linux, no /proc). */
export function eventLoopShareMeter({
  path = `/proc/${process.pid}/task/${process.pid}/schedstat`,
  now = () => performance.now(),
}: { path?: string; now?: () => number } = {}): () => number | undefined {
  const readRunNs = (): number | undefined => {
    try {
      const runNs = Number(readFileSync(path, 'latin1').split(' ', 1)[0])
      return Number.isFinite(runNs) ? runNs : undefined
    } catch {
      return undefined
    }
  }
  let last = { atMs: now(), runNs: readRunNs() }
  let share: number | undefined = last.runNs === undefined ? undefined : 0
  return () => {
    if (last.runNs === undefined) return undefined
    const atMs = now()
    if (atMs - last.atMs < WINDOW_MS) return share
    const runNs = readRunNs()
    if (runNs === undefined) return undefined
    share = Math.min(1, (runNs - last.runNs) / 1e6 / (atMs - last.atMs))
    last = { atMs, runNs }
    return share
  }
}
