// Every SQL text the stores run, for whoever asks: test/query-plans.test.ts EXPLAINs each one
// the request paths issue, on both engines. Nobody asks in production: drizzle calls a logger
// on every query anyway (its default one does nothing), and this one checks a null.
import type { Logger } from 'drizzle-orm/logger'

type Observer = (sql: string, params?: readonly unknown[]) => void

let observer: Observer | null = null

/** Starts (or, with null, stops) handing every SQL text run from now on to `fn`. */
export function observeQueries(fn: Observer | null) {
  observer = fn
}

/** Tells the observer, if any, of a SQL text about to run (or be prepared, for SQLite's raw statements). */
export function noteQuery(sql: string, params?: readonly unknown[]) {
  observer?.(sql, params)
}

export const isObserved = () => observer !== null

/** drizzle's logger hook: its queries, in transactions too. */
export const queryLogger: Logger = { logQuery: (sql, params) => observer?.(sql, params) }
