// Builds the Deps that both the server and the CLI run on, from one Config.
import type { Config } from './config'
import { systemClock, type Clock } from './core/clock'
import type { Deps } from './core/deps'
import { Signal, type DomainEvent } from './core/events'
import { EventLoopMeter } from './core/guards/event-loop-load'
import { PasswordHasher } from './core/accounts/passwords'
import { randomToken } from './core/secrets'
import { GuessTurns } from './core/guards/guess-turns'
import { limitRules } from './core/guards/limits'
import { RefusalTally } from './core/guards/refusals'
import { KeyRing } from './core/sessions/key-ring'
import { openEngine } from './db/engine'

export interface Runtime extends Deps {
  mailQueued: Signal
  /** Migrations applied while opening (empty when the database was current). */
  appliedMigrations: string[]
  /** Read by the hasher; sampled only once the server starts it (serve.ts): a CLI command has
   *  no requests to leave a core for, so it hashes on every thread. */
  eventLoop: EventLoopMeter
  close(): void
}

export async function openRuntime(config: Config, options: { clock?: Clock; migrate?: boolean } = {}): Promise<Runtime> {
  const engine = openEngine(config)
  const appliedMigrations = options.migrate === false ? [] : await engine.migrate()
  const store = engine.createStore()
  const clock = options.clock ?? systemClock
  const eventLoop = new EventLoopMeter()
  const hasher = new PasswordHasher(
    {
      memoryKib: config.argon2MemoryKib,
      timeCost: config.argon2TimeCost,
      concurrency: config.hashConcurrency,
      maxWaitMs: config.hashMaxWaitMs,
      eventLoopShare: () => eventLoop.share,
    },
    () => store.users.passwordHashParameters(),
  )
  return {
    store,
    clock,
    config,
    hasher,
    keyRing: new KeyRing(store.signingKeys, clock, config.accessTokenTtlSec),
    serverKeys: {
      refreshSuccessor: await store.serverSecret('refresh-successor', () => randomToken(32)),
      hmac: await store.serverSecret('hmac', () => randomToken(32)),
      sealing: await store.serverSecret('sealing', () => randomToken(32)),
    },
    mailQueued: new Signal(),
    events: new Signal<DomainEvent>(),
    limitRules: limitRules(config),
    guessTurns: new GuessTurns(),
    refusals: new RefusalTally(),
    appliedMigrations,
    eventLoop,
    close: () => {
      eventLoop.stop()
      hasher.close()
      store.close()
    },
  }
}
