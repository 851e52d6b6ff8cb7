// Structured logs: one JSON object per line. Callers pass fields, never secrets: passwords,
// OTPs, tokens and keys are not handed to the logger at all.
import { writeSync } from 'node:fs'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void
  /** Writes out lines still held back (before other output to the same stream). */
  flush?(): void
}

export function jsonLogger(write: LineWriter = stdoutLines()): Logger {
  return {
    log(level, msg, fields) {
      write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }))
    },
    flush: write.flush,
  }
}

type LineWriter = ((line: string) => void) & { flush?: () => void }

/**
 * Lines to stdout, gathered and written once per turn of the event loop: a write per request
 * line cost a sixth of a health check's time under load. Whatever is pending when the process
 * exits is written then, so a line is lost only to kill -9.
 */
export function stdoutLines(): LineWriter {
  let pending: string[] = []
  const take = () => {
    const text = pending.length === 0 ? '' : pending.join('\n') + '\n'
    pending = []
    return text
  }
  const flush = () => {
    const text = take()
    if (text) process.stdout.write(text)
  }
  process.on('exit', () => writeAtExit(take()))
  const write = (line: string) => {
    if (pending.push(line) === 1) setImmediate(flush)
  }
  return Object.assign(write, { flush })
}

/** At exit only synchronous writes happen; a pipe may take a large buffer in parts. */
function writeAtExit(text: string) {
  let buffer = Buffer.from(text)
  for (let tries = 0; buffer.length > 0 && tries < 10_000; tries++) {
    try {
      buffer = buffer.subarray(writeSync(1, buffer))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return
    }
  }
}

export const silentLogger: Logger = { log() {} }
