import type { Db } from './client'

/** Runs `fn` in BEGIN IMMEDIATE: the write lock is taken up front, so the transaction
 *  waits (busy timeout) for another writer instead of failing half-way. */
export const immediate = <T>(db: Db, fn: () => T): T => db.$client.transaction(fn).immediate()

/** bun:sqlite returns { changes } from run(); drizzle's types say void. */
export const changesOf = (result: unknown): number => (result as { changes: number }).changes

export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && /UNIQUE constraint failed/.test(error.message)
}
