// How every command talks to its user: one JSON document on stdout with --json, readable
// lines otherwise; prompts only on a TTY, and every prompt also has a flag.
import { confirm as promptConfirm, isCancel, log, password as promptPassword, text as promptText } from '@clack/prompts'
import { AppError } from '../core/errors'

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

/** Whether the command may ask: a terminal on both ends, and no --json. */
export const interactive = (out: Output) => !out.json && process.stdin.isTTY === true && process.stdout.isTTY === true

/** The flag's value, or a prompt for it on a TTY, or an error naming the flag. */
export async function required(out: Output, value: string | undefined, flag: string, message: string): Promise<string> {
  if (value !== undefined && value !== '') return value
  if (!interactive(out)) throw new UsageError(`missing required option ${flag}`)
  const answer = await promptText({ message, validate: (v) => (v ? undefined : 'required') })
  if (isCancel(answer)) throw new CliError('cancelled')
  return answer
}

/** A secret from standard input (--password-stdin, --client-secret-stdin): the whole input, less one trailing newline. */
export async function readSecretFromStdin(flag: string): Promise<string> {
  const input = await new Response(Bun.stdin.stream()).text()
  const secret = input.replace(/\r?\n$/, '')
  if (secret === '') throw new CliError(`${flag}: standard input was empty`)
  return secret
}

/** A password from standard input (--password-stdin). */
export const readPasswordFromStdin = () => readSecretFromStdin('--password-stdin')

/** A secret typed on a terminal, not shown as it is typed. */
export async function promptSecret(message: string): Promise<string> {
  const answer = await promptPassword({ message, validate: (v) => (v ? undefined : 'required') })
  if (isCancel(answer)) throw new CliError('cancelled')
  return answer
}

/**
 * A yes/no question before something that cannot be undone, asked on a terminal (no is the
 * default); off one, or with --json, the command stops with `refusal` (which names --yes).
 */
export async function confirmOrStop(out: Output, question: string, refusal: string): Promise<void> {
  if (!interactive(out)) throw new UsageError(refusal)
  const answer = await promptConfirm({ message: question, initialValue: false })
  if (isCancel(answer) || answer !== true) throw new CliError('cancelled')
}

/**
 * A new password typed on a terminal: asked again while `check` refuses it (it names the rule),
 * then a second time to confirm, and from the start when the two differ. A typo nobody sees
 * must not become the password, and a refusal must not end a run of answers already given.
 */
export async function promptNewPassword(message: string, check: (password: string) => Promise<unknown> = async () => {}): Promise<string> {
  const ask = async (question: string) => {
    const answer = await promptPassword({ message: question, validate: (v) => (v ? undefined : 'required') })
    if (isCancel(answer)) throw new CliError('cancelled')
    return answer
  }
  for (;;) {
    const password = await ask(message)
    const refusal = await check(password).then(
      () => undefined,
      (error: unknown) => {
        if (error instanceof AppError && error.status === 400) return error.message
        throw error
      },
    )
    if (refusal !== undefined) {
      log.error(`${refusal}. Choose another.`)
      continue
    }
    if ((await ask('The same password again, to confirm')) === password) return password
    log.error('The two passwords differ. Type it again.')
  }
}

export function table(rows: Record<string, unknown>[], columns: string[]): string[] {
  if (rows.length === 0) return ['(none)']
  const cells = rows.map((row) => columns.map((c) => (row[c] === null || row[c] === undefined ? '-' : String(row[c]))))
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)))
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd()
  return [line(columns), ...cells.map(line)]
}

export const isoTime = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
