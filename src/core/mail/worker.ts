// Runs deliverDue in the server: woken at once when a request queues mail, and otherwise
// polling, so retries, mail queued by the CLI or by another instance, and leases of a
// crashed sender are all picked up.
import type { Logger } from '../../log'
import { deliverDue, type DeliveryOutcome, type MailTransport } from './outbox'
import type { Deps } from '../deps'

export class MailWorker {
  private running = false
  private loop: Promise<void> | undefined
  private wakeUp: (() => void) | undefined

  constructor(
    private readonly deps: Pick<Deps, 'store' | 'clock' | 'config'>,
    private readonly transport: MailTransport,
    private readonly logger: Logger,
    private readonly observe?: (outcome: DeliveryOutcome) => void,
    private readonly pollMs = 1000,
  ) {}

  start() {
    this.running = true
    this.loop = this.run()
  }

  wake() {
    this.wakeUp?.()
  }

  /** Finishes the message in hand, then stops. */
  async stop() {
    this.running = false
    this.wake()
    await this.loop
  }

  private async run() {
    while (this.running) {
      try {
        await deliverDue(this.deps, this.transport, this.logger, this.observe)
      } catch (error) {
        // The database may be briefly unavailable; the next round tries again.
        this.logger.log('error', 'mail worker error', { error: error instanceof Error ? error.message : String(error) })
      }
      if (!this.running) break
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollMs)
        this.wakeUp = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
  }
}
