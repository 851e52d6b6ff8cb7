// Password hashing: argon2id through Bun.password, which hashes on Bun's worker threads, so
// the event loop stays free. Concurrency is bounded (each hash holds `memoryCost` KiB, so
// memory is bounded too), and so is the queue behind it, by time: when the work already
// queued would keep a new login waiting longer than `maxWaitMs`, it is refused at once
// (503 + Retry-After) instead of hanging for many seconds.
import { serviceUnavailable } from './errors'
import { randomToken } from './secrets'

export interface HasherOptions {
  memoryKib: number
  timeCost: number
  concurrency: number
  maxWaitMs: number
  /** The guess of one hash's duration until real ones are measured. */
  initialEstimateMs?: number
}

export class PasswordHasher {
  private active = 0
  private readonly waiting: Array<() => void> = []
  private dummyHash: Promise<string> | undefined
  /** A moving average of how long one hash takes here. */
  private averageMs: number

  constructor(private readonly options: HasherOptions) {
    this.averageMs = options.initialEstimateMs ?? 50
  }

  /** How many hashes are running and waiting (for metrics and tests). */
  get load() {
    return { active: this.active, waiting: this.waiting.length, averageMs: this.averageMs }
  }

  hash(password: string): Promise<string> {
    return this.limited(() =>
      Bun.password.hash(password, {
        algorithm: 'argon2id',
        memoryCost: this.options.memoryKib,
        timeCost: this.options.timeCost,
      }),
    )
  }

  verify(password: string, hash: string): Promise<boolean> {
    return this.limited(() => Bun.password.verify(password, hash))
  }

  /** Costs one verification and always fails: for accounts that do not exist, so a login
   *  for an unknown e-mail takes as long as one for a known e-mail with a wrong password. */
  async verifyDummy(password: string): Promise<false> {
    this.dummyHash ??= this.hash(randomToken())
    await this.verify(password, await this.dummyHash)
    return false
  }

  /** Starts computing the dummy hash now, so the first unknown-e-mail login is not slower. */
  warmUp(): Promise<unknown> {
    this.dummyHash ??= this.hash(randomToken())
    return this.dummyHash
  }

  /** True when `hash` was made with another algorithm or other parameters than ours. */
  needsRehash(hash: string): boolean {
    const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=\d+\$/.exec(hash)
    return !match || Number(match[1]) !== this.options.memoryKib || Number(match[2]) !== this.options.timeCost
  }

  /** Throws the 503 a new hash would get now: lets a login shed load before doing any other work. */
  assertCapacity(): void {
    if (this.active < this.options.concurrency) return
    const expectedWaitMs = Math.ceil((this.waiting.length + 1) / this.options.concurrency) * this.averageMs
    if (expectedWaitMs > this.options.maxWaitMs) throw serviceUnavailable(Math.max(1, Math.ceil(expectedWaitMs / 1000)))
  }

  private async limited<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.options.concurrency) {
      this.assertCapacity()
      // The finishing task hands its slot straight to us, so `active` is not decremented.
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    } else {
      this.active++
    }
    const started = performance.now()
    try {
      return await work()
    } finally {
      this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - started)
      const next = this.waiting.shift()
      if (next) next()
      else this.active--
    }
  }
}
