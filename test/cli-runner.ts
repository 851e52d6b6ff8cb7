// Runs the authd CLI as a subprocess: from source, or the compiled binary. Asynchronously:
// a synchronous spawn would block this process, and with it the SMTP server tests run here.
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
  return async (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<CliResult> => {
    const proc = Bun.spawn([...command, '--data-dir', dataDir, ...args], {
      stdin: options.stdin === undefined ? 'ignore' : new TextEncoder().encode(options.stdin),
      stdout: 'pipe',
      stderr: 'pipe',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', AUTHD_ARGON2_MEMORY_KIB: '64', AUTHD_ARGON2_TIME_COST: '1', ...baseEnv, ...options.env },
    })
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    let json: any
    try {
      json = JSON.parse(stdout)
    } catch {
      json = undefined
    }
    return { code, stdout, stderr, json }
  }
}
