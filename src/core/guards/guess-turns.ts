// Guesses at one account take turns within a process. A reservation (limits.ts) counts a guess
// as a failure until it is judged, so guesses in flight at once would meet the back-off as if
// they had all failed: eight simultaneous right logins of one account would have found it
// blocked after the fifth. Taking turns, a burst is judged exactly as the same guesses in a
// row would be (wrong ones until the back-off refuses, right ones all through), while the
// reservation still holds the count across processes and instances. Turns are cheap once the
// back-off blocks (a refusal reads one row), so a queue drains fast; still, past MAX_WAITING
// guesses queued for one account a guess is refused at once, so a flood cannot pile up held
// connections without end. A trusted device queues apart (account-guesses.ts inAccountTurn).
import { tooManyRequests } from '../errors'

const MAX_WAITING = 256

export class GuessTurns {
  private readonly tails = new Map<string, { tail: Promise<void>; waiting: number }>()

  /** Runs `work` once the guesses queued before it for `account` are judged. */
  async inTurn<T>(account: string, work: () => Promise<T>): Promise<T> {
    const queue = this.tails.get(account) ?? { tail: Promise.resolve(), waiting: 0 }
    if (queue.waiting >= MAX_WAITING) throw tooManyRequests(1000)
    const previous = queue.tail
    let release!: () => void
    const mine = new Promise<void>((resolve) => (release = resolve))
    queue.tail = previous.then(() => mine)
    queue.waiting++
    this.tails.set(account, queue)
    await previous
    try {
      return await work()
    } finally {
      release()
      if (--queue.waiting === 0) this.tails.delete(account)
    }
  }
}
