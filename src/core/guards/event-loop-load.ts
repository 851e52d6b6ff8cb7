// How much of a core the event loop has used lately, read from the kernel's scheduler
// statistics for the main thread (Linux's /proc/<pid>/task/<pid>/schedstat: nanoseconds on a
// CPU). The hashing threads run at the lowest priority, yet two argon2 passes on a two-core
// machine still lengthen every request's tail (bench/README.md): while the loop is this busy,
// the hasher leaves it a core (passwords.ts).
//
// It is sampled on a timer, not when a hash is asked for: read lazily, the first reading after
// a gap could only average the whole gap, which is wrong both ways (a login flood after calm
// but busy traffic began with every slot; a login rush a few seconds after such traffic began
// with a slot fewer).
import { readFileSync } from 'node:fs'

/** How often the counter is read: ~10 µs a reading. */
const SAMPLE_MS = 100
/** The share is smoothed over about this long, so a burst of requests arriving at once (which
 *  keeps the loop busy for one window) does not take a hashing slot from those very requests,
 *  while a sustained load is seen within a third of a second (and its end within one). */
const SMOOTHING_MS = 500

export class EventLoopMeter {
  private last: { atMs: number; runNs: number } | undefined
  private smoothed: number | undefined
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly path = `/proc/${process.pid}/task/${process.pid}/schedstat`,
    private readonly now = () => performance.now(),
  ) {
    const runNs = this.readRunNs()
    if (runNs !== undefined) {
      this.last = { atMs: now(), runNs }
      this.smoothed = 0
    }
  }

  /** The event loop's recent share of one core (0 to 1), or undefined where the kernel does
   *  not say (not Linux, no /proc). */
  get share(): number | undefined {
    return this.smoothed
  }

  /** Samples every 100 ms until stop(); the timer does not keep the process alive. */
  start(): this {
    if (this.last && !this.timer) {
      this.timer = setInterval(() => this.sample(), SAMPLE_MS)
      this.timer.unref()
    }
    return this
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  /** Reads the counter and folds the time since the last reading into the share. */
  sample(): void {
    if (!this.last) return
    const atMs = this.now()
    const runNs = this.readRunNs()
    const elapsedMs = atMs - this.last.atMs
    if (runNs === undefined || elapsedMs <= 0) return
    const windowShare = Math.min(1, (runNs - this.last.runNs) / 1e6 / elapsedMs)
    // An exponential average in time: a late timer's longer window weighs more.
    this.smoothed = this.smoothed! + (1 - Math.exp(-elapsedMs / SMOOTHING_MS)) * (windowShare - this.smoothed!)
    this.last = { atMs, runNs }
  }

  private readRunNs(): number | undefined {
    try {
      const runNs = Number(readFileSync(this.path, 'latin1').split(' ', 1)[0])
      return Number.isFinite(runNs) ? runNs : undefined
    } catch {
      return undefined
    }
  }
}
