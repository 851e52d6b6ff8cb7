// What core reports as it decides (a login's outcome, a reset requested), for whoever listens:
// the server's metrics. Core says what happened; nothing outside reverse-engineers it from
// routes and status codes.
export type DomainEvent = { kind: 'login'; outcome: 'succeeded' | 'challenged' | 'failed' | 'limited' | 'overloaded' } | { kind: 'password_reset_requested' } | { kind: 'signup'; outcome: 'requested' | 'completed' }
  | { kind: 'forward_auth'; outcome: 'allowed' | 'denied' | 'sign_in' | 'second_factor' }

/** A minimal in-process event: listeners are called at once, in order. */
export class Signal<T = void> {
  private readonly listeners = new Set<(value: T) => void>()
  notify(value: T) {
    for (const listener of this.listeners) listener(value)
  }
  listen(listener: (value: T) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}
