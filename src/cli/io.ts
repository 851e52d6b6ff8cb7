// How every command talks to its user: one JSON document on stdout with --json, readable
// lines otherwise; prompts only on a TTY, and every prompt also has a flag.
import { isCancel, password as promptPassword, text as promptText } from '@clack/prompts'

export class CliError extends Error {}
/** The command was called wrongly (a required option missing): exit 2, as commander's own usage errors. */
export class UsageError extends CliError {}

export interface Output {
  json: boolean
  /** Prints `data` as JSON with --json, else the human lines. */
  result(data: unknown, human: () => string | string[]): void
}

export function createOutput(json: boolean, write: (s: string) => void = (s) => process.stdout.write(s)): Output {
  return {
    json,
    result(data, human) {
      if (json) return write(JSON.stringify(data, null, 2) + '\n')
      const lines = human()
      write((Array.isArray(lines) ? lines.join('\n') : lines) + '\n')
    },
  }
}

const interactive = (out: Output) => !out.json && process.stdin.isTTY === true && process.stdout.isTTY === true

/** The flag's value, or a prompt for it on a TTY, or an error naming the flag. */
export async function required(out: Output, value: string | undefined, flag: string, message: string): Promise<string> {
  if (value !== undefined && value !== '') return value
  if (!interactive(out)) throw new UsageError(`missing required option ${flag}`)
  const answer = await promptText({ message, validate: (v) => (v ? undefined : 'required') })
  if (isCancel(answer)) throw new CliError('cancelled')
  return answer
}

/** A password from standard input (--password-stdin): the whole input, less one trailing newline. */
export async function readPasswordFromStdin(): Promise<string> {
  const input = await new Response(Bun.stdin.stream()).text()
  const password = input.replace(/\r?\n$/, '')
  if (password === '') throw new CliError('--password-stdin: standard input was empty')
  return password
}

export async function promptNewPassword(message: string): Promise<string> {
  const answer = await promptPassword({ message })
  if (isCancel(answer)) throw new CliError('cancelled')
  return answer
}

export function table(rows: Record<string, unknown>[], columns: string[]): string[] {
  if (rows.length === 0) return ['(none)']
  const cells = rows.map((row) => columns.map((c) => (row[c] === null || row[c] === undefined ? '-' : String(row[c]))))
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)))
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd()
  return [line(columns), ...cells.map(line)]
}

export const isoTime = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
