// Password hashing: argon2id on our own low-priority threads (hash-pool.ts), so the event
// loop stays free, and on one thread fewer while the loop is busy (event-loop-load.ts).
// Concurrency is bounded (each hash holds `memoryCost` KiB, so memory is bounded too), and so
// is the queue behind it, by time: when the work already queued would keep a new login
// waiting longer than `maxWaitMs`, it is refused without waiting for a slot (503 +
// Retry-After; the server holds that answer 250 ms, server/errors.ts) instead of hanging for
// many seconds.
import { serviceUnavailable } from '../errors'
import { HashPool } from './hash-pool'
import { randomToken } from '../secrets'

export interface HasherOptions {
  memoryKib: number
  timeCost: number
  concurrency: number
  maxWaitMs: number
  /** The guess of one hash's duration until real ones are measured. */
  initialEstimateMs?: number
  /** The event loop's recent share of a core (event-loop-load.ts); undefined where unknown. */
  eventLoopShare?: () => number | undefined
  /** A monotonic clock in ms (tests move it past the parameter mix's lifetime). */
  now?: () => number
}

/** From this share of a core on, the event loop is busy serving other requests, and the
 *  hasher leaves it a core. A pure login load keeps the loop near 0.1 (bench/README.md). */
const BUSY_LOOP_SHARE = 0.25

/** How many stored hashes use each parameter set (`m=19456,t=2,p=1`). */
export type ParameterMix = Array<{ parameters: string; count: number }>

/** The parameters of an argon2id hash (`m=…,t=…,p=…`), or null for another format. */
export function hashParameters(hash: string): string | null {
  return /^\$argon2id\$v=19\$(m=\d+,t=\d+,p=\d+)\$/.exec(hash)?.[1] ?? null
}

/** How long a read of the stored parameter mix is reused. */
const MIX_TTL_MS = 10 * 60_000

export class PasswordHasher {
  private active = 0
  private readonly waiting: Array<() => void> = []
  /** Dummy hashes by parameter set. */
  private readonly dummyHashes = new Map<string, Promise<string>>()
  private mix: { read: Promise<ParameterMix>; at: number } | undefined
  /** A moving average of how long one hash takes here. */
  private averageMs: number
  private readonly pool: HashPool

  /**
   * @param loadMix reads how many stored hashes use each parameter set (the store), so a
   *   login for an unknown address can cost what a stored hash costs.
   */
  constructor(
    private readonly options: HasherOptions,
    private readonly loadMix: () => Promise<ParameterMix> = async () => [],
  ) {
    this.averageMs = options.initialEstimateMs ?? 50
    this.pool = new HashPool(options.concurrency)
  }

  /** Ends the hashing threads. */
  close(): void {
    this.pool.close()
  }

  private get currentParameters(): string {
    return `m=${this.options.memoryKib},t=${this.options.timeCost},p=1`
  }

  /** How many hashes are running and waiting, and how many may run now (for metrics and tests). */
  get load() {
    return { active: this.active, waiting: this.waiting.length, slots: this.slots(), averageMs: this.averageMs }
  }

  hash(password: string): Promise<string> {
    return this.limited(() => this.pool.hash(password, this.options.memoryKib, this.options.timeCost))
  }

  verify(password: string, hash: string): Promise<boolean> {
    return this.limited(() => this.pool.verify(password, hash))
  }

  /**
   * Costs one verification and always fails: for addresses that do not exist, so a login for
   * an unknown address takes as long as one for a known address with a wrong password.
   *
   * A verification costs what the stored hash's parameters say. After AUTHD_ARGON2_* are
   * raised, most stored hashes keep the old ones until their users log in, so a dummy at the
   * new parameters alone would make unknown addresses several times slower than real ones.
   * The dummy's parameters are therefore drawn from the mix of stored hashes, weighted by how
   * many use each, and fixed per address by `seed` (a keyed hash of it, in [0, 1)): an
   * unknown address looks like a registered one whose hash has those parameters, in the same
   * proportions as the real accounts.
   */
  async verifyDummy(password: string, seed: number): Promise<false> {
    const parameters = pickParameters(await this.parameterMix(), seed) ?? this.currentParameters
    await this.verify(password, await this.dummyHash(parameters))
    return false
  }

