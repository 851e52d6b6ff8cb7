// Usage errors as the README promises them: one line `authd: …` on stderr, then a hint naming
// the command's --help, and exit status 2. Commander's own are three lines starting `error:`
// (its message, a "Did you mean" line, a help hint); every command built here says them
// our way instead, and numbers given to options are checked while commander parses, so a bad
// one is a usage error too, in one wording for "abc", "0" and "1e3" alike.
import { Command, InvalidArgumentError, type HelpContext } from 'commander'

/** `authd users create`: the words that call the command. */
const commandPath = (command: Command): string => {
  const names: string[] = []
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name())
  return names.join(' ')
}

/**
 * Commander's message as our line: without its `error: ` prefix, a "(Did you mean x?)" line
 * folded into it, and an option's bad value said by our own sentence alone (the parser's,
 * which names the option and the value).
 */
export function usageLine(commanderMessage: string): string {
  let line = commanderMessage.trim().replace(/^error: /, '')
  line = line.replace(/\n\(Did you mean (.*)\)$/s, (_, suggestion: string) => ` (did you mean ${suggestion.trim()})`)
  const invalid = /^option '[^']*' argument '.*' is invalid\. (.*)$/s.exec(line)
  if (invalid) line = invalid[1]!
  return line.replaceAll('\n', ' ')
}

/**
 * Every command of the CLI: its parse errors are printed our way, and a command group called
 * without its subcommand (`authd users`) is one of them, not a page of help on stderr.
 */
export class AuthdCommand extends Command {
  constructor(name?: string) {
    super(name)
    this.exitOverride()
  }

  // (every parse error passes here, from the command that found it; commander prints what it gets)
  override error(message: string, options?: { code?: string; exitCode?: number }): never {
    return super.error(`authd: ${usageLine(message)}\nrun ${commandPath(this)} --help for usage`, options)
  }

  override createCommand(name?: string): AuthdCommand {
    return new AuthdCommand(name)
  }

  override help(context?: HelpContext | ((str: string) => string)): never {
    if (typeof context === 'object' && context.error) this.error(`missing command: give one of ${this.commands.map((c) => c.name()).join(', ')}`)
    return super.help(context as HelpContext)
  }
}

/** An option's parser for an integer from `min` to `max`. */
export const integerOption =
  (flag: string, min: number, max: number) =>
  (raw: string): number => {
    const value = Number(raw)
    if (!/^\d{1,9}$/.test(raw) || value < min || value > max) throw new InvalidArgumentError(`${flag} must be an integer from ${min} to ${max} (got "${raw}")`)
    return value
  }
