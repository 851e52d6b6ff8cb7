// How much of a core the event loop has used lately, read from the kernel's scheduler
// statistics for the main thread (Linux's /proc/<pid>/task/<pid>/schedstat: nanoseconds on a
// CPU). The hashing threads run at the lowest priority, yet two argon2 passes on a two-core
// machine still lengthen every request's tail (bench/README.md): while the loop is this busy,
// the hasher leaves it a core (passwords.ts).
import { readFileSync } from 'node:fs'

/** Readings closer together than this reuse the last share: it is a rate, not a snapshot. */
const WINDOW_MS = 100
/** The share is smoothed over about this long, so a burst of requests arriving at once (which
 *  keeps the loop busy for one window) does not take a hashing slot from those very requests,
 *  while a sustained load is seen within a third of a second (and its end within one). */
const SMOOTHING_MS = 500

/** After this long without a reading, the average over the gap says little about the loop
 *  now (a login rush after a minute of other traffic would start with a slot fewer): the
 *  share starts again from quiet, and the next window reads the loop afresh. */
const STALE_MS = 1_000

/** Returns a function that answers the event loop's recent share of one core (0 to 1), or
 *  undefined where the kernel does not say (not Linux, no /proc). */
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
    const elapsedMs = atMs - last.atMs
    if (elapsedMs < WINDOW_MS) return share
    const runNs = readRunNs()
    if (runNs === undefined) return undefined
    const windowShare = Math.min(1, (runNs - last.runNs) / 1e6 / elapsedMs)
    // An exponential average in time, over readings that come every 100 ms or so under load.
    share = elapsedMs > STALE_MS ? 0 : share! + (1 - Math.exp(-elapsedMs / SMOOTHING_MS)) * (windowShare - share!)
    last = { atMs, runNs }
    return share
  }
}
