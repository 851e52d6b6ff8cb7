// Runs the authd CLI as a subprocess: from source, or the compiled binary.
import { join } from 'node:path'

export interface CliResult {
  code: number
  stdout: string
  stderr: string
  /** stdout parsed as JSON (for --json runs). */
  json: any
}

export const SOURCE_CLI = [process.execPath, join(import.meta.dir, '../src/main.ts')]

export function cliRunner(command: string[], dataDir: string, baseEnv: Record<string, string> = {}) {
  return (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): CliResult => {
    const result = Bun.spawnSync([...command, '--data-dir', dataDir, ...args], {
      stdin: options.stdin === undefined ? 'ignore' : new TextEncoder().encode(options.stdin),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', AUTHD_ARGON2_MEMORY_KIB: '64', AUTHD_ARGON2_TIME_COST: '1', ...baseEnv, ...options.env },
    })
    const stdout = result.stdout.toString()
    let json: any
    try {
      json = JSON.parse(stdout)
    } catch {
      json = undefined
    }
    return { code: result.exitCode ?? -1, stdout, stderr: result.stderr.toString(), json }
  }
}