  /** Reads the parameter mix and makes the dummy hashes now, so the first unknown-address
   *  login is not slower than the others. */
  async warmUp(): Promise<unknown> {
    const sets = new Set([this.currentParameters, ...(await this.parameterMix()).map((m) => m.parameters)])
    return Promise.all([...sets].map((parameters) => this.dummyHash(parameters)))
  }

  /** The mix as last read. Past its TTL it is read again in the background and the last read
   *  answers meanwhile: the read goes through every user (a second or more for a million),
   *  and no login should wait for it, nor take longer than the others for it. */
  private parameterMix(): Promise<ParameterMix> {
    const clock = this.options.now ?? (() => performance.now())
    const now = clock()
    if (!this.mix) {
      this.mix = { read: this.loadMix().catch(() => []), at: now }
    } else if (now - this.mix.at > MIX_TTL_MS) {
      const current = this.mix
      current.at = now // one read again at a time
      this.loadMix().then(
        (mix) => {
          if (this.mix === current) this.mix = { read: Promise.resolve(mix), at: clock() }
        },
        () => {},
      )
    }
    return this.mix.read
  }

  private dummyHash(parameters: string): Promise<string> {
    let hash = this.dummyHashes.get(parameters)
    if (!hash) {
      const [, m, t] = /^m=(\d+),t=(\d+),p=\d+$/.exec(parameters)!
      hash = this.limited(() => this.pool.hash(randomToken(), Number(m), Number(t)))
      this.dummyHashes.set(parameters, hash)
      // A failed one (a hashing thread died, the pool closed) is made again next time, not kept:
      // else every later unknown-address login would fail.
      hash.catch(() => this.dummyHashes.delete(parameters))
    }
    return hash
  }

  /** True when `hash` was made with another algorithm or other parameters than ours. */
  needsRehash(hash: string): boolean {
    return hashParameters(hash) !== this.currentParameters
  }

  /** How many hashes may run now: all of `concurrency`, or one fewer while the event loop is
   *  busy, so the requests it serves keep a core of their own (a flood slows logins, not
   *  every request). */
  private slots(): number {
    const { concurrency, eventLoopShare } = this.options
    if (concurrency < 2) return concurrency
    return (eventLoopShare?.() ?? 0) >= BUSY_LOOP_SHARE ? concurrency - 1 : concurrency
  }

  /** Throws the 503 a new hash would get now: lets a login shed load before doing any other work. */
  assertCapacity(): void {
    const slots = this.slots()
    if (this.active < slots) return
    const expectedWaitMs = Math.ceil((this.waiting.length + 1) / slots) * this.averageMs
    if (expectedWaitMs > this.options.maxWaitMs) throw serviceUnavailable(Math.max(1, Math.ceil(expectedWaitMs / 1000)))
  }

  private async limited<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.slots()) {
      this.assertCapacity()
      // Whoever releases a slot hands it to us, with `active` already counting us.
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    } else {
      this.active++
    }
    const started = performance.now()
    try {
      return await work()
    } finally {
      this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - started)
      this.active--
      for (let slots = this.slots(); this.active < slots && this.waiting.length > 0; this.active++) this.waiting.shift()!()
    }
  }
}

/** The parameter set at `seed` (in [0, 1)) of the mix, each set weighted by its count. */
export function pickParameters(mix: ParameterMix, seed: number): string | null {
  const sets = mix.filter((m) => m.count > 0 && /^m=\d+,t=\d+,p=\d+$/.test(m.parameters)).sort((a, b) => a.parameters.localeCompare(b.parameters))
  const total = sets.reduce((sum, m) => sum + m.count, 0)
  let target = seed * total
  for (const set of sets) {
    if (target < set.count) return set.parameters
    target -= set.count
  }
  return sets.at(-1)?.parameters ?? null
}
