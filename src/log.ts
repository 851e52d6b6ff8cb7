// Structured logs: one JSON object per line. Callers pass fields, never secrets: passwords,
// OTPs, tokens and keys are not handed to the logger at all.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void
}

export function jsonLogger(write: (line: string) => void = (line) => process.stdout.write(line + '\n')): Logger {
  return {
    log(level, msg, fields) {
      write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }))
    },
  }
}

export const silentLogger: Logger = { log() {} }
