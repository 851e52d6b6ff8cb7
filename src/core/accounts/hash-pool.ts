// Threads that run argon2id for PasswordHasher. Bun.password.hash would also hash off the event
// loop, but on Bun's shared pool at the event loop's own priority: under a login flood the
// hashes then take the CPU from every cheap request (bench/flood.ts on two cores: refresh p99
// 2.9x its calm value, /healthz p99 8.8 ms; on these threads 1.6x and 5.5 ms). Our own threads
// run at the lowest priority (hash-worker.ts), so they take only the CPU the rest of the server
// leaves, and the pool is exactly as large as the hasher's concurrency, so its memory is
// bounded by memoryCost x threads.
//
// This needs refusals to be cheap for the server: a refused login that came straight back
// (clients that ignore Retry-After) took the CPU the starved hashes needed, the queue estimate
// rose and more logins were refused, a loop that held logins at 0.38 of capacity. Refusals are
// therefore held before they leave (server/errors.ts).
export type HashJob =
  | { id: number; op: 'hash'; password: string; memoryKib: number; timeCost: number }
  | { id: number; op: 'verify'; password: string; hash: string }

export type HashResult = { id: number; value: string | boolean; error?: undefined } | { id: number; error: string }

type Pending = { resolve: (value: never) => void; reject: (error: Error) => void }
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

export class HashPool {
  private readonly idle: Worker[] = []
  private readonly queue: Array<{ job: HashJob; pending: Pending }> = []
  private readonly running = new Map<Worker, Pending>()
  private started = 0
  private nextId = 1

  constructor(private readonly size: number) {}

  hash(password: string, memoryKib: number, timeCost: number): Promise<string> {
    return this.run({ op: 'hash', password, memoryKib, timeCost })
  }

  verify(password: string, hash: string): Promise<boolean> {
    return this.run({ op: 'verify', password, hash })
  }

  /** Ends the threads; a job still running is rejected. */
  close(): void {
    for (const worker of [...this.idle, ...this.running.keys()]) worker.terminate()
    for (const pending of this.running.values()) pending.reject(new Error('the hashing pool was closed'))
    this.idle.length = 0
    this.running.clear()
    this.started = 0
  }

  private run<T>(job: DistributiveOmit<HashJob, 'id'>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ job: { ...job, id: this.nextId++ } as HashJob, pending: { resolve: resolve as (value: never) => void, reject } })
      this.dispatch()
    })
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? (this.started < this.size ? this.startWorker() : undefined)
      if (!worker) return
      const { job, pending } = this.queue.shift()!
      this.running.set(worker, pending)
      // A thread at work keeps the process alive until its answer arrives; an idle one does not.
      worker.ref()
      worker.postMessage(job)
    }
  }

  private startWorker(): Worker {
    this.started++
    const worker = new Worker(new URL('./hash-worker.ts', import.meta.url).href)
    worker.onmessage = ({ data }: MessageEvent<HashResult>) => {
      const pending = this.running.get(worker)
      this.running.delete(worker)
      // Idle hashing threads must not keep a CLI command (or a test) alive.
      worker.unref()
      this.idle.push(worker)
      if (data.error !== undefined) pending?.reject(new Error(data.error))
      else pending?.resolve(data.value as never)
      this.dispatch()
    }
    // A thread that dies takes its job with it: fail that job, and start a fresh thread for the next.
    worker.onerror = (event) => {
      event.preventDefault()
      const pending = this.running.get(worker)
      this.running.delete(worker)
      this.started--
      worker.terminate()
      pending?.reject(new Error(`a hashing thread failed: ${event.message}`))
      this.dispatch()
    }
    return worker
  }
}
